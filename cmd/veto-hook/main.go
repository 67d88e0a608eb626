// Command veto-hook is the program veto init registers with an agent
// client: it links the standard library only and asks the hook server
// (veto serve-hooks, started on demand) to answer, handing the event to
// veto hook CLIENT whenever the server does not. See package wire.
package main

import (
	"os"

	"github.com/vetohq/veto/hook/wire"
)

func main() { os.Exit(wire.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
