package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
)

// reasonRequestInvalid refuses a request veto cannot read; its message
// names the field, never its value.
const reasonRequestInvalid = "request_invalid"

// status is the HTTP status of a verdict: 200 for an answer about the
// call, 503 when the state refused it, 504 when the deadline did.
func status(v *veto.Verdict) int {
	switch {
	case v.Allowed:
		return http.StatusOK
	case v.Reason == veto.ReasonStateUnavailable:
		return http.StatusServiceUnavailable
	case v.Reason == veto.ReasonCancelled:
		return http.StatusGatewayTimeout
	}
	return http.StatusOK
}

// readCall reads a request's call in veto check's JSON form. The actor
// comes from the token: a body naming another is refused. The time is
// the server's: a caller's would date the events it records, and the
// streams order and resume by them.
func (s *Server) readCall(w http.ResponseWriter, r *http.Request, b []byte) (veto.Call, bool) {
	c, err := veto.DecodeCall(b, s.cfg.Limits)
	if err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The call cannot be read: "+err.Error()+".")
		return veto.Call{}, false
	}
	c.Time = time.Time{} // the gate's clock
	if msg := checkNames(&c); msg != "" {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The call cannot be read: "+msg+".")
		return veto.Call{}, false
	}
	if a, ok := actorOf(r); ok {
		if (c.Actor.Kind != "" && c.Actor.Kind != a.Kind) || (c.Actor.ID != "" && c.Actor.ID != a.ID) {
			writeError(w, http.StatusForbidden, "actor_mismatch",
				"The call names an actor other than its token's; the identity a call acts as comes from the token.")
			return veto.Call{}, false
		}
		c.Actor.Kind, c.Actor.ID = a.Kind, a.ID
	}
	if status, reason, msg := s.place(&c); reason != "" {
		writeError(w, status, reason, msg)
		return veto.Call{}, false
	}
	return c, true
}

// maxToolName is the longest tool name the service takes, as MCP bounds
// its tools' names.
const maxToolName = 128

// checkNames refuses names the service would record and stream but
// should not: a run reference, call id or actor holding a control
// character (veto.ValidName), a tool name outside MCP's character set
// (ASCII letters, digits, "_", "-", "."; 1 to 128 of them), the same in
// the initial history. The message names the field, never its value.
func checkNames(c *veto.Call) string {
	for _, f := range []struct{ field, v string }{
		{"call_id", c.ID}, {"run.ref", c.Run.Ref}, {"actor.agent", c.Actor.Agent}, {"run.trust_zone", c.Run.TrustZone},
	} {
		if !veto.ValidName(f.v) {
			return "field " + f.field + ": holds a control character"
		}
	}
	if !ToolName(c.Tool) {
		return "field tool: a tool name is 1 to 128 ASCII letters, digits, '_', '-' or '.'"
	}
	for i, o := range c.Run.Initial {
		if !veto.ValidName(o.CallID) || !ToolName(o.Tool) {
			return fmt.Sprintf("field history.observations[%d]: its call_id holds a control character or its tool is not a tool name", i)
		}
	}
	return ""
}

// ToolName reports whether s is a tool name the service takes: 1 to 128
// of MCP's characters (ASCII letters, digits, "_", "-", ".").
func ToolName(s string) bool {
	if s == "" || len(s) > maxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.') {
			return false
		}
	}
	return true
}

// body reads the request body within the call's bound.
func (s *Server) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := readBody(w, r, veto.MaxCallJSON(s.cfg.Limits)+4096)
	if errors.Is(err, errTooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, veto.ReasonBoundsExceeded, "The request is larger than veto reads, so the call is refused.")
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request body could not be read, so the call is refused.")
		return nil, false
	}
	return b, true
}

// strictBody reads the body into v, refusing unknown fields; on a
// failure the answer names the shape wanted, and ok is false.
func (s *Server) strictBody(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	b, ok := s.body(w, r)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return false
	}
	return true
}

// withState runs f on the state proved sound, within the deadline; a
// state refused is answered here, its cause named, and f does not run.
// A request that only decides and records passes loaded.Appends(ctx): its
// appends prove the state's schema where they write, and the proof
// before it does not read it.
func (s *Server) withState(ctx context.Context, refuse func(msg string), f func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Deadline)
	defer cancel()
	release, err := s.acquire(ctx)
	if err != nil {
		s.metrics.storeError()
		refuse("veto cannot use its state: " + s.cfg.Cause(err) + ", so the call is refused.")
		return
	}
	defer release()
	f(ctx)
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	c, ok := s.readCall(w, r, b)
	if !ok {
		return
	}
	refuse := func(msg string) {
		v := veto.Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: veto.StageState,
			Reason: veto.ReasonStateUnavailable, Risk: veto.RiskHigh, Message: msg}
		s.metrics.decision(&v, 0)
		writeJSON(w, status(&v), v)
	}
	s.withState(loaded.Appends(r.Context()), refuse, func(ctx context.Context) {
		v := s.decideCall(ctx, &c)
		writeJSON(w, status(&v), v)
	})
}

