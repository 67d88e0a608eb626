package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/vetohq/veto"
)

// A question is a call a rule asked a person about, not answered yet
// (veto.Waiting's), as the API and the page show it.
type question struct {
	Run      string    `json:"run"`
	CallID   string    `json:"call_id"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason"`
	Risk     string    `json:"risk"`
	ArgsHash string    `json:"args_hash"`
	Text     string    `json:"text,omitempty"` // the reason's sentence, as the rule declares it
	// Shown is what the person is shown of the call (the page's card,
	// for a person's session only): never in the API's answer.
	Shown *veto.Shown `json:"-"`
}

// questionsFor is how far back open questions are looked for.
const questionsFor = veto.ShownFor

// questions returns the open questions (of run, or of every run), newest
// first.
func (s *Server) questions(ctx context.Context, run string) ([]question, error) {
	qs, err := veto.Waiting(ctx, s.cfg.Store, veto.WaitQuery{Run: run, Since: s.cfg.Now().Add(-questionsFor)})
	out := make([]question, 0, len(qs))
	for _, q := range qs {
		text, _ := reasonText(q.Rule, q.Reason)
		out = append(out, question{Run: q.Run, CallID: q.CallID, Seq: q.Seq, Time: q.Time, Tool: q.Tool, Rule: q.Rule,
			Reason: q.Reason, Risk: q.Risk.String(), ArgsHash: q.ArgsHash, Text: text})
	}
	return out, err
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(w, r, refuse, func(ctx context.Context) {
		qs, err := s.questions(ctx, r.URL.Query().Get("run"))
		if err != nil {
			refuse("veto cannot read its state: " + s.cfg.Cause(err) + ".")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"pending": qs})
	})
}

// answerJSON is /v1/approvals/{run}/{call_id}'s body.
type answerJSON struct {
	Approve *bool  `json:"approve"`
	TTL     string `json:"ttl,omitempty"` // how long an approval lasts: 10m when omitted, at most 24h
	// ArgsHash is the argument hash of the question the person answers
	// (GET /v1/approvals gives it): an answer binds to what was shown,
	// and a question about other arguments is refused.
	ArgsHash string `json:"args_hash"`
}

// answerTTL is how long an approval lasts unless the person says.
const answerTTL = 10 * time.Minute

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var aj answerJSON
	const shape = `{"approve": true|false, "args_hash": "…", "ttl": "10m"}`
	if !s.strictBody(w, r, &aj, shape) {
		return
	}
	ttl := answerTTL
	if aj.TTL != "" {
		d, err := time.ParseDuration(aj.TTL)
		if err != nil || d <= 0 || d > 24*time.Hour {
			writeError(w, http.StatusBadRequest, reasonRequestInvalid, "field ttl: a duration of at most 24h, as 10m.")
			return
		}
		ttl = d
	}
	if aj.Approve == nil || !validHash(aj.ArgsHash) {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	by, ok := actorOf(r)
	s.answer(w, r, by, ok, *aj.Approve, ttl, aj.ArgsHash, func(status int, reason, msg string) {
		if status == http.StatusOK {
			writeJSON(w, status, map[string]any{"answered": true, "approved": *aj.Approve, "run": r.PathValue("run"), "call_id": r.PathValue("call")})
			return
		}
		writeError(w, status, reason, msg)
	})
}

// answer records a person's answer to the question of call
// {call} in run {run}; reply gets the outcome. Only a person (an actor
// of kind user) answers.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, by veto.Actor, known bool, grant bool, ttl time.Duration, shown string, reply func(status int, reason, msg string)) {
	if !known || by.Kind != "user" || by.ID == "" {
		reply(http.StatusForbidden, "approver_not_a_person", "Only a person (a token or session of an actor user:…) answers a call's question.")
		return
	}
	run, call := r.PathValue("run"), r.PathValue("call")
	refuse := func(msg string) { reply(http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(w, r, refuse, func(ctx context.Context) {
		unlock, ok := s.runs.lock(ctx, run)
		if !ok {
			reply(http.StatusGatewayTimeout, veto.ReasonCancelled, "The answer was not recorded within its deadline.")
			return
		}
		defer unlock()
		err := s.cfg.Gate.AnswerShown(ctx, run, call, shown, by, grant, ttl)
		switch {
		case err == nil:
			reply(http.StatusOK, "", "")
		case errors.Is(err, veto.ErrNoQuestion):
			reply(http.StatusNotFound, "no_question", "No call of this id in this run waits for a person.")
		case errors.Is(err, veto.ErrAnswered):
			reply(http.StatusConflict, "answered", "This call's question was answered already.")
		case errors.Is(err, veto.ErrNotShown):
			reply(http.StatusConflict, "arguments_changed", "The call's question is about other arguments than the ones answered; look again.")
		default:
			s.metrics.storeError()
			reply(http.StatusServiceUnavailable, veto.ReasonStateUnavailable, "veto could not record the answer: "+s.cfg.Cause(err)+".")
		}
	})
}

// validHash reports whether h is an argument hash: 64 lower-case hex
// digits.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
