package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vetohq/veto/export"
)

const logStreamDescription = `Export the decision log to what watches the fleet, as veto serve --export-… does, without
a service: JSON Lines to a file (rotated) or stdout, RFC 5424 syslog over TCP or UDP. It runs
until interrupted, at least once: each sink's cursor is kept in the state's database and moves
only after the sink accepted what came before (docs/serve.md#export).

  veto log stream [--state FILE | --postgres DSN] --export-jsonl FILE|- [--export-rotate 64MB --export-keep 5]
                  [--export-syslog tcp://HOST:PORT] [--export-all] [--export-name NAME]`

// runLogStream is veto log stream.
func runLogStream(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "log stream", "[--state FILE | --postgres DSN] --export-jsonl FILE|- | --export-syslog URL [flags]", logStreamDescription)
	file := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	dsn := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	flags := export.AddFlags(fs)
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto log stream: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	const deadline = 2 * time.Second // the service's default: its decisions commit within it
	if err := flags.Check(deadline); err != nil {
		fmt.Fprintln(e.stderr, "veto log stream:", err)
		return ExitUsage
	}
	if !flags.Any() {
		fmt.Fprintln(e.stderr, "veto log stream: name a sink: --export-jsonl FILE|- or --export-syslog URL")
		return ExitUsage
	}
	st, err := openServiceState(ctx, *file, *dsn, false)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto log stream: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	running, err := flags.Start(ctx, export.Source{Log: st.log, Acquire: st.acquire, DB: st.db, Dialect: st.dialect, Deadline: deadline})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto log stream:", err)
		return ExitUsage
	}
	fmt.Fprintln(e.stderr, "veto log stream: exporting; interrupt to stop")
	<-ctx.Done()
	running.Stop()
	return ExitAllow
}
