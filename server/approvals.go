package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/rule"
)

// Question is a call a rule asked a person about, not answered yet: the
// API lists them (GET /v1/approvals) and the page draws them.
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
	Text     string    `json:"text,omitempty"` // the reason's sentence, as the rule declares it
}

// questionsFor is how far back open questions are looked for.
const questionsFor = 24 * time.Hour

// Questions returns the open questions (of run, or of every run), newest
// first. The caller holds the state (Acquire).
func (s *Server) Questions(ctx context.Context, run string) ([]Question, error) {
	q := veto.LogQuery{Run: run, Since: s.cfg.Now().Add(-questionsFor),
		Kinds: []veto.EventKind{veto.EventDenied, veto.EventApproved, veto.EventApprovalRefused}}
	type key struct{ run, call string }
	open := map[key]Question{}
	err := s.cfg.Store.Scan(ctx, q, func(r string, seq uint64, b []byte) error {
		ev, err := eventlog.DecodeEvent(b)
		if err != nil {
			return nil
		}
		k := key{r, ev.CallID}
		switch {
		case ev.Kind == veto.EventDenied && ev.Awaiting == veto.AwaitApproval:
			text, _ := rule.Text(ev.Rule, ev.Reason)
			open[k] = Question{Run: r, CallID: ev.CallID, Seq: seq, Time: ev.Time, Tool: ev.Tool, Rule: ev.Rule,
				Reason: ev.Reason, Risk: ev.Risk.String(), ArgsHash: ev.ArgsHash, Text: text}
		case ev.Kind == veto.EventApproved || ev.Kind == veto.EventApprovalRefused:
			delete(open, k)
		}
		return nil
	})
	out := make([]Question, 0, len(open))
	for _, qq := range open {
		out = append(out, qq)
	}
	slices.SortFunc(out, func(a, b Question) int { return b.Time.Compare(a.Time) })
	return out, err
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(w, r, refuse, func(ctx context.Context) {
		qs, err := s.Questions(ctx, r.URL.Query().Get("run"))
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
}

// AnswerTTL is how long an approval lasts unless the person says.
const AnswerTTL = 10 * time.Minute

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var aj answerJSON
	const shape = `{"approve": true|false, "ttl": "10m"}`
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
	if aj.Approve == nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	by, ok := actorOf(r)
	s.answer(w, r, by, ok, *aj.Approve, ttl, func(status int, reason, msg string) {
		if status == http.StatusOK {
			writeJSON(w, status, map[string]any{"answered": true, "approved": *aj.Approve, "run": r.PathValue("run"), "call_id": r.PathValue("call")})
			return
		}
		writeError(w, status, reason, msg)
	})
}

// answer records a person's answer to the question of call {call} in run
// {run}; reply gets the outcome.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, by veto.Actor, known bool, grant bool, ttl time.Duration, reply func(status int, reason, msg string)) {
	if !known {
		by = veto.Actor{}
	}
	if rf := s.Answer(r.Context(), r.PathValue("run"), r.PathValue("call"), by, grant, ttl); rf != nil {
		reply(rf.Status, rf.Reason, rf.Message)
		return
	}
	reply(http.StatusOK, "", "")
}

// Refusal is why a person's answer was not recorded: the HTTP status that
// fits, a reason code and a sentence naming no value the request held.
type Refusal struct {
	Status  int
	Reason  string
	Message string
}

// Answer records a person's answer to the question of call in run, within
// the service's deadline and under the run's lock; nil when recorded. Only
// a person (an actor of kind user, named) answers. The API's endpoint and
// the page's form both answer through it.
func (s *Server) Answer(ctx context.Context, run, call string, by veto.Actor, grant bool, ttl time.Duration) *Refusal {
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
	unlock, ok := s.runs.lock(ctx, run)
	if !ok {
		return &Refusal{http.StatusGatewayTimeout, veto.ReasonCancelled, "The answer was not recorded within its deadline."}
	}
	defer unlock()
	err = s.cfg.Gate.Answer(ctx, run, call, by, grant, ttl)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, veto.ErrNoQuestion):
		return &Refusal{http.StatusNotFound, "no_question", "No call of this id in this run waits for a person."}
	case errors.Is(err, veto.ErrAnswered):
		return &Refusal{http.StatusConflict, "answered", "This call's question was answered already."}
	}
	s.metrics.storeError()
	return &Refusal{http.StatusServiceUnavailable, veto.ReasonStateUnavailable, "veto could not record the answer: " + s.cfg.Cause(err) + "."}
}
