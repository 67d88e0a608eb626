package cli

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/vetohq/veto/hook"
)

const serveDescription = `Answer veto-hook's events from a long-lived process that keeps the state open.

  veto serve-hooks [--socket PATH] [--idle 30m]

veto-hook asks the server at $VETO_SOCKET (else $XDG_RUNTIME_DIR/veto/hook.sock, else
$TMPDIR/veto-UID/hook.sock) and hands the event to veto hook when no server runs there, when it
does not answer in time, or when it was started under other settings (HOME, XDG_CONFIG_HOME,
XDG_STATE_HOME, TMPDIR, USER, VETO_MANAGED_POLICY, VETO_STATE). When no server runs, veto-hook
starts one (--idle 30m); VETO_NO_SERVER=1 stops it asking or starting one. Every answer fails
closed. The socket's directory is made private to this user; one server per socket (it holds
SOCKET.lock), and a server whose socket is removed exits.`

func runServeHooks(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve-hooks", "[--socket PATH] [--idle 30m]", serveDescription)
	sock := fs.String("socket", hook.SocketPath(), "the Unix socket to listen on")
	idle := fs.Duration("idle", 0, "exit after this long without a request (0: never)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto serve-hooks: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	l, err := hook.Listen(*sock)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto serve-hooks:", err)
		return ExitDeny
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(e.stderr, "veto serve-hooks: listening on %s\n", *sock)
	if err := hook.Serve(ctx, l, hook.Options{Compiler: &lazyCEL{}, Timeout: 2 * time.Second}, *idle); err != nil {
		fmt.Fprintln(e.stderr, "veto serve-hooks:", err)
		return ExitDeny
	}
	return ExitAllow
}
