// Package server is veto's decision service: the Gate behind an HTTP/JSON
// API, for runtimes in any language and for many instances sharing one
// PostgreSQL database. `veto serve` runs it.
//
// Every answer about a call is a verdict. A failure of veto is a deny that
// names its cause, with the HTTP status that fits (400 a bad request, 401
// no valid token, 503 the state, 504 the deadline), except on the hook
// endpoints, which answer 200 and the client's blocking reply, since a
// client lets a call run on any other status.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/runlock"
)

// Store is what the service decides and reads the log on.
type Store interface {
	veto.Store
	veto.Log
}

// Config is a service's parts.
type Config struct {
	Gate  *veto.Gate
	Store Store
	// Acquire, when set, proves the state sound before each use and holds
	// it until release (an SQLite file); an error refuses the request,
	// its cause named by Cause.
	Acquire func(ctx context.Context) (release func(), err error)
	// Cause names what is wrong with the state, for a refusal's reason;
	// it never returns a driver's message: a clause, as "veto's state
	// /x/veto.db is damaged". Nil: "veto's state cannot be reached".
	Cause func(err error) string
	// Tokens authenticate requests. Nil turns authentication off: every
	// request acts as the actor its body names (loopback only; cli
	// enforces it), and a request a web page could have made is refused:
	// a Host not a loopback name, another Origin, a body not
	// application/json (local.go).
	Tokens *Tokens
	// Policy is the effective policy as veto policy show prints it.
	Policy string
	Logger *slog.Logger
	// Deadline bounds each decision (default 2s): a decision not made
	// by then is a deny, decision_cancelled.
	Deadline time.Duration
	Limits   veto.Limits // zero: veto.DefaultLimits
	// Poll is how often the event stream looks for new events (default
	// 250ms).
	Poll time.Duration
	Now  func() time.Time
	// PageOnly serves /healthz alone, no API: veto ui, where the page
	// (package page) is served beside it and answers through it.
	PageOnly bool
	// Active, when set, is the policy to decide with now, asked once per
	// request: it changes while the service runs (a revision pushed, a
	// file edited; package policy/live). Gate and Policy are unused then.
	Active func() Active
	// Decided, when set, is told of each call decided by the API or a
	// hook endpoint, with the Active it was decided by (the shadow
	// revision decides it again). It must not block, nor keep c.
	Decided func(a *Active, c *veto.Call, v *veto.Verdict)
	// WorkspaceRoots bound the workspace a request may claim for its
	// call (and the cwd, which must lie in the workspace): a call placed
	// elsewhere is refused before any rule (workspace.go). None: no
	// claimed workspace is accepted.
	WorkspaceRoots []string
	// Collectors are more metrics for /metrics (the exporters').
	Collectors []prometheus.Collector
}

// Active is the policy a service decides with now.
type Active struct {
	Gate *veto.Gate
	Rev  string        // the policy's revision hash
	From string        // "revision" (the shared database's active one) or "files"
	Show func() string // the policy as veto policy show prints it
	// ShadowRev is the shadow revision deciding beside it ("" none).
	ShadowRev string
	// Err is why the last change of the policy was not taken ("": it
	// was), and ErrAt when: the service decides with this one meanwhile.
	// ErrWhere is only its places (file:line:col), for /readyz, which
	// anyone who reaches the listener reads.
	Err, ErrWhere string
	ErrAt         time.Time
	// The counts since start: policies taken after the first, changes not
	// taken, calls the shadow decided otherwise, calls it could not
	// compare.
	Reloads, Failures, ShadowDiffs, ShadowDropped int64
	// Any is the source's own value (a *live.Current), for Decided.
	Any any
}

// Server is a running service's handler.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	metrics *metrics
	runs    runlock.Locks
	roots   []string // WorkspaceRoots, resolved
	inputs  inputs   // the requests for a person's input suspended through this instance
	// stopping is closed by Drain: the streams and the takes that wait
	// end, so that a shutdown finishes within its grace.
	stopping  chan struct{}
	drainOnce sync.Once
}

// Drain ends the requests that wait with no end of their own (the event
// stream, a take of a person's input): as the HTTP server shuts down
// (http.Server.RegisterOnShutdown), so that its grace is spent on the
// decisions in flight. A stream's client reconnects with Last-Event-ID
// elsewhere; a take answers 204, none yet.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.stopping) }) }

