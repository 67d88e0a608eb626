package server

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vetohq/veto"
)

// A pending input is a call a runtime suspended through this instance to
// wait for a person's values (POST /v1/suspend, kind input). The page
// shows a form for its declared fields; a person's values are kept here,
// in memory only, until the runtime that suspended the call takes them
// (GET /v1/inputs/{run}/{call}), then dropped. The values are arguments:
// they are never written to the state, the events, the log or a page.
//
// Everything is bounded: how many requests wait (in all and per actor),
// how many fields a request names and how long a name is, how large each
// value and all of them are, and how long a request and its values live.
const (
	maxInputs         = 1000             // pending inputs in one instance
	maxInputsPerActor = 100              // of one suspending actor
	maxInputFields    = 32               // fields one call waits for
	maxInputName      = 128              // bytes of a field's name
	maxInputValue     = 8 << 10          // bytes of one value a person types
	maxInputTotal     = 64 << 10         // bytes of all of one call's values
	inputFor          = time.Hour        // how long a request waits for a person
	inputKept         = 10 * time.Minute // how long values wait for the runtime, and a closed request is shown
	maxInputWait      = 60 * time.Second // the longest ?wait= of a take
)

// Where a pending input is.
const (
	inputWaiting  = "waiting"  // for a person
	inputAnswered = "answered" // a person gave the values; the runtime has not taken them
	inputTaken    = "taken"    // the runtime took them (they are gone from here)
	inputResumed  = "resumed"  // the runtime resumed the call
)

type inputKey struct{ run, call string }

// pendingInput is one call's request for input. Values is set between a
// person's answer and the runtime's take, and nil otherwise.
type pendingInput struct {
	Run, CallID, Tool string
	Fields            []string
	Actor             veto.Actor // who suspended the call: the one who takes the values
	Since             time.Time
	State             string
	By                veto.Actor // who answered
	expires           time.Time
	values            map[string]string
	answered          chan struct{} // closed by the answer
}

// inputs are an instance's pending inputs.
type inputs struct {
	mu  sync.Mutex
	m   map[inputKey]*pendingInput
	now func() time.Time // the server's clock, for the sweep after an answer
}

// sweep drops what has expired. Callers hold mu.
func (in *inputs) sweep(now time.Time) {
	for k, p := range in.m {
		if !now.Before(p.expires) {
			p.values = nil
			delete(in.m, k)
		}
	}
}

// errInputsFull and errInputPending refuse a new request.
var (
	errInputsFull   = errors.New("too many inputs wait for a person")
	errInputPending = errors.New("another actor's call of this id waits for input")
)

// admit reports whether a request of actor for call id (empty: a new id)
// in run would be kept.
func (in *inputs) admit(now time.Time, run, id string, actor veto.Actor) error {
	actor = who(actor)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep(now)
	if p, ok := in.m[inputKey{run, id}]; ok && id != "" {
		if p.Actor != actor {
			return errInputPending
		}
		return nil // a request made again replaces its own
	}
	return in.room(actor)
}

// room reports whether one more request of actor fits. Callers hold mu.
func (in *inputs) room(actor veto.Actor) error {
	if len(in.m) >= maxInputs {
		return errInputsFull
	}
	n := 0
	for _, p := range in.m {
		if p.Actor == actor {
			n++
		}
	}
	if n >= maxInputsPerActor {
		return errInputsFull
	}
	return nil
}

// add keeps the request of a call just suspended; false when it no longer
// fits (another request took the room meanwhile) or its fields are out of
// bounds (the tool's declared ones).
func (in *inputs) add(now time.Time, p *pendingInput) bool {
	if checkInputFields(p.Fields) != "" {
		return false
	}
	p.Actor = who(p.Actor)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep(now)
	k := inputKey{p.Run, p.CallID}
	if old, ok := in.m[k]; ok {
		if old.Actor != p.Actor {
			return false
		}
		if old.State == inputWaiting {
			close(old.answered) // a take waiting on it looks again, at this one
		}
		old.values = nil
		delete(in.m, k)
	} else if in.room(p.Actor) != nil {
		return false
	}
	if in.m == nil {
		in.m = map[inputKey]*pendingInput{}
	}
	p.State, p.expires, p.answered = inputWaiting, now.Add(inputFor), make(chan struct{})
	in.m[k] = p
	return true
}

// who is the identity of an actor, without the sub-agent it may name.
func who(a veto.Actor) veto.Actor { return veto.Actor{Kind: a.Kind, ID: a.ID} }

// checkInputFields says what is wrong with a call's declared fields ("":
// nothing), naming no field.
func checkInputFields(fields []string) string {
	if len(fields) > maxInputFields {
		return "a call waits for at most " + strconv.Itoa(maxInputFields) + " fields"
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if f == "" || len(f) > maxInputName || !utf8.ValidString(f) || strings.ContainsFunc(f, unicode.IsControl) {
			return "a field's name is 1 to " + strconv.Itoa(maxInputName) + " bytes of text"
		}
		if seen[f] {
			return "a field is named twice"
		}
		seen[f] = true
	}
	return ""
}

