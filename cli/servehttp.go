package cli

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/export"
	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/page"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/rules/control"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/state"
)

const serveHTTPDescription = `Decide tool calls over HTTP/JSON: veto's decision service, for runtimes in any language
and for many instances sharing one PostgreSQL database.

  veto serve --listen 127.0.0.1:8181 --workspace-root DIR... [--postgres DSN | --state FILE]
             [--policy FILE] [--tls-cert FILE --tls-key FILE] [--deadline 2s] [--log-level warn]
             [--sign-key FILE [--sign-every 1000] [--sign-interval 10s]]

  POST /v1/decide            a call in veto check's JSON → its verdict
  POST /v1/observe           the call as it ran, with "outcome" → recorded
  POST /v1/runs              {"ref", "fresh"}: start a run
  GET  /v1/runs/{run}/events a run's history
  POST /v1/suspend, /v1/resume   park a call for a person; decide it again on approval or input
  GET  /v1/events            server-sent events, with veto log's filters (run, tool, verdict, since, all)
  GET  /v1/policy            the effective policy
  POST /v1/hooks/claude-code Claude Code's HTTP hook (veto init claude-code --url URL)
  GET  /healthz, /readyz, /metrics

Every request but /healthz, /readyz and /metrics needs a token (Authorization: Bearer …) made
by veto token create against the same state; the identity a call acts as is the token's, and
its role says what it may do (only a person's answers a question or signs in to the page).
A call's workspace must lie in a --workspace-root (repeatable; with none, a call that claims a
workspace or a cwd is refused, workspace_refused), and its cwd in its workspace
(cwd_outside_workspace): a request does not choose veto's write roots.
Listening beyond loopback needs --tls-cert and --tls-key. The policy is the built-in default,
the user's and the managed file, and --policy: project files are not read, since a request
must not choose which files the service reads. SIGTERM finishes the decisions in flight.
docs/openapi.json describes the API.`

