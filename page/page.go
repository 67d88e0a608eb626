package page

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/state"
)

// Config is what the page adds to the service it is served beside.
type Config struct {
	// Actor is who a session opened with a one-time key acts as (veto ui:
	// the user running it); a session opened with a token is the token's
	// actor. Only a person (kind user) answers questions.
	Actor veto.Actor
	// Pins, when set, are veto mcp's pinned tool definitions: the page
	// lists the tools awaiting a person's approval and approves them.
	Pins *mcpgate.Pins
	// Revisions, when set, are the policy revisions on the shared
	// database: the page lists where the shadow revision decides otherwise.
	Revisions *state.Revisions
}

// Page is the page's handler over one service: it reads the state the
// service reads and answers through it, so that both agree on the store,
// the clock, the deadline and the state's refusals.
type Page struct {
	api   *server.Server
	cfg   server.Config // the service's, with its defaults
	actor veto.Actor
	pins  *mcpgate.Pins
	revs  *state.Revisions
	ui    uiSessions
	// whatIfSlot lets one replay run at a time: each is a whole
	// session's decisions.
	whatIfSlot chan struct{}
}

// New is the page over api.
func New(api *server.Server, cfg Config) *Page {
	return &Page{api: api, cfg: api.Config(), actor: cfg.Actor, pins: cfg.Pins, revs: cfg.Revisions, whatIfSlot: make(chan struct{}, 1)}
}

// Register adds the page's routes to mux, beside the API's: cli mounts
// the API at "/" on the same mux, so a path the page does not serve is
// the API's JSON not_found.
func (pg *Page) Register(mux *http.ServeMux) {
	for _, u := range uiRoutes {
		mux.HandleFunc(u.path, pg.uiWrap(u.login, u.handle))
	}
}

// acquire proves the state sound for one use, as the API does.
func (pg *Page) acquire(ctx context.Context) (func(), error) { return pg.api.Acquire(ctx) }

//go:embed ui
var uiFiles embed.FS

// uiTemplates are the page's templates, parsed at their first use: the
// package is linked into every veto command, and parsing them at start
// cost each one (veto hook on every call it answers) 1.3 ms.
var uiTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"ago":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
		"pathTo": pathTo,
	}).ParseFS(uiFiles, "ui/*.html"))
})

// uiMaxShown is how many of the newest decisions a page shows.
const uiMaxShown = 200

// uiRoutes are the page's endpoints, outside the API's list.
var uiRoutes = []struct {
	path   string
	login  bool // reachable without a session
	handle func(*Page, http.ResponseWriter, *http.Request)
}{
	{"GET /ui/login", true, (*Page).uiLogin},
	{"POST /ui/login", true, (*Page).uiLoginPost},
	{"GET /ui", false, (*Page).uiDecisions},
	{"GET /ui/events", false, (*Page).uiEvents},
	{"GET /ui/runs/{run}", false, (*Page).uiRun},
	{"POST /ui/approvals/{run}/{call}", false, (*Page).uiAnswer},
	{"GET /ui/inputs", false, (*Page).uiInputs},
	{"POST /ui/inputs/{run}/{call}", false, (*Page).uiInput},
	{"POST /ui/pins/{server}/{tool}", false, (*Page).uiPin},
	{"GET /ui/whatif", false, (*Page).uiWhatIf},
	{"POST /ui/whatif", false, (*Page).uiWhatIf},
	{"GET /ui/app.js", true, (*Page).uiScript},
	{"GET /ui/style.css", true, (*Page).uiStyle},
}

func (pg *Page) uiWrap(login bool, h func(*Page, http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		if !login {
			c, err := r.Cookie(uiCookie)
			st := sessionEnded
			var se uiSession
			if err == nil {
				se, st = pg.session(r.Context(), c.Value)
			}
			switch st {
			case sessionUnknown:
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				uiTemplates().ExecuteTemplate(w, "login.html", map[string]string{"Error": "veto cannot tell whether this session's token is still live; reload the page."})
				return
			case sessionEnded:
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				uiTemplates().ExecuteTemplate(w, "login.html", nil)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, se))
		}
		h(pg, w, r)
	}
}

