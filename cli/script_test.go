package cli_test

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vetohq/veto/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"veto": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the txtar scripts in testdata/script: one per command
// or behaviour, each feeding veto real input and comparing its output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", RequireExplicitExec: true})
}
