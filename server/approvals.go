package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
)

// Question is a call a rule asked a person about, not answered yet
// (veto.Waiting's), as the API lists it (GET /v1/approvals) and the page
// draws it.
type Question struct {
	Run      string    `json:"run"`
	CallID   string    `json:"call_id"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason"`
	Risk     string    `json:"risk"`
	ArgsHash string    `json:"args_hash"`
	// Actor is the actor whose call was asked about: a grant lets only
	// its call through.
	Actor veto.Actor `json:"actor,omitzero"`
	Text  string     `json:"text,omitempty"` // the reason's sentence, as the rule declares it
	// Shown is what the person is shown of the call (the page's card,
	// for a person's session only): never in the API's answer.
	Shown *veto.Shown `json:"-"`
}

// questionsFor is how far back open questions are looked for.
const questionsFor = veto.ShownFor

// Questions returns the open questions (of run, or of every run), newest
// first. The caller holds the state (Acquire).
func (s *Server) Questions(ctx context.Context, run string) ([]Question, error) {
	qs, err := veto.Waiting(ctx, s.cfg.Store, veto.WaitQuery{Run: run, Since: s.cfg.Now().Add(-questionsFor)})
	out := make([]Question, 0, len(qs))
	for _, q := range qs {
		text, _ := rule.Text(q.Rule, q.Reason)
		out = append(out, Question{Run: q.Run, CallID: q.CallID, Seq: q.Seq, Time: q.Time, Tool: q.Tool, Rule: q.Rule,
			Reason: q.Reason, Risk: q.Risk.String(), ArgsHash: q.ArgsHash, Actor: q.Actor, Text: text})
	}
	return out, err
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(r.Context(), refuse, func(ctx context.Context) {
		qs, err := s.Questions(ctx, r.URL.Query().Get("run"))
		if err != nil {
			refuse("veto cannot read its state: " + s.cfg.Cause(err) + ".")
			return
		}
		if rd := readerOf(r); !rd.all {
			// A service lists the questions about its own calls.
			qs = slices.DeleteFunc(qs, func(q Question) bool { return !rd.is(q.Actor) })
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

// AnswerTTL is how long an approval lasts unless the person says.
const AnswerTTL = 10 * time.Minute

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var aj answerJSON
	const shape = `{"approve": true|false, "args_hash": "…", "ttl": "10m"}`
	if !s.strictBody(w, r, &aj, shape) {
		return
	}
	ttl := AnswerTTL
	if aj.TTL != "" {
		d, err := time.ParseDuration(aj.TTL)
		if err != nil || d <= 0 || d > 24*time.Hour {
			writeError(w, http.StatusBadRequest, reasonRequestInvalid, "field ttl: a duration of at most 24h, as 10m.")
			return
		}
		ttl = d
	}
	if aj.Approve == nil || !ValidHash(aj.ArgsHash) {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	by, known := actorOf(r)
	if !known {
		by = veto.Actor{}
	}
	if rf := s.Answer(r.Context(), r.PathValue("run"), r.PathValue("call"), aj.ArgsHash, by, *aj.Approve, ttl); rf != nil {
		writeError(w, rf.Status, rf.Reason, rf.Message)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answered": true, "approved": *aj.Approve, "run": r.PathValue("run"), "call_id": r.PathValue("call")})
}

// Refusal is why a person's answer was not recorded: the HTTP status that
// fits, a reason code and a sentence naming no value the request held.
type Refusal struct {
	Status  int
	Reason  string
	Message string
}

// Answer records a person's answer to the question of call in run, about
// the arguments of hash shown (what the person was shown), within the
// service's deadline and under the run's lock; nil when recorded. Only a
// person (an actor of kind user, named) answers. The API's endpoint and
// the page's form both answer through it.
func (s *Server) Answer(ctx context.Context, run, call, shown string, by veto.Actor, grant bool, ttl time.Duration) *Refusal {
	if by.Kind != "user" || by.ID == "" {
		return &Refusal{http.StatusForbidden, ReasonPersonRequired, "Only a person (a person's token, or a session signed in with one) answers a call's question."}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Deadline)
	defer cancel()
	release, err := s.acquire(ctx)
	if err != nil {
		s.metrics.storeError()
		return &Refusal{http.StatusServiceUnavailable, veto.ReasonStateUnavailable, "veto cannot use its state: " + s.cfg.Cause(err) + ", so the call is refused."}
	}
	defer release()
	unlock, ok := s.runs.Lock(ctx, run)
	if !ok {
		return &Refusal{http.StatusGatewayTimeout, veto.ReasonCancelled, "The answer was not recorded within its deadline."}
	}
	defer unlock()
	err = s.Gate().AnswerShown(ctx, run, call, shown, by, grant, ttl)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, veto.ErrNoQuestion):
		return &Refusal{http.StatusNotFound, "no_question", "No call of this id in this run waits for a person."}
	case errors.Is(err, veto.ErrAnswered):
		return &Refusal{http.StatusConflict, "answered", "This call's question was answered already."}
	case errors.Is(err, veto.ErrNotShown):
		return &Refusal{http.StatusConflict, "arguments_changed", "The call's question is about other arguments than the ones answered; look again."}
	}
	s.metrics.storeError()
	return &Refusal{http.StatusServiceUnavailable, veto.ReasonStateUnavailable, "veto could not record the answer: " + s.cfg.Cause(err) + "."}
}

// ValidHash reports whether h is an argument hash: 64 lower-case hex
// digits.
func ValidHash(h string) bool {
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