// list is the requests of run (every run: "") still open on the page:
// waiting or answered, oldest first. The copies hold no values.
func (in *inputs) list(now time.Time, run string) []pendingInput {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep(now)
	var out []pendingInput
	for _, p := range in.m {
		if (run == "" || p.Run == run) && (p.State == inputWaiting || p.State == inputAnswered) {
			c := *p
			c.values, c.answered = nil, nil
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b pendingInput) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.Run+"\x00"+a.CallID, b.Run+"\x00"+b.CallID)
	})
	return out
}

// state is where the request of a call is, and who answered it ("": none
// kept).
func (in *inputs) state(now time.Time, run, call string) (string, veto.Actor) {
	in.mu.Lock()
	defer in.mu.Unlock()
	p, ok := in.m[inputKey{run, call}]
	if !ok || !now.Before(p.expires) {
		return "", veto.Actor{}
	}
	return p.State, p.By
}

// answer keeps a person's values for the call. The values must name the
// declared fields exactly; the caller has bounded their sizes.
func (in *inputs) answer(now time.Time, run, call string, values map[string]string, by veto.Actor) (status int, msg string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep(now)
	p, ok := in.m[inputKey{run, call}]
	if !ok {
		return http.StatusNotFound, "No call of this id in this run waits for input here: it was never asked through this instance, or it expired."
	}
	if p.State != inputWaiting {
		return http.StatusConflict, "This call's input was given already."
	}
	if len(values) != len(p.Fields) {
		return http.StatusBadRequest, "The form must give every field the call waits for, and no other."
	}
	for k := range values {
		if !slices.Contains(p.Fields, k) {
			return http.StatusBadRequest, "The form must give every field the call waits for, and no other."
		}
	}
	p.values, p.By, p.State = values, who(by), inputAnswered
	p.expires = now.Add(inputKept) // the values wait for the runtime this long
	close(p.answered)
	if in.now != nil {
		// Values not taken are dropped at their time, whether or not
		// anything else comes to this instance.
		time.AfterFunc(inputKept+time.Second, func() {
			in.mu.Lock()
			defer in.mu.Unlock()
			in.sweep(in.now())
		})
	}
	return http.StatusOK, ""
}

// take gives the values of the call to actor, once. ok false: none yet
// (wait on ready); err: no request, another actor's, or taken already.
func (in *inputs) take(now time.Time, run, call string, actor veto.Actor, anyone bool) (values map[string]string, by veto.Actor, ready <-chan struct{}, err error) {
	actor = who(actor)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.sweep(now)
	p, ok := in.m[inputKey{run, call}]
	switch {
	case !ok:
		return nil, veto.Actor{}, nil, errNoInput
	case !anyone && p.Actor != actor:
		return nil, veto.Actor{}, nil, errNotYours
	case p.State == inputWaiting:
		return nil, veto.Actor{}, p.answered, nil
	case p.State != inputAnswered:
		return nil, veto.Actor{}, nil, errInputTaken
	}
	values, by = p.values, p.By
	p.values, p.State = nil, inputTaken
	if e := now.Add(inputKept); e.Before(p.expires) {
		p.expires = e
	}
	return values, by, nil, nil
}

var (
	errNoInput    = errors.New("no input")
	errNotYours   = errors.New("another actor's")
	errInputTaken = errors.New("taken")
)

// resumed notes that the runtime resumed the call of actor: its form, if
// still open, closes, and values not taken are dropped.
func (in *inputs) resumed(now time.Time, run, call string, actor veto.Actor) {
	actor = who(actor)
	in.mu.Lock()
	defer in.mu.Unlock()
	p, ok := in.m[inputKey{run, call}]
	if !ok || p.Actor != actor {
		return
	}
	if p.State == inputWaiting {
		close(p.answered)
	}
	p.values, p.State = nil, inputResumed
	if e := now.Add(inputKept); e.Before(p.expires) {
		p.expires = e
	}
}