// decideCall is one decision, measured (the gate names a state refusal's
// cause itself, from the store's error).
func (s *Server) decideCall(ctx context.Context, c *veto.Call) veto.Verdict {
	start := s.cfg.Now()
	if c.Run.Ref != "" {
		unlock, ok := s.runs.Lock(ctx, c.Run.Ref)
		if !ok {
			v := veto.Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: veto.StageRecord, Reason: veto.ReasonCancelled,
				Risk: veto.RiskMedium, Message: "the decision ran out of time waiting for the run's other calls, so the call is refused."}
			s.metrics.decision(&v, s.cfg.Now().Sub(start))
			return v
		}
		defer unlock()
	}
	a := s.cfg.Active()
	v := a.Gate.Decide(ctx, c)
	if !v.Allowed && v.Reason == veto.ReasonStateUnavailable {
		s.metrics.storeError()
	}
	if s.cfg.Decided != nil {
		s.cfg.Decided(&a, c, &v)
	}
	s.metrics.decision(&v, s.cfg.Now().Sub(start))
	return v
}

// observeJSON is /v1/observe's body: the call as it ran (veto check's
// form) and what it did.
type observeJSON struct {
	Outcome veto.Outcome `json:"outcome"`
}

func (s *Server) observe(w http.ResponseWriter, r *http.Request) {
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The observation is not a JSON object.")
		return
	}
	var o observeJSON
	if raw, ok := fields["outcome"]; !ok || json.Unmarshal(raw, &o.Outcome) != nil || !o.Outcome.Valid() || o.Outcome == veto.Pending {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid,
			"field outcome: required, one of succeeded, failed, denied, cancelled.")
		return
	}
	delete(fields, "outcome")
	rest, _ := json.Marshal(fields)
	c, ok := s.readCall(w, r, rest)
	if !ok {
		return
	}
	if c.ID == "" || c.Run.Ref == "" {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "fields call_id and run.ref: an observation names the call and its run.")
		return
	}
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(loaded.Appends(r.Context()), refuse, func(ctx context.Context) {
		unlock, ok := s.runs.Lock(ctx, c.Run.Ref)
		if !ok {
			writeError(w, http.StatusGatewayTimeout, veto.ReasonCancelled, "veto could not record what the call did within its deadline.")
			return
		}
		defer unlock()
		if err := s.Gate().ObserveReported(ctx, &c, o.Outcome); err != nil {
			if reason, msg := observationRefusal(err); reason != "" {
				writeError(w, http.StatusForbidden, reason, msg)
				return
			}
			s.storeFailure(w, err, "veto could not record what the call did")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"recorded": true, "run": c.Run.Ref, "call_id": c.ID})
	})
}

// observationRefusal is the reason and sentence of an observation the
// gate refused (veto.ObservationRefused); "" for any other error.
func observationRefusal(err error) (reason, msg string) {
	var or *veto.ObservationRefused
	if !errors.As(err, &or) {
		return "", ""
	}
	if or.Reason == veto.ReasonObserverMismatch {
		return or.Reason, "The call was decided for another actor than the token's: an actor reports only its own calls; the refusal is recorded in the run."
	}
	return or.Reason, "No call of this id and tool was decided in this run: an observation reports a call veto decided; the refusal is recorded in the run."
}

// storeFailure answers a write the state refused: 503 with its cause, or
// 400 when the gate refused the request itself (bounds, a missing run).
func (s *Server) storeFailure(w http.ResponseWriter, err error, what string) {
	if errors.Is(err, context.DeadlineExceeded) {
		writeError(w, http.StatusGatewayTimeout, veto.ReasonCancelled, what+" within its deadline.")
		return
	}
	if errors.Is(err, veto.ErrStateUnavailable) {
		s.metrics.storeError()
		cause := "veto's state cannot be reached"
		if se := veto.StateErrorOf(err); se != nil {
			cause = se.Reason()
		}
		writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, what+": "+cause+".")
		return
	}
	writeError(w, http.StatusBadRequest, reasonRequestInvalid, what+": the request is out of bounds or names no run.")
}