func runServeHTTP(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve", "--listen ADDR [--postgres DSN | --state FILE] [flags]", serveHTTPDescription)
	listen := fs.String("listen", "127.0.0.1:8181", "the address to listen on (host:port)")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "decide on this PostgreSQL database (a DSN), shared by every instance that names it")
	policyFile := fs.String("policy", "", "a policy file applied after the user's and the managed one")
	certFile := fs.String("tls-cert", "", "serve TLS with this certificate (PEM)")
	keyFile := fs.String("tls-key", "", "the certificate's private key (PEM)")
	deadline := fs.Duration("deadline", 2*time.Second, "refuse a call not decided in this time")
	noAuth := fs.Bool("insecure-no-auth", false, "accept requests without a token, acting as the actor the body names (loopback only: a loopback Host, no other Origin, JSON bodies)")
	level := fs.String("log-level", "warn", "log to stderr as JSON at this level: off, debug, info, warn, error")
	grace := fs.Duration("grace", 10*time.Second, "on SIGTERM, how long the decisions in flight may take")
	signKey := fs.String("sign-key", "", "sign checkpoints of the decision log with this Ed25519 key (veto log keygen; docs/evidence.md)")
	signEvery := fs.Int("sign-every", 1000, "with --sign-key: a checkpoint once this many events were stored since the last (0: not by count)")
	signInterval := fs.Duration("sign-interval", 10*time.Second, "with --sign-key: a checkpoint when the last is this old and the log moved (0: not by time)")
	exportFlags := export.AddFlags(fs)
	var roots []string
	fs.Func("workspace-root", "accept calls whose workspace lies in DIR (repeatable; none: no claimed workspace is accepted)", func(v string) error {
		roots = append(roots, v)
		return nil
	})
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto serve: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	log, err := logger(e.stderr, *level)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitUsage
	}
	loopback, err := isLoopback(*listen)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve: --listen:", err)
		return ExitUsage
	}
	useTLS := *certFile != "" || *keyFile != ""
	switch {
	case useTLS && (*certFile == "" || *keyFile == ""):
		fmt.Fprintln(e.stderr, "veto serve: --tls-cert and --tls-key go together")
		return ExitUsage
	case !loopback && !useTLS:
		fmt.Fprintln(e.stderr, "veto serve: listening beyond loopback needs TLS: give --tls-cert and --tls-key")
		return ExitUsage
	case *noAuth && !loopback:
		fmt.Fprintln(e.stderr, "veto serve: --insecure-no-auth is for loopback addresses only")
		return ExitUsage
	}
	if err := exportFlags.Check(*deadline); err != nil {
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitUsage
	}
	st, err := openServiceState(ctx, *state, *pg, true)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	if st.startErr != nil {
		fmt.Fprintln(e.stderr, "veto serve: every call is refused until the state is sound:", stateCause(st.startErr))
	}
	stopSigner, signing, err := startSigner(st, *signKey, *signEvery, *signInterval, log)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve: --sign-key:", err)
		return ExitUsage
	}
	defer stopSigner() // after the server stopped: the last checkpoint covers its last decisions
	lo := policy.Locate("", "")
	lo.FlagPath = *policyFile
	lo.Compiler = &lazyCEL{}
	// The files are reloaded as they change: while this runs, they are
	// veto's, refused to the agent wherever they lie.
	defer control.Reloading("serve", policyPaths(lo)...)()
	revs := st.revisions()
	lv, err := live.Start(ctx, live.Source{Files: lo, Revisions: revs, Logger: log, Acquire: st.acquire,
		Build: func(p *policy.Policy) (*veto.Gate, error) {
			return p.Gate(policy.BuildOptions{Store: st.store, Logger: log})
		}})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve: the policy does not load; run: veto validate")
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go lv.Watch(wctx)
	exporting, err := exportFlags.Start(ctx, export.Source{Log: st.log, Acquire: st.acquire, DB: st.db,
		Dialect: st.dialect, Logger: log, Deadline: *deadline})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitUsage
	}
	defer exporting.Stop() // before the state's close, deferred above
	cfg := server.Config{Active: activeOf(lv), Decided: shadowOf(lv), Store: st.log, Acquire: st.acquire, Cause: stateCause,
		Logger: log, Deadline: *deadline, WorkspaceRoots: roots, Collectors: append(exporting.Collectors(), signing...)}
	if !*noAuth {
		if cfg.Tokens, err = st.tokens(ctx); err != nil {
			fmt.Fprintln(e.stderr, "veto serve: cannot open the token table:", stateCause(err))
			return ExitDeny
		}
	}
	h, err := server.New(cfg)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitDeny
	}
	mux := withPage(h, page.New(h, page.Config{Pins: st.pins(ctx), Revisions: revs}))
	if *noAuth {
		// The page's routes are held to loopback names and their own
		// origin too; the API's are in server, with the body's type.
		mux = server.LocalOnly(mux)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitDeny
	}
	defer control.Listening("serve", l.Addr().String())() // veto.control refuses the agent's tools there
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: *deadline + 10*time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	scheme := "http"
	if useTLS {
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	done := make(chan error, 1)
	go func() {
		if useTLS {
			done <- srv.ServeTLS(l, *certFile, *keyFile)
		} else {
			done <- srv.Serve(l)
		}
	}()
	// The first line says where: tests and scripts read the port from it.
	fmt.Fprintf(e.stderr, "veto serve: listening on %s://%s\n", scheme, l.Addr())
	select {
	case err := <-done:
		fmt.Fprintln(e.stderr, "veto serve:", err)
		return ExitDeny
	case <-ctx.Done():
	}
	// Stop taking requests; finish the ones in flight (their decisions
	// are recorded and answered), within the grace period.
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	srv.RegisterOnShutdown(h.Drain)
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintln(e.stderr, "veto serve: stopping:", err)
		return ExitDeny
	}
	fmt.Fprintln(e.stderr, "veto serve: stopped")
	return ExitAllow
}