// card is one decision as the page shows it: never argument text, only
// what the event and the rule's declaration say.
type card struct {
	Time    time.Time
	Run     string
	Seq     uint64
	Tool    string
	Verdict string // allow, deny
	Rule    string
	Reason  string
	Risk    string
	Text    string // the reason's sentence, from the rule's declaration
	Instead string
	Policy  string
	Cursor  string

	// A person's approvals. On a decision: "approved" (an allow that used
	// approval #Approval) or "refused" (a denial of an approved call by
	// the live policy: refused at resume, the approval used up). On an
	// answer card (Answer granted or denied): the call it answers and,
	// for a grant, its State: waiting (for the call), used, refused (at
	// resume) or expired (unused; computed from Expires, not an event).
	Resume   string
	Resumed  string // a decision resuming a suspension: what it waited for (approval, input)
	Awaiting string // a suspension's: approval or input
	Input    string // a suspension for input answered on this instance's page: answered, taken, resumed (By: who)
	Approval uint64
	Answer   string
	State    string
	CallID   string
	By       string
	Expires  time.Time

	// Rev is the policy revision that made a decision; WouldDeny and
	// WouldReason, on an allow, the rule in monitor mode that would have
	// refused it.
	Rev, WouldDeny, WouldReason string
}

// grantState is an approval's state from its expiry alone: before any
// decision that used it is seen.
func grantState(ev *veto.Event, now time.Time) string {
	if now.Before(ev.Expires) {
		return "waiting"
	}
	return "expired"
}

// useGrant marks grant as used by decision ev.
func useGrant(grant *card, ev *veto.Event) {
	if ev.Kind == veto.EventAllowed {
		grant.State = "used"
	} else {
		grant.State = "refused"
	}
}

// uiFilter is the page's filters: run, tool, verdict, rule, risk.
type uiFilter struct{ Run, Tool, Verdict, Rule, Risk string }

func filterOf(r *http.Request) uiFilter {
	q := r.URL.Query()
	return uiFilter{Run: q.Get("run"), Tool: q.Get("tool"), Verdict: q.Get("verdict"), Rule: q.Get("rule"), Risk: q.Get("risk")}
}

// query is the events the page scans: the decisions, the answers and the
// suspensions (which mark the decision that resumes them, whatever the
// filter shows).
func (f uiFilter) query() veto.LogQuery {
	q := veto.LogQuery{Run: f.Run, Kinds: []veto.EventKind{veto.EventSuspended, veto.EventAllowed, veto.EventDenied,
		veto.EventToolDenied, veto.EventApproved, veto.EventApprovalRefused}}
	switch f.Verdict {
	case "allow":
		q.Kinds = q.Kinds[:2]
	case "deny":
		q.Kinds = append(q.Kinds[:1], q.Kinds[2:4]...)
	}
	return q
}

// keeps reports whether the filters show c. Answers and suspensions are
// not verdicts: a verdict filter hides them.
func (f uiFilter) keeps(c *card) bool {
	return (f.Tool == "" || c.Tool == f.Tool) && (f.Rule == "" || c.Rule == f.Rule) && (f.Risk == "" || c.Risk == f.Risk) &&
		(c.Verdict != "answer" && c.Verdict != "suspended" || f.Verdict == "")
}

// resumes marks the decisions that resume a suspended call (the runtime's
// Gate.ResumeApproval or ResumeInput, or POST /v1/resume: the next
// decision of that call id in its run) and the suspensions' states.
type resumes struct {
	open map[[2]string]*card // run, call id → the suspension's card
}

// see notes ev: a suspension opens, a decision of a suspended call
// resumes it (refused at resume when it denies).
func (r *resumes) see(run string, ev *veto.Event, c *card) {
	k := [2]string{run, ev.CallID}
	switch ev.Kind {
	case veto.EventSuspended:
		if r.open == nil {
			r.open = map[[2]string]*card{}
		}
		r.open[k] = c
	case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied:
		sc, ok := r.open[k]
		if !ok {
			return
		}
		delete(r.open, k)
		c.Resumed = sc.Awaiting
		sc.State = "resumed"
		if ev.Kind != veto.EventAllowed {
			c.Resume, sc.State = "refused", "refused"
		}
	}
}

// answerer is who gave an answer: the person (kind:id) and, for one
// given at a client's own prompt (veto.PromptActor), where.
func answerer(a veto.Actor) string {
	if a.Agent != "" {
		return a.Kind + ":" + a.ID + " at " + a.Agent
	}
	return a.Kind + ":" + a.ID
}

