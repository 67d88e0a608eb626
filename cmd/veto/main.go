// Command veto decides whether an AI agent's tool call may run.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/vetohq/veto/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