// policyPaths are the policy files of lo, absolute.
func policyPaths(lo policy.LoadOptions) []string {
	var out []string
	for _, f := range []string{lo.UserPath, lo.ProjectPath, lo.FlagPath, lo.ManagedPath} {
		if f == "" {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// activeOf is the service's view of the live policy: asked at each
// request, so that a revision pushed or a file edited decides the next
// call. veto policy show's text is made once per policy, when asked.
func activeOf(lv *live.Live) func() server.Active {
	var shown struct {
		sync.Mutex
		of   *live.Current
		text string
	}
	return func() server.Active {
		c := lv.Current()
		return server.Active{Gate: c.Gate, Rev: c.Rev, From: c.From, ShadowRev: c.ShadowRev, Err: c.Err, ErrWhere: c.ErrWhere, ErrAt: c.ErrAt,
			Reloads: lv.Reloads.Load(), Failures: lv.Failures.Load(), ShadowDiffs: lv.ShadowDiffs.Load(),
			ShadowDropped: lv.ShadowDropped.Load(), Any: c,
			Show: func() string {
				shown.Lock()
				defer shown.Unlock()
				if shown.of != c {
					shown.of, shown.text = c, showPolicy(c.Policy)
				}
				return shown.text
			}}
	}
}

// shadowOf hands each decided call to the shadow revision, if any.
func shadowOf(lv *live.Live) func(a *server.Active, c *veto.Call, v *veto.Verdict) {
	return func(a *server.Active, c *veto.Call, v *veto.Verdict) {
		cur, _ := a.Any.(*live.Current)
		lv.Shadow(cur, c, v)
	}
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// stateCause names what is wrong with a state, never a driver's message.
func stateCause(err error) string { return state.Cause(err) }

// serviceState is the state a service decides on (state.Service), as the
// commands here use it: an SQLite file proved sound before each request,
// or a PostgreSQL pool.
type serviceState struct {
	store   veto.Store
	log     server.Store
	acquire func(ctx context.Context) (func(), error)
	// together holds one write transaction for a decision and the records
	// before it (state.Service.Together).
	together func(ctx context.Context, f func(ctx context.Context)) error
	db       func() *sql.DB
	dialect  string
	toks     veto.TokenStore
	close    func()
	// startErr is why the state could not be used at start (a service
	// starts anyway and refuses until it can).
	startErr error
}

// openServiceState opens the SQLite file at path or the PostgreSQL
// database dsn; lazy: a state that cannot be used yet is no error, and
// every request is refused with its cause until it mends.
func openServiceState(ctx context.Context, path, dsn string, lazy bool) (*serviceState, error) {
	sv, err := state.OpenService(ctx, state.Name{Path: path, DSN: dsn}, state.ServiceOptions{Lazy: lazy})
	if err != nil {
		return nil, err
	}
	return &serviceState{store: sv.Store, log: sv.Log, acquire: sv.Acquire, together: sv.Together, db: sv.DBFunc(), dialect: sv.Dialect(),
		toks: sv.Tokens(), close: sv.Close, startErr: sv.StartErr}, nil
}

// pins are veto mcp's pinned tool definitions in the state, for the page;
// nil when the state cannot be used now.
func (st *serviceState) pins(ctx context.Context) *mcpgate.Pins {
	if st.startErr != nil {
		return nil
	}
	release, err := st.acquire(ctx)
	if err != nil {
		return nil
	}
	defer release()
	p, err := mcpgate.OpenPins(ctx, st.db, state.Markers(st.dialect))
	if err != nil {
		return nil
	}
	return p
}

// revisions is the policy revisions in the state's database.
func (st *serviceState) revisions() *state.Revisions { return state.NewRevisions(st.db, st.dialect) }

// tokens is the state's tokens (state.Service.Tokens), their table made
// at its first use.
func (st *serviceState) tokens(ctx context.Context) (*server.Tokens, error) {
	return server.NewTokens(st.toks), nil
}

const tokenDescription = `Make, list and revoke the bearer tokens of veto serve. Each token is bound to an actor,
whom every call made with it acts as, and has a role, which says what it may do:

  person   answer questions, sign in to the page, give input; read runs; decide its own calls.
           Acts as user:…. Refused at the hook endpoints: never give it to an agent.
  agent    a hook's: decide, observe and start runs for the agent it is bound to; never answer,
           sign in, give input or read a run. Acts as agent:…. veto init CLIENT --url makes one.
  service  a runtime's: decide, observe, suspend, resume and read its runs; never answer or
           sign in. Acts as service:…, schedule:… or agent:….

A token made before roles shows as legacy and may do what an agent's may. Only a hash of a
token is stored; its secret is printed once, by create. Flags may come before or after the id.

  veto token create --actor KIND:ID [--role ROLE] [--state FILE | --postgres DSN]
      (ROLE defaults from KIND: user → person, agent → agent, service and schedule → service)
  veto token list [--state FILE | --postgres DSN]
  veto token revoke ID [--state FILE | --postgres DSN]`

func runToken(ctx context.Context, e *env, args []string) int {
	sub := ""
	if len(args) > 0 && (args[0] == "create" || args[0] == "list" || args[0] == "revoke") {
		sub, args = args[0], args[1:]
	}
	fs := newFlags(e, "token", "create|list|revoke [flags]", tokenDescription)
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	actor := fs.String("actor", "", "create: the actor the token acts as, KIND:ID")
	roleName := fs.String("role", "", "create: what the token may do: person, agent or service (default: from the actor's kind)")
	pos, code, done := parseInterspersed(e, fs, args)
	if done {
		return code
	}
	if sub == "" {
		fmt.Fprintln(e.stderr, "veto token: want create, list or revoke")
		return ExitUsage
	}
	var a veto.Actor
	var role server.Role
	if sub == "create" {
		var err error
		if a, err = server.ParseActor(*actor); err != nil {
			fmt.Fprintln(e.stderr, "veto token create: --actor:", err)
			return ExitUsage
		}
		if role, err = tokenRole(*roleName, a); err != nil {
			fmt.Fprintln(e.stderr, "veto token create: --role:", err)
			return ExitUsage
		}
	}
	if (sub == "revoke") != (len(pos) == 1) || len(pos) > 1 {
		fmt.Fprintln(e.stderr, "veto token: revoke takes one token id; create and list take none")
		return ExitUsage
	}
	st, err := openServiceState(ctx, *state, *pg, false)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto token: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	toks, err := st.tokens(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto token: cannot open the token table:", stateCause(err))
		return ExitDeny
	}
	switch sub {
	case "create":
		tok, secret, err := toks.Create(ctx, a, role, time.Now())
		if err != nil {
			fmt.Fprintln(e.stderr, "veto token create: the token could not be stored")
			return ExitDeny
		}
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "token %s acts as %s:%s, role %s; its secret is printed once, above\n", tok.ID, a.Kind, a.ID, role)
	case "list":
		return listTokens(ctx, e, toks)
	case "revoke":
		if err := toks.Revoke(ctx, pos[0], time.Now()); err != nil {
			if errors.Is(err, server.ErrNoToken) {
				fmt.Fprintf(e.stderr, "veto token revoke: no live token has the id %q\n", pos[0])
				return ExitDeny
			}
			fmt.Fprintln(e.stderr, "veto token revoke: the token could not be revoked")
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", pos[0])
	}
	return ExitAllow
}

// tokenRole is the role veto token create makes: the one named, checked
// against the actor, or the actor kind's default.
func tokenRole(name string, a veto.Actor) (server.Role, error) {
	role := server.DefaultRole(a)
	if name != "" {
		var err error
		if role, err = server.ParseRole(name); err != nil {
			return "", err
		}
	}
	return role, server.CheckRole(role, a)
}

// listTokens prints every token, its role and whether it is revoked.
func listTokens(ctx context.Context, e *env, toks *server.Tokens) int {
	list, err := toks.List(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto token list: the tokens could not be read")
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACTOR\tROLE\tCREATED\tREVOKED")
	for _, t := range list {
		rev := "-"
		if !t.Revoked.IsZero() {
			rev = t.Revoked.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s:%s\t%s\t%s\t%s\n", t.ID, t.Actor.Kind, t.Actor.ID, t.Role.Shown(), t.Created.Format(time.RFC3339), rev)
	}
	tw.Flush()
	return ExitAllow
}