// route is one endpoint. Routes is the one list of them: the mux, the
// OpenAPI document's test and the docs come from it.
type route struct {
	Method, Path string
	Auth         bool   // needs a token
	rights       rights // the roles whose tokens it takes
	handle       func(*Server, http.ResponseWriter, *http.Request)
	// hookDeny, on a client's hook endpoint, answers every failure: 200
	// and the client's blocking reply.
	hookDeny func(*Server, http.ResponseWriter, *http.Request, string)
}

// Who may use what: a person answers; the hook's token (and a legacy
// one) decides, observes and starts runs, and reads nothing; a service
// does everything but answer.
const (
	anyRole     = forPerson | forAgent | forService
	notTheAgent = forPerson | forService
	forHooks    = forAgent | forService
)

var routes = []route{
	{"POST", "/v1/decide", true, anyRole, (*Server).decide, nil},
	{"POST", "/v1/observe", true, anyRole, (*Server).observe, nil},
	{"POST", "/v1/runs", true, anyRole, (*Server).startRun, nil},
	{"GET", "/v1/runs/{run}/events", true, notTheAgent, (*Server).runEvents, nil},
	{"POST", "/v1/suspend", true, notTheAgent, (*Server).suspend, nil},
	{"POST", "/v1/resume", true, notTheAgent, (*Server).resume, nil},
	{"GET", "/v1/inputs/{run}/{call}", true, notTheAgent, (*Server).takeInput, nil},
	{"GET", "/v1/approvals", true, notTheAgent, (*Server).listApprovals, nil},
	{"POST", "/v1/approvals/{run}/{call}", true, forPerson, (*Server).answerApproval, nil},
	{"GET", "/v1/events", true, notTheAgent, (*Server).events, nil},
	{"GET", "/v1/policy", true, notTheAgent, (*Server).policy, nil},
	{"POST", "/v1/hooks/claude-code", true, forHooks, (*Server).claudeHook, (*Server).claudeDeny},
	{"POST", "/v1/hooks/{client}/command", true, forHooks, (*Server).commandHook, (*Server).commandDeny},
	{"GET", "/healthz", false, 0, (*Server).healthz, nil},
	{"GET", "/readyz", false, 0, (*Server).readyz, nil},
	{"GET", "/metrics", false, 0, (*Server).serveMetrics, nil},
}

// Routes lists the endpoints as "METHOD PATH".
func Routes() []string {
	out := make([]string, len(routes))
	for i, r := range routes {
		out[i] = r.Method + " " + r.Path
	}
	return out
}