func cardOf(run string, seq uint64, ev *veto.Event, cursor string, now time.Time) card {
	c := card{Time: ev.Time, Run: run, Seq: seq, Tool: ev.Tool, Verdict: "allow", Cursor: cursor, Approval: ev.Approval, CallID: ev.CallID,
		Rev: ev.PolicyRev, WouldDeny: ev.WouldDeny, WouldReason: ev.WouldReason}
	switch ev.Kind {
	case veto.EventSuspended:
		c.Verdict, c.Awaiting, c.State = "suspended", string(ev.Awaiting), "waiting"
		return c
	case veto.EventApproved, veto.EventApprovalRefused:
		c.Verdict, c.Answer, c.State, c.Rule, c.Reason = "answer", "granted", grantState(ev, now), ev.Rule, ev.Reason
		c.By, c.Expires = answerer(ev.Actor), ev.Expires
		if ev.Kind == veto.EventApprovalRefused {
			c.Answer, c.State = "denied", "denied"
		}
		return c
	}
	if ev.Approval != 0 {
		c.Resume = "approved"
	}
	if ev.Kind != veto.EventAllowed {
		if ev.Approval != 0 && ev.Reason != veto.ReasonApprovalRefused {
			c.Resume = "refused" // a denial that names a person's refusal is that answer's, not a resume's
		} else {
			c.Resume = ""
		}
		c.Verdict, c.Rule, c.Reason, c.Risk = "deny", ev.Rule, ev.Reason, ev.Risk.String()
		if ev.Awaiting == veto.AwaitApproval {
			c.Verdict = "ask"
		}
		if ev.Kind == veto.EventToolDenied && c.Reason == "" {
			c.Reason = string(ev.ToolDenial)
		}
		var adv veto.Advice
		c.Text, adv = rule.Text(ev.Rule, ev.Reason)
		if ev.Kind == veto.EventToolDenied {
			c.Text, _ = rule.Text("", veto.ReasonToolDenied)
		}
		c.Instead, c.Policy = adv.Instead, adv.Policy
	}
	return c
}

// scanCards returns the newest decisions that pass f, newest first, and
// the cursor after the last one stored.
func (pg *Page) scanCards(ctx context.Context, f uiFilter) ([]card, string, error) {
	q := f.query()
	q.Since = pg.cfg.Now().Add(-7 * 24 * time.Hour)
	var shown []*card
	type grantKey struct {
		run string
		seq uint64
	}
	grants := map[grantKey]*card{} // the approvals shown, to mark them used
	now := pg.cfg.Now()
	var rs resumes
	err := pg.cfg.Store.Scan(ctx, q, func(run string, seq uint64, b []byte) error {
		ev, err := eventlog.DecodeEvent(b)
		q.AfterRun, q.AfterSeq = run, seq
		if err != nil {
			return nil
		}
		q.AfterTime = ev.Time.UnixNano()
		c := cardOf(run, seq, &ev, cursorOf(&q), now)
		rs.see(run, &ev, &c)
		if g := grants[grantKey{run, ev.Approval}]; ev.Approval != 0 && g != nil && ev.Reason != veto.ReasonApprovalRefused {
			useGrant(g, &ev)
		}
		if f.keeps(&c) {
			shown = append(shown, &c)
			if c.Answer == "granted" {
				grants[grantKey{run, seq}] = &c
			}
			if len(shown) > uiMaxShown {
				shown = shown[1:]
			}
		}
		return nil
	})
	cards := make([]card, len(shown))
	for i, c := range shown {
		cards[len(shown)-1-i] = *c
	}
	return cards, cursorOf(&q), err
}

func (pg *Page) uiDecisions(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r)
	ctx, cancel := context.WithTimeout(r.Context(), pg.cfg.Deadline)
	defer cancel()
	var cards []card
	var qs []server.Question
	var pins []mcpgate.ServerPin
	var after string
	release, err := pg.acquire(ctx)
	if err == nil {
		cards, after, err = pg.scanCards(ctx, f)
		pg.markInputs(cards)
		if err == nil {
			qs, err = pg.api.Questions(ctx, f.Run)
		}
		if err == nil && sessionOf(r).actor.Kind == "user" {
			pg.showQuestions(ctx, qs)
		}
		if err == nil && pg.pins != nil {
			pins, err = pg.pins.Awaiting(ctx)
		}
		release()
	}
	active := pg.api.Active()
	var diffs []state.DiffGroup
	if err == nil && pg.revs != nil && active.ShadowRev != "" {
		diffs, err = pg.revs.Diffs(ctx, active.ShadowRev)
		if len(diffs) > maxShownDiffs {
			diffs = diffs[:maxShownDiffs]
		}
	}
	se := sessionOf(r)
	data := map[string]any{"Filter": f, "Cards": cards, "After": after, "Query": r.URL.RawQuery,
		"Rules": rule.IDs(), "Risks": []string{"low", "medium", "high", "critical"},
		"Questions": qs, "Pins": pins, "CSRF": se.csrf, "CanAnswer": se.actor.Kind == "user" && pg.api.Gate() != nil, "Who": se.actor,
		"Inputs": pg.inputsData(f.Run, se), "Active": active, "Diffs": diffs}
	if err != nil {
		data["Error"] = "veto cannot read its state: " + pg.cfg.Cause(err) + "."
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	uiTemplates().ExecuteTemplate(w, "decisions.html", data)
}

