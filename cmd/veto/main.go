// Command veto decides whether an AI agent's tool call may run.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/supervise"
)

func main() {
	// veto exec's supervised child: it installs its filters and becomes
	// the command, never returning here.
	supervise.Child()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