// runJSON is /v1/runs's body.
type runJSON struct {
	Ref   string `json:"ref"`
	Fresh bool   `json:"fresh"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	const shape = `{"ref": "…", "fresh": true|false}`
	var rj runJSON
	if !s.strictBody(w, r, &rj, shape) {
		return
	}
	if rj.Ref == "" {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(loaded.Appends(r.Context()), refuse, func(ctx context.Context) {
		if err := s.Gate().Start(ctx, veto.Run{Ref: rj.Ref, Fresh: rj.Fresh}); err != nil {
			s.storeFailure(w, err, "veto could not start the run")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"run": rj.Ref, "started": true})
	})
}

// runEvents is a run's history: its stored events, in order, with the
// sequence number the first carries.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	run := r.PathValue("run")
	if run == "" || len(run) > s.cfg.Limits.MaxName {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The run's name is missing or too long.")
		return
	}
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(r.Context(), refuse, func(ctx context.Context) {
		first, _, stored, err := s.cfg.Store.Chain(ctx, run)
		if err != nil {
			s.metrics.storeError()
			writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, "veto cannot read the run's events: "+s.cfg.Cause(err)+".")
			return
		}
		if len(stored) == 0 || !readerOf(r).reads(stored) {
			// A service reads the runs it acts in; another's is as unknown
			// to it as one with no events.
			writeError(w, http.StatusNotFound, "run_unknown", "veto has no events of this run.")
			return
		}
		evs := make([]json.RawMessage, len(stored))
		for i, b := range stored {
			evs[i] = json.RawMessage(b)
		}
		writeJSON(w, http.StatusOK, map[string]any{"run": run, "first": first, "events": evs})
	})
}

// suspendJSON is /v1/suspend's body.
type suspendJSON struct {
	Call   json.RawMessage  `json:"call"`
	Kind   veto.SuspendKind `json:"kind"`
	Fields []string         `json:"fields,omitempty"`
}

func (s *Server) suspend(w http.ResponseWriter, r *http.Request) {
	const shape = `{"call": {…}, "kind": "approval"|"input", "fields": […]}`
	var sj suspendJSON
	if !s.strictBody(w, r, &sj, shape) {
		return
	}
	if len(sj.Call) == 0 {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	c, ok := s.readCall(w, r, sj.Call)
	if !ok {
		return
	}
	if sj.Kind == veto.AwaitInput {
		// The page's form for the fields: the request is kept in this
		// instance's memory, and must fit.
		if msg := checkInputFields(sj.Fields); msg != "" {
			writeError(w, http.StatusBadRequest, reasonRequestInvalid, "field fields: "+msg+".")
			return
		}
		switch s.inputs.admit(s.cfg.Now(), c.Run.Ref, c.ID, c.Actor) {
		case errInputPending:
			writeError(w, http.StatusConflict, "input_pending", "A call of this id in this run, suspended by another actor, waits for input.")
			return
		case errInputsFull:
			w.Header().Set("Retry-After", "60")
			writeError(w, http.StatusTooManyRequests, "inputs_full",
				"Too many calls wait for a person's input in this instance; have them answered on the page, or let them expire.")
			return
		}
	}
	refuse := func(msg string) { writeError(w, http.StatusServiceUnavailable, veto.ReasonStateUnavailable, msg) }
	s.withState(r.Context(), refuse, func(ctx context.Context) {
		sus, err := s.Gate().Suspend(ctx, &c, sj.Kind, sj.Fields)
		if err != nil {
			s.storeFailure(w, err, "veto could not suspend the call")
			return
		}
		enc, err := veto.EncodeSuspension(sus)
		if err != nil {
			writeError(w, http.StatusInternalServerError, veto.ReasonInternal, "veto could not encode the suspension.")
			return
		}
		out := map[string]any{"suspension": json.RawMessage(enc), "call_id": sus.Call.ID, "run": sus.Call.Run.Ref}
		if sus.Kind == veto.AwaitInput {
			// input_form: the page shows a form for the fields, and the
			// values are taken from GET /v1/inputs/{run}/{call}.
			out["input_form"] = s.inputs.add(s.cfg.Now(), &PendingInput{Run: sus.Call.Run.Ref, CallID: sus.Call.ID,
				Tool: sus.Call.Tool, Fields: slices.Clone(sus.Fields), Actor: sus.Call.Actor, Since: s.cfg.Now()})
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// resumeJSON is /v1/resume's body: the suspension as /v1/suspend gave
// it, and either an approval or a person's input.
type resumeJSON struct {
	Suspension json.RawMessage `json:"suspension"`
	Approved   bool            `json:"approved,omitempty"`
	Input      map[string]any  `json:"input,omitempty"`
}

// resumedJSON is /v1/resume's answer. A call denied at resume is a
// failed tool call, never a new request.
type resumedJSON struct {
	Verdict veto.Verdict   `json:"verdict"`
	Execute bool           `json:"execute"`
	Args    map[string]any `json:"args,omitempty"` // the arguments to run with
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	const shape = `{"suspension": {…}, and "approved": true or "input": {…}}`
	var rj resumeJSON
	if !s.strictBody(w, r, &rj, shape) {
		return
	}
	if len(rj.Suspension) == 0 || rj.Approved == (rj.Input != nil) {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The request cannot be read: "+shape+".")
		return
	}
	sus, err := veto.DecodeSuspension(rj.Suspension, s.cfg.Limits)
	if err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The suspension cannot be read.")
		return
	}
	if a, ok := actorOf(r); ok && (sus.Call.Actor.Kind != a.Kind || sus.Call.Actor.ID != a.ID) {
		writeError(w, http.StatusForbidden, "actor_mismatch", "The suspension belongs to another actor than the token's.")
		return
	}
	if status, reason, msg := s.place(&sus.Call); reason != "" {
		writeError(w, status, reason, msg)
		return
	}
	refuse := func(msg string) {
		v := veto.Verdict{CallID: sus.Call.ID, Tool: sus.Call.Tool, Run: sus.Call.Run.Ref, Stage: veto.StageState,
			Reason: veto.ReasonStateUnavailable, Risk: veto.RiskHigh, Message: msg}
		writeJSON(w, status(&v), resumedJSON{Verdict: v})
	}
	s.withState(r.Context(), refuse, func(ctx context.Context) {
		var res veto.Resumed
		if rj.Approved {
			res = s.Gate().ResumeApproval(ctx, sus)
		} else {
			res = s.Gate().ResumeInput(ctx, sus, rj.Input)
		}
		s.metrics.decision(&res.Verdict, 0)
		s.inputs.resumed(s.cfg.Now(), sus.Call.Run.Ref, sus.Call.ID, sus.Call.Actor)
		out := resumedJSON{Verdict: res.Verdict, Execute: res.Execute}
		if res.Execute {
			out.Args = res.Call.Args
			if res.Verdict.Args != nil {
				out.Args = res.Verdict.Args
			}
		}
		writeJSON(w, status(&res.Verdict), out)
	})
}

func (s *Server) policy(w http.ResponseWriter, r *http.Request) {
	a := s.cfg.Active()
	w.Header().Set("Content-Type", "text/yaml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The revision deciding now, in a header and the text's first lines.
	w.Header().Set("X-Veto-Policy-Revision", a.Rev)
	fmt.Fprintf(w, "# revision %s, from %s\n", a.Rev, a.From)
	if a.ShadowRev != "" {
		fmt.Fprintf(w, "# shadow revision %s\n", a.ShadowRev)
	}
	if a.Err != "" {
		fmt.Fprintf(w, "# the last change was not taken (%s): %s\n", a.ErrAt.UTC().Format(time.RFC3339), oneLine(a.Err))
	}
	fmt.Fprint(w, a.Show())
}

func oneLine(s string) string { return strings.NewReplacer("\r", " ", "\n", "; ").Replace(s) }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}

// readyz reports whether the state answers: a request now would be
// decided rather than refused.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Deadline)
	defer cancel()
	release, err := s.acquire(ctx)
	if err == nil {
		_, err = s.cfg.Store.Load(ctx, "veto-readyz") // a run no call has: one small query
		release()
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": veto.ReasonStateUnavailable,
			"message": s.cfg.Cause(err) + "."})
		return
	}
	a := s.cfg.Active()
	pol := map[string]any{"revision": a.Rev, "from": a.From}
	if a.ShadowRev != "" {
		pol["shadow"] = a.ShadowRev
	}
	if a.Err != "" {
		// Ready: the last good policy decides. The operator sees why the
		// change was not taken, with the file's line and column.
		// Only its places: /readyz takes no token. GET /v1/policy and
		// the log say what is wrong.
		pol["reload_error"], pol["reload_error_at"] = oneLine(a.ErrWhere), a.ErrAt.UTC().Format(time.RFC3339)
	}
	writeJSON(w, http.StatusOK, map[string]any{"ready": true, "policy": pol})
}
