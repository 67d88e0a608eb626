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
//
// Scripts may use "expand IN OUT" to write IN with $VARS replaced by the
// script's environment ($WORK, say) into OUT, for JSON that names paths.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expand": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: expand IN OUT")
				}
				out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
			},
		},
	})
}