// maxShownDiffs is how many kinds of the shadow's differences the page
// lists; veto policy diff lists them all.
const maxShownDiffs = 20

// maxShownCards is how many question cards show their call.
const maxShownCards = 50

// showQuestions attaches to each question what its person is shown of
// the call (the arguments, masked, and what the rules saw), when the
// state still holds it for the very arguments asked about. Only a
// person's session reads it.
func (pg *Page) showQuestions(ctx context.Context, qs []server.Question) {
	now := pg.cfg.Now()
	for i := range qs {
		if i == maxShownCards {
			return
		}
		st, err := pg.cfg.Store.Load(ctx, qs[i].Run)
		if err != nil || st.Approvals == nil {
			continue
		}
		sh, ok, err := st.Approvals.Shown(ctx, qs[i].CallID, now)
		if err == nil && ok && sh.ArgsHash == qs[i].ArgsHash {
			qs[i].Shown = &sh
		}
	}
}

// uiEvents streams each new decision that passes the filters as a
// rendered card, after the cursor the page was drawn at. It ends when its
// session does (expired, or its token revoked).
func (pg *Page) uiEvents(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r)
	q := f.query()
	// A reconnecting stream goes on after its last event; a new one
	// after the page's newest decision.
	if !parseCursor(r.Header.Get("Last-Event-ID"), &q) && !parseCursor(r.URL.Query().Get("after"), &q) {
		q.Since = pg.cfg.Now()
	}
	r, stop := pg.watch(r)
	defer stop()
	var buf bytes.Buffer
	var rs resumes // the suspensions this stream saw
	pg.api.Stream(w, r, &q, func(ev *veto.Event, run string, seq uint64, _ []byte) []byte {
		if !veto.ValidName(run) {
			// An older event whose run ref the service now refuses (a
			// control character): no cursor names its place, so it is
			// not streamed; veto log shows it.
			return nil
		}
		c := cardOf(run, seq, ev, cursorOf(&q), pg.cfg.Now())
		rs.see(run, ev, &c)
		if !f.keeps(&c) {
			return nil
		}
		buf.Reset()
		if uiTemplates().ExecuteTemplate(&buf, "card", c) != nil {
			return nil
		}
		return frame(c.Cursor, "decision", buf.Bytes())
	})
}

// step is one event of a run's timeline.
type step struct {
	Seq     uint64
	Time    time.Time
	Kind    string
	Tool    string
	What    string // rule/reason, outcome, host
	Verdict string
	Rule    string
	Reason  string
	Resume  string // as a card's: approved, refused (at resume)
	State   string // an approval's: waiting, used, refused, expired
	Taint   bool   // an observation of private material that taints the run
	Target  string // a tainting observation's file
}

