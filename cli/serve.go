package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/rules/control"
)

const serveDescription = `Answer veto-hook's events from a long-lived process that keeps the state open.

  veto serve-hooks [--socket PATH] [--idle 30m]
  veto serve-hooks --status    is a server of this build answering on the socket? (exit 1 when not)
  veto serve-hooks --stop      end it (the next veto-hook call starts a new one)

veto-hook asks the server at $VETO_SOCKET, else at hook-KEY.sock in $XDG_RUNTIME_DIR/veto (else
in $TMPDIR/veto-UID), where KEY hashes veto's build (the Go build ID stamped in the veto
veto-hook would run) and the settings an answer depends on (HOME, USER, TMPDIR, XDG_CONFIG_HOME,
XDG_STATE_HOME, VETO_MANAGED_POLICY, VETO_STATE): each has a server of its own. When none runs
there, veto-hook hands the event to veto hook and starts one (--idle 30m), with only those
variables, XDG_* and VETO_* in its environment. It also hands it on when the server does not answer in time, or was started
under other settings or by another build. VETO_NO_SERVER=1 stops it asking or starting a
server. Every answer fails closed. The socket's directory is made private to this user; one
server per socket (it holds SOCKET.lock). A server exits when its socket is removed or its
program file replaced.`

func runServeHooks(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve-hooks", "[--socket PATH] [--idle 30m]", serveDescription)
	sock := fs.String("socket", hook.SocketPath(), "the Unix socket to listen on")
	idle := fs.Duration("idle", 0, "exit after this long without a request (0: never)")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "decide on this PostgreSQL database (a DSN) instead of the SQLite state")
	status := fs.Bool("status", false, "report whether a server answers on the socket, and exit")
	stop := fs.Bool("stop", false, "stop the server on the socket, and exit")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto serve-hooks: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	switch {
	case *status && *stop:
		fmt.Fprintln(e.stderr, "veto serve-hooks: --status and --stop go alone")
		return ExitUsage
	case *status:
		build, ok := hook.ServerBuild(*sock)
		switch {
		case !ok:
			fmt.Fprintf(e.stdout, "no hook server answers on %s\n", *sock)
			return ExitDeny
		case build != wire.Build():
			fmt.Fprintf(e.stdout, "a hook server of another build (%s) answers on %s: it refuses this build's veto-hook (%s), which veto hook then answers\n",
				build, *sock, wire.Build())
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "a hook server answers on %s (build %s)\n", *sock, build)
		return ExitAllow
	case *stop:
		running, err := hook.Stop(*sock, 5*time.Second)
		switch {
		case err != nil:
			fmt.Fprintln(e.stderr, "veto serve-hooks:", err)
			return ExitDeny
		case !running:
			fmt.Fprintf(e.stdout, "no hook server ran on %s\n", *sock)
		default:
			fmt.Fprintf(e.stdout, "stopped the hook server on %s\n", *sock)
		}
		return ExitAllow
	}
	l, err := hook.Listen(*sock)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve-hooks:", err)
		return ExitDeny
	}
	defer control.Listening("serve-hooks", *sock)() // veto.control refuses the agent's tools there
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	fmt.Fprintf(e.stderr, "veto serve-hooks: listening on %s\n", *sock)
	if err := hook.Serve(ctx, l, hook.Options{Compiler: &lazyCEL{}, Timeout: 2 * time.Second, Postgres: *pg,
		Supervisor: supervisorLine()}, *idle); err != nil {
		fmt.Fprintln(e.stderr, "veto serve-hooks:", err)
		return ExitDeny
	}
	return ExitAllow
}
