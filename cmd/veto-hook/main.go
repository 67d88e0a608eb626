// Command veto-hook is veto's lean hook program: veto hook CLIENT without
// CEL and PostgreSQL linked, so that it costs less on every tool call.
// veto init registers it when it is installed next to veto.
package main

import (
	"os"

	"github.com/vetohq/veto/hook"
)

func main() { os.Exit(hook.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
