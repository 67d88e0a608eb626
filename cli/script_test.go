package cli_test

import (
	"context"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/hook/wire"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"veto": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"veto-hook": func() {
			os.Exit(wire.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the txtar scripts in testdata/script: one per command
// or behaviour, each feeding veto real input and comparing its output.
//
// Scripts may use "expand IN OUT" to write IN with $VARS replaced by the
// script's environment ($WORK, say) into OUT, for JSON that names paths.
var updateScripts = flag.Bool("update", false, "rewrite the scripts' cmp files from what the commands print")

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *updateScripts,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// Only the policy files a script makes apply.
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/.config")
			env.Setenv("VETO_MANAGED_POLICY", env.WorkDir+"/no-managed-policy.yaml")
			// veto-hook answers through veto hook, and starts no server,
			// unless a script says otherwise.
			env.Setenv("VETO_NO_SERVER", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expand": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: expand IN OUT")
				}
				out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
			},
			// "unrunnable PATH" writes the first 64 KiB of veto at PATH, not
			// executable: a file of veto's build (wire.BuildOf) that cannot
			// be run.
			"unrunnable": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: unrunnable PATH")
				}
				self, err := os.Executable()
				ts.Check(err)
				b, err := os.ReadFile(self)
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), b[:64<<10], 0o644))
			},
			// "capture NAME FILE REGEXP" sets $NAME to the first group of
			// REGEXP in FILE (stdout, stderr or a file): an id a command
			// printed, for the next command to name.
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 3 {
					ts.Fatalf("usage: capture NAME FILE REGEXP")
				}
				m := regexp.MustCompile(args[2]).FindStringSubmatch(ts.ReadFile(args[1]))
				if len(m) < 2 {
					ts.Fatalf("capture: %s holds no match of %s", args[1], args[2])
				}
				ts.Setenv(args[0], m[1])
			},
			// "waitfor PATH" waits up to 10 s for PATH to exist (a server's
			// socket, say).
			"waitfor": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitfor PATH")
				}
				for i := 0; i < 200; i++ {
					if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				ts.Fatalf("%s did not appear in 10 s", args[0])
			},
		},
	})
}

// TestPolicyCases runs the repository's policy test cases, as CI's
// "veto test testdata/policies" does.
func TestPolicyCases(t *testing.T) {
	var out, errOut strings.Builder
	code := cli.Main(context.Background(), []string{"test", "../testdata/policies"}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitAllow {
		t.Fatalf("veto test: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), " 0 failed") {
		t.Fatalf("unexpected output: %s", out.String())
	}
}