func (pg *Page) uiRun(w http.ResponseWriter, r *http.Request) {
	run := r.PathValue("run")
	ctx, cancel := context.WithTimeout(r.Context(), pg.cfg.Deadline)
	defer cancel()
	data := map[string]any{"Run": run}
	release, err := pg.acquire(ctx)
	var evs []veto.Event
	var taint map[uint64]bool
	var taintKnown string
	if err == nil {
		evs, err = pg.cfg.Store.Events(ctx, run, 0)
		if err == nil {
			taint, taintKnown = pg.taintOf(ctx, run, len(evs) > 0)
		}
		release()
	}
	if err != nil {
		data["Error"] = "veto cannot read its state: " + pg.cfg.Cause(err) + "."
	}
	used := map[uint64]string{} // approval → used or refused
	outcomes := map[string]veto.Outcome{}
	for _, e := range evs {
		if e.Kind == veto.EventObserved {
			outcomes[e.CallID] = e.Outcome
		}
		if e.Approval != 0 && e.Reason != veto.ReasonApprovalRefused {
			used[e.Approval] = "used"
			if e.Kind != veto.EventAllowed {
				used[e.Approval] = "refused"
			}
		}
	}
	now := pg.cfg.Now()
	suspended := map[string]int{} // call id → its suspension's step
	var steps []step
	var tainted []step
	knows := map[string]bool{}
	var hosts []string
	var complete = "unknown"
	for _, e := range evs {
		st := step{Seq: e.Seq, Time: e.Time, Kind: string(e.Kind), Tool: e.Tool}
		if e.Approval != 0 {
			st.Resume = used[e.Approval]
			if st.Resume == "used" {
				st.Resume = "approved"
			}
		}
		if i, ok := suspended[e.CallID]; ok && (e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied || e.Kind == veto.EventToolDenied) {
			delete(suspended, e.CallID)
			steps[i].State = "resumed"
			if e.Kind != veto.EventAllowed {
				st.Resume, steps[i].State = "refused", "refused"
			}
		}
		switch e.Kind {
		case veto.EventRunStarted:
			if e.Complete != nil && *e.Complete {
				complete = "complete"
			} else {
				complete = "incomplete: history rules refuse until proven"
			}
		case veto.EventAllowed:
			st.Verdict = "allow"
			// The history rule names a tainting call by its decision.
			if taint[e.Seq] {
				st.Taint, st.Target = true, e.Target.ID
				if o, ok := outcomes[e.CallID]; ok {
					st.What = string(o)
				}
				tainted = append(tainted, st)
			}
		case veto.EventDenied, veto.EventToolDenied:
			st.Verdict, st.Rule, st.Reason = "deny", e.Rule, e.Reason
			st.What = e.Rule + "/" + e.Reason
			if e.Kind == veto.EventToolDenied {
				st.What = string(e.ToolDenial)
			}
		case veto.EventObserved:
			st.What = string(e.Outcome)
			for _, f := range e.Files {
				knows[f.Path] = true
			}
		case veto.EventApproved:
			st.Rule, st.Reason, st.State = e.Rule, e.Reason, grantState(&e, now)
			if u := used[e.Seq]; u != "" {
				st.State = u
			}
			st.What = "call " + e.CallID + " by " + answerer(e.Actor) + ", until " + e.Expires.UTC().Format("2006-01-02 15:04:05") + ": " + st.State
		case veto.EventApprovalRefused:
			st.Rule, st.Reason, st.State = e.Rule, e.Reason, "denied"
			st.What = "call " + e.CallID + " by " + answerer(e.Actor)
		case veto.EventSuspended:
			st.What, st.State = "call "+e.CallID+" awaits "+string(e.Awaiting), "waiting"
			suspended[e.CallID] = len(steps)
		case veto.EventEgressAllowed:
			st.What = e.Host
			hosts = append(hosts, e.Host)
		}
		steps = append(steps, st)
	}
	data["Steps"], data["Complete"], data["Hosts"] = steps, complete, hosts
	data["Taint"], data["TaintKnown"] = tainted, taintKnown
	data["Knows"] = slices.Sorted(func(yield func(string) bool) {
		for k := range knows {
			if !yield(k) {
				return
			}
		}
	})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if len(evs) == 0 && err == nil {
		w.WriteHeader(http.StatusNotFound)
	}
	uiTemplates().ExecuteTemplate(w, "run.html", data)
}

// taintOf is what the run has read that taints it, as the live policy
// counts it: the sequence numbers of the decisions that let each tainting
// call through (veto explain's taint, structured data of the rule that
// counts it, a veto.Tainter). It asks the gate to explain a call that
// does nothing, in that run, recording nothing. known is "" when a rule
// counted; otherwise why the page cannot tell.
func (pg *Page) taintOf(ctx context.Context, run string, exists bool) (map[uint64]bool, string) {
	if pg.api.Gate() == nil || !exists {
		return nil, "this page has no policy to tell"
	}
	e := pg.api.Gate().Explain(ctx, &veto.Call{ID: "veto-page-taint", Tool: "Bash", Args: map[string]any{"command": "true"}, Run: veto.Run{Ref: run}})
	for _, st := range e.Rules {
		switch {
		case st.Taint == nil:
			continue
		case st.Outcome == "not_reached":
			return nil, "the policy's history rule was not reached"
		case !st.Taint.Read:
			return nil, "the run's taint could not be read"
		}
		seqs := map[uint64]bool{}
		for _, o := range st.Taint.Observations {
			seqs[o.Seq] = true
		}
		return seqs, ""
	}
	return nil, "the policy names no private material (no rule counts the run's taint)"
}

