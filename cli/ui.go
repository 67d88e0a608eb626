package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"os/user"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/page"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/rules/control"
	"github.com/vetohq/veto/server"
)

const uiDescription = `Serve the page of veto's decisions over the local state: live decisions with filters (run,
tool, verdict, rule, risk), a refusal card for each denial (rule, reason, risk, what to do
instead; never argument text), the calls waiting for a person with approve and deny (answered
as you), what became of each approval (used, refused at resume, expired), the calls a runtime
suspended, each run's timeline with its taint, and the what-if of veto replay for an uploaded
policy and session transcript. Loopback only. veto ui runs only on a
terminal of yours (not under the agent, not on a terminal the agent holds): the page's
address with a one-time key is written there, on /dev/tty, never on stdout; the key opens
one browser session.

  veto ui [--listen 127.0.0.1:0] [--state FILE | --postgres DSN]

veto serve serves the same page at /ui (sign in at /ui/login with a person's token).`

func runUI(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "ui", "[--listen ADDR] [--state FILE | --postgres DSN]", uiDescription)
	listen := fs.String("listen", "127.0.0.1:0", "the loopback address to listen on (host:port)")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto ui: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if lb, err := isLoopback(*listen); err != nil || !lb {
		fmt.Fprintln(e.stderr, "veto ui: --listen must be a loopback address, as 127.0.0.1:8182 (veto serve serves the page beyond)")
		return ExitUsage
	}
	// The page answers as the person: its key goes only to a terminal
	// proved to be a person's, never to stdout or stderr, which the agent
	// may read (presence; docs/threat-model.md).
	tty, err := presence.Prove(ctx, presence.Question{Command: "veto ui", Action: "serve veto's page, which answers questions as you"})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui:", err)
		return ExitDeny
	}
	defer tty.Close()
	st, err := openServiceState(ctx, *state, *pg, true)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	// The page answers questions as the user running veto ui, through a
	// gate of the policy the service would apply.
	lo := policy.Locate("", "")
	lo.Compiler = &lazyCEL{}
	p, err := policy.Load(lo)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui: the policy does not load; run: veto validate")
		return ExitDeny
	}
	g, err := p.Gate(policy.BuildOptions{Store: st.store})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui: cannot build the gate:", err)
		return ExitDeny
	}
	me := veto.Actor{Kind: "user", ID: os.Getenv("USER")}
	if u, err := user.Current(); err == nil {
		me.ID = u.Username
	}
	h, err := server.New(server.Config{Gate: g, Store: st.log, Acquire: st.acquire, Cause: stateCause, PageOnly: true})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui:", err)
		return ExitDeny
	}
	ui := page.New(h, page.Config{Actor: me, Pins: st.pins(ctx)})
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto ui:", err)
		return ExitDeny
	}
	defer control.Listening("ui", l.Addr().String())() // veto.control refuses the agent's tools there
	srv := &http.Server{Handler: withPage(h, ui), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(e.stdout, "veto ui: serving http://%s/ui (the page's one-time key is on your terminal)\n", l.Addr())
	fmt.Fprintf(tty, "veto ui: open http://%s/ui/login?k=%s\r\n", l.Addr(), ui.OneTimeKey())
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(e.stderr, "veto ui:", err)
		return ExitDeny
	}
	return ExitAllow
}

// withPage serves the page's routes and, on every other path, the API, on
// one mux: veto serve and veto ui both listen with it.
func withPage(api *server.Server, pg *page.Page) http.Handler {
	mux := http.NewServeMux()
	pg.Register(mux)
	mux.Handle("/", api)
	return mux
}