// New builds the service's handler.
func New(cfg Config) (*Server, error) {
	if (cfg.Gate == nil && cfg.Active == nil && !cfg.PageOnly) || cfg.Store == nil {
		return nil, errors.New("server: a gate and a store are needed")
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = 2 * time.Second
	}
	if cfg.Limits == (veto.Limits{}) {
		cfg.Limits = veto.DefaultLimits
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Cause == nil {
		cfg.Cause = func(error) string { return "veto's state cannot be reached" }
	}
	roots, err := workspaceRoots(cfg.WorkspaceRoots)
	if err != nil {
		return nil, err
	}
	if cfg.Active == nil {
		shown := cfg.Policy
		a := Active{Gate: cfg.Gate, Show: func() string { return shown }, From: "files"}
		if cfg.Gate != nil {
			a.Rev = cfg.Gate.PolicyRev()
		}
		cfg.Active = func() Active { return a }
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: newMetrics(cfg.Active, cfg.Collectors...), roots: roots, stopping: make(chan struct{})}
	s.inputs.now = cfg.Now
	for _, rt := range routes {
		if cfg.PageOnly && rt.Path != "/healthz" {
			continue
		}
		s.mux.HandleFunc(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "No endpoint has this path; see docs/openapi.json.")
	})
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Config is the service's parts, with New's defaults filled in: the page
// (package page) reads the state, the clock and the deadline the API uses,
// so that both sides of one listener agree.
func (s *Server) Config() Config { return s.cfg }

// Active is the policy deciding now (Config.Active's).
func (s *Server) Active() Active { return s.cfg.Active() }

// Gate is the gate to decide with now (Config.Active's).
func (s *Server) Gate() *veto.Gate { return s.cfg.Active().Gate }

// Acquire proves the state sound for one use and holds it until release,
// as every endpoint does (Config.Acquire; nothing to do when unset).
func (s *Server) Acquire(ctx context.Context) (release func(), err error) { return s.acquire(ctx) }

// Cause names what is wrong with the state, for a refusal's sentence
// (Config.Cause): never a driver's message.
func (s *Server) Cause(err error) string { return s.cfg.Cause(err) }

type actorKey struct{}

// actorOf is the actor the request's token is bound to; ok is false when
// authentication is off.
func actorOf(r *http.Request) (veto.Actor, bool) {
	a, ok := r.Context().Value(actorKey{}).(veto.Actor)
	return a, ok
}

// wrap adds what every endpoint does: recovering a panic as a deny,
// authentication (or, without tokens, the loopback checks), and the
// request metrics.
func (s *Server) wrap(rt route) http.HandlerFunc {
	name := rt.Method + " " + rt.Path
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.cfg.Logger.LogAttrs(r.Context(), slog.LevelError, "veto serve: handler panicked", slog.String("route", name))
				if !rec.wrote {
					s.failure(rec, r, rt, http.StatusInternalServerError, veto.ReasonInternal, "veto failed inside while answering, so the call is refused.")
				}
			}
			s.metrics.request(name, rec.status, time.Since(start))
		}()
		if s.cfg.Tokens == nil && !s.localRequest(rec, r, rt) {
			return
		}
		if rt.Auth && s.cfg.Tokens != nil {
			tok, ok, err := s.authenticate(r)
			if err != nil {
				s.metrics.storeError()
				s.failure(rec, r, rt, http.StatusServiceUnavailable, veto.ReasonStateUnavailable,
					"veto cannot check the request's token: "+s.cfg.Cause(err)+", so the call is refused.")
				return
			}
			if !ok {
				rec.Header().Set("WWW-Authenticate", `Bearer realm="veto"`)
				s.failure(rec, r, rt, http.StatusUnauthorized, "unauthenticated",
					"The request carries no valid veto token (Authorization: Bearer …), so the call is refused.")
				return
			}
			if !rt.rights.allows(tok.Role) {
				reason, msg := roleRefusal(rt.rights, tok.Role)
				s.failure(rec, r, rt, http.StatusForbidden, reason, msg)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), actorKey{}, tok.Actor))
		}
		rt.handle(s, rec, r)
	}
}

// localRequest, without tokens, refuses a request a web page could have
// made (local.go) in the route's form and reports whether to go on.
func (s *Server) localRequest(w http.ResponseWriter, r *http.Request, rt route) bool {
	status, reason, msg := localRefusal(r)
	if reason == "" {
		status, reason, msg = bodyRefusal(r)
	}
	if reason == "" {
		return true
	}
	s.failure(w, r, rt, status, reason, msg)
	return false
}

func (s *Server) authenticate(r *http.Request) (Token, bool, error) {
	h := r.Header.Get("Authorization")
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || secret == "" {
		return Token{}, false, nil
	}
	secret = strings.TrimSpace(secret)
	if tok, ok := s.cfg.Tokens.Cached(secret); ok {
		return tok, true, nil // verified within a second: the state is proved once, by the endpoint
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Deadline)
	defer cancel()
	release, err := s.acquire(ctx)
	if err != nil {
		return Token{}, false, err
	}
	defer release()
	return s.cfg.Tokens.Verify(ctx, secret)
}

// failure answers a request veto could not serve: the route's form of a
// refusal.
func (s *Server) failure(w http.ResponseWriter, r *http.Request, rt route, status int, reason, msg string) {
	if rt.hookDeny != nil {
		rt.hookDeny(s, w, r, msg+" ("+reason+")")
		return
	}
	writeError(w, status, reason, msg)
}

// acquire proves the state sound for one request.
func (s *Server) acquire(ctx context.Context) (func(), error) {
	if s.cfg.Acquire == nil {
		return func() {}, nil
	}
	return s.cfg.Acquire(ctx)
}

// errorJSON is the body of every refusal that is not a verdict on a call.
type errorJSON struct {
	Verdict string `json:"verdict"` // always "deny"
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, reason, msg string) {
	writeJSON(w, status, errorJSON{Verdict: "deny", Reason: reason, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// readBody reads a request's body, at most max bytes; a larger one is
// refused whole.
func readBody(w http.ResponseWriter, r *http.Request, max int) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(max)))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errTooLarge
	}
	return b, err
}

var errTooLarge = errors.New("the request body is too large")

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Flush lets the event stream flush through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		r.wrote = true
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