func (pg *Page) uiScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	b, _ := uiFiles.ReadFile("ui/app.js")
	w.Write(b)
}

func (pg *Page) uiStyle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	b, _ := uiFiles.ReadFile("ui/style.css")
	w.Write(b)
}

// fromPage reports whether the browser says a form's request came from
// the page itself: no Sec-Fetch-Site but same-origin, no Origin but this
// host's. A request that says neither (an old browser, a script) is
// judged by the form's token alone.
func fromPage(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameHost(o, r.Host) {
		return false
	}
	return true
}

// formFailed answers a form's request that is refused: status, and the
// page's answer with msg (never a value the form held).
func formFailed(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	uiTemplates().ExecuteTemplate(w, "answer.html", map[string]any{"Error": msg})
}

// uiAnswer records a person's answer from the page's form: the session's
// actor, the form's token against cross-site requests, and the browser's
// word that the request comes from this page.
func (pg *Page) uiAnswer(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	fail := func(status int, msg string) { formFailed(w, status, msg) }
	if !fromPage(r) {
		fail(http.StatusForbidden, "The answer did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(se.csrf)) != 1 || se.csrf == "" {
		fail(http.StatusForbidden, "The form is stale or came from elsewhere; reload the page.")
		return
	}
	if !formNamesItsAddress(r, "run", "call") {
		fail(http.StatusBadRequest, "The form names another call than the address it was sent to; reload the page.")
		return
	}
	grant := r.PostFormValue("answer") == "approve"
	if !grant && r.PostFormValue("answer") != "deny" {
		fail(http.StatusBadRequest, "An answer is approve or deny.")
		return
	}
	if pg.api.Gate() == nil {
		fail(http.StatusForbidden, "This page cannot answer.")
		return
	}
	shown := r.PostFormValue("args_hash")
	if !server.ValidHash(shown) {
		fail(http.StatusBadRequest, "The form does not say which arguments were shown; reload the page.")
		return
	}
	if rf := pg.api.Answer(r.Context(), r.PathValue("run"), r.PathValue("call"), shown, se.actor, grant, server.AnswerTTL); rf != nil {
		fail(rf.Status, rf.Message)
		return
	}
	http.Redirect(w, r, "/ui?run="+url.QueryEscape(r.PathValue("run")), http.StatusSeeOther)
}

// sameHost reports whether an Origin header names host.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host == host
}

// uiPin pins, from the page's form, the definition of an MCP tool the
// person was shown (its hash in the form): a definition that changed
// since stays awaiting. Only a person approves; the form carries the
// session's token.
func (pg *Page) uiPin(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	fail := func(status int, msg string) { formFailed(w, status, msg) }
	if !fromPage(r) {
		fail(http.StatusForbidden, "The approval did not come from veto's page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil || se.csrf == "" || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(se.csrf)) != 1 {
		fail(http.StatusForbidden, "The form is stale or came from elsewhere; reload the page.")
		return
	}
	if !formNamesItsAddress(r, "server", "tool") {
		fail(http.StatusBadRequest, "The form names another tool than the address it was sent to; reload the page.")
		return
	}
	if se.actor.Kind != "user" || pg.pins == nil {
		fail(http.StatusForbidden, "Only a person (a user: token or veto ui) approves a tool's definition.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pg.cfg.Deadline)
	defer cancel()
	release, err := pg.acquire(ctx)
	if err != nil {
		fail(http.StatusServiceUnavailable, "veto cannot use its state: "+pg.cfg.Cause(err)+".")
		return
	}
	ok, err := pg.pins.ApproveSeen(ctx, r.PathValue("server"), r.PathValue("tool"), r.PostFormValue("seen"), pg.cfg.Now())
	release()
	switch {
	case err != nil:
		fail(http.StatusServiceUnavailable, "veto could not record the approval: "+pg.cfg.Cause(err)+".")
	case !ok:
		fail(http.StatusConflict, "The tool's definition changed since the page showed it, or was approved already; reload the page.")
	default:
		pg.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "veto: an MCP tool's definition approved", slog.String("server", r.PathValue("server")),
			slog.String("tool", r.PathValue("tool")), slog.String("by", se.actor.Kind+":"+se.actor.ID))
		http.Redirect(w, r, "/ui", http.StatusSeeOther)
	}
}