// takeInput is GET /v1/inputs/{run}/{call}: the runtime that suspended
// the call takes a person's values for it, once, waiting for them up to
// ?wait= (at most 60 s). 200 the values, 204 none yet, 404 none kept here.
func (s *Server) takeInput(w http.ResponseWriter, r *http.Request) {
	run, call := r.PathValue("run"), r.PathValue("call")
	if run == "" || call == "" || len(run) > s.cfg.Limits.MaxName || len(call) > s.cfg.Limits.MaxName {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, "The run's or the call's name is missing or too long.")
		return
	}
	var wait time.Duration
	if q := r.URL.Query().Get("wait"); q != "" {
		d, err := time.ParseDuration(q)
		if n, nerr := strconv.Atoi(q); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d < 0 || d > maxInputWait {
			writeError(w, http.StatusBadRequest, reasonRequestInvalid, "wait is a duration of at most 60s, as 30s (or seconds, as 30).")
			return
		}
		wait = d
	}
	actor, authed := actorOf(r)
	var timer <-chan time.Time
	if wait > 0 {
		// A take that waits outlives the server's write timeout.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + 10*time.Second))
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	for {
		values, by, ready, err := s.inputs.take(s.cfg.Now(), run, call, actor, !authed)
		switch {
		case errors.Is(err, errNoInput):
			writeError(w, http.StatusNotFound, "no_input", "No call of this id in this run waits for input in this instance: it was not suspended through it, or its request expired.")
			return
		case errors.Is(err, errNotYours):
			writeError(w, http.StatusForbidden, "actor_mismatch", "The call was suspended by another actor than the token's; only it takes the input.")
			return
		case errors.Is(err, errInputTaken):
			writeError(w, http.StatusNotFound, "input_taken", "The input of this call was taken already, or the call was resumed.")
			return
		case values != nil:
			in := make(map[string]any, len(values))
			for k, v := range values {
				in[k] = v
			}
			s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "veto serve: the runtime took a person's input",
				slog.String("run", run), slog.String("call_id", call))
			writeJSON(w, http.StatusOK, map[string]any{"run": run, "call_id": call, "input": in,
				"by": map[string]string{"kind": by.Kind, "id": by.ID}})
			return
		}
		if timer == nil {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		select {
		case <-ready:
		case <-timer:
			timer = nil // one last look, then none yet
		case <-s.stopping:
			timer = nil // the service stops: one last look, then none yet
		case <-r.Context().Done():
			return
		}
	}
}

// uiInput is POST /ui/inputs/{run}/{call}: a person's values for a call
// waiting for input, from the page's form. As the approve and deny forms:
// the session's actor, who must be a person; the form's token and the
// browser's word that the request comes from this page. The values are
// bounded, must name the call's fields exactly, and are kept in memory
// until the runtime takes them; the answer shows none of them.
func (s *Server) uiInput(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	fail := func(status int, msg string) { formFailed(w, status, msg) }
	if !fromPage(r) {
		fail(http.StatusForbidden, "The input did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxInputTotal+maxInputFields*(maxInputName+16)+4096)
	err := r.ParseForm()
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
		return
	}
	if err != nil || se.csrf == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(se.csrf)) != 1 {
		fail(http.StatusForbidden, "The form is stale or came from elsewhere; reload the page.")
		return
	}
	if se.actor.Kind != "user" || se.actor.ID == "" || s.cfg.Gate == nil || s.cfg.PageOnly {
		w.Header().Set(ReasonHeader, ReasonPersonRequired)
		fail(http.StatusForbidden, "Only a person (a user: token) gives a call's input, on the page of the veto serve the call was suspended through.")
		return
	}
	values := map[string]string{}
	total := 0
	for k, vs := range r.PostForm {
		if k == "csrf" {
			continue
		}
		name, ok := strings.CutPrefix(k, "in.")
		if !ok || len(vs) != 1 {
			fail(http.StatusBadRequest, "The form must give every field the call waits for, once, and no other.")
			return
		}
		if len(vs[0]) > maxInputValue {
			fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
			return
		}
		total += len(vs[0])
		values[name] = vs[0]
	}
	if total > maxInputTotal {
		fail(http.StatusRequestEntityTooLarge, "The values are larger than veto keeps: at most 8 KiB a field and 64 KiB in all.")
		return
	}
	run, call := r.PathValue("run"), r.PathValue("call")
	if status, msg := s.inputs.answer(s.cfg.Now(), run, call, values, se.actor); status != http.StatusOK {
		fail(status, msg)
		return
	}
	s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "veto serve: a person gave a call's input", slog.String("run", run),
		slog.String("call_id", call), slog.String("by", se.actor.Kind+":"+se.actor.ID))
	http.Redirect(w, r, "/ui?run="+url.QueryEscape(run), http.StatusSeeOther)
}

// uiInputs is GET /ui/inputs: the section of the requests for input, for
// the page's script to add the ones that arrived since it was drawn.
func (s *Server) uiInputs(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	uiTemplates.ExecuteTemplate(w, "inputs", s.inputsData(r.URL.Query().Get("run"), se))
}

// inputsData is what the section of the requests for input is drawn from.
func (s *Server) inputsData(run string, se uiSession) map[string]any {
	return map[string]any{"Inputs": s.inputs.list(s.cfg.Now(), run), "CSRF": se.csrf,
		"CanAnswer": se.actor.Kind == "user" && se.actor.ID != "" && s.cfg.Gate != nil && !s.cfg.PageOnly}
}

// markInputs adds to the cards of suspended calls what became of their
// request for input in this instance: answered on the page, by whom.
func (s *Server) markInputs(cards []card) {
	now := s.cfg.Now()
	for i := range cards {
		c := &cards[i]
		if c.Verdict != "suspended" || c.Awaiting != string(veto.AwaitInput) {
			continue
		}
		if st, by := s.inputs.state(now, c.Run, c.CallID); by.Kind != "" {
			c.Input, c.By = st, by.Kind+":"+by.ID
		}
	}
}
