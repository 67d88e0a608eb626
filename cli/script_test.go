package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/vetohq/veto/supervise"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/presence/presencetest"
)

func TestMain(m *testing.M) {
	// veto exec's supervised child, when this test binary is one.
	supervise.Child()
	testscript.Main(m, map[string]func(){
		"veto": func() {
			if len(os.Args) > 1 && os.Args[1] == "hook" {
				underClient()
			}
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"veto-hook": func() {
			underClient()
			os.Exit(wire.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"agent-shell": agentShell,
		"agent-client": func() {
			cmd := exec.Command(os.Args[1], os.Args[2:]...)
			cmd.Env = append(os.Environ(), underClientEnv+"=1")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			exitAs(cmd)
		},
	})
}

// underClientEnv tells the test binary that a hook program already runs
// under a stand-in client (a variable of this test binary, not veto's).
const underClientEnv = "CLI_TEST_UNDER_CLIENT"

// underClient runs this hook program again under agent-client, a
// stand-in for the agent client, and exits with its code, unless it runs
// under one already. The hook notes the client that runs it as guarded
// (presence): the stand-in is noted, and gone when the hook returns,
// never the test binary, which answers as a person (the person command).
func underClient() {
	if os.Getenv(underClientEnv) != "" {
		return
	}
	cmd := exec.Command("agent-client", os.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	exitAs(cmd)
}

// exitAs runs cmd, killed when this process dies (a script that kills
// the hook kills what runs under the stand-in), and exits with its code:
// 127 when it could not run.
func exitAs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	} else if err != nil {
		os.Exit(127)
	}
	os.Exit(0)
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
			// "person [-code WRONG] PROGRAM ARGS..." runs PROGRAM as a person
			// does: on a pseudo-terminal whose master this test holds, typing
			// the code its prompt shows (or WRONG). The terminal, stdout and
			// stderr are in the files person.screen, person.stdout and
			// person.stderr; it fails when PROGRAM fails (! person: when it
			// does not).
			"person": func(ts *testscript.TestScript, neg bool, args []string) {
				wrong := ""
				if len(args) > 1 && args[0] == "-code" {
					wrong, args = args[1], args[2:]
				}
				if len(args) == 0 {
					ts.Fatalf("usage: person [-code WRONG] PROGRAM ARGS...")
				}
				prog := lookIn(ts.Getenv("PATH"), args[0])
				cmd := exec.Command(prog, args[1:]...)
				cmd.Dir = ts.MkAbs(".")
				cmd.Env = scriptEnv(ts)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				screen, code, err := presencetest.Run(cmd, func(c string) string {
					if wrong != "" {
						return wrong
					}
					return c
				})
				ts.Check(os.WriteFile(ts.MkAbs("person.screen"), []byte(screen), 0o644))
				ts.Check(os.WriteFile(ts.MkAbs("person.stdout"), []byte(stdout.String()), 0o644))
				ts.Check(os.WriteFile(ts.MkAbs("person.stderr"), []byte(stderr.String()), 0o644))
				ts.Check(err)
				if (code != 0) != neg {
					ts.Fatalf("person %s: exit %d\nstderr: %s\nscreen: %s", strings.Join(args, " "), code, stderr.String(), screen)
				}
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
			// "timeouts FILE SECONDS" sets every hook entry's timeout in the
			// client settings FILE (a "timeout" or "timeoutSec" number) to
			// SECONDS: for scripts about what doctor reads in the entries, not
			// how fast the hook answers. Under the race detector on a loaded
			// machine, veto-hook (three starts of this test binary, through
			// the stand-in client) has taken past the 5 s veto init writes.
			"timeouts": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: timeouts FILE SECONDS")
				}
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				var doc any
				ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
				if setTimeouts(doc, n) == 0 {
					ts.Fatalf("%s holds no hook timeout", args[0])
				}
				b, err := json.MarshalIndent(doc, "", "  ")
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
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

// setTimeouts sets each "timeout" or "timeoutSec" number in v to n and
// says how many it set.
func setTimeouts(v any, n int) int {
	set := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if _, num := x.(float64); num && (k == "timeout" || k == "timeoutSec") {
				v[k] = n
				set++
				continue
			}
			set += setTimeouts(x, n)
		}
	case []any:
		for _, x := range v {
			set += setTimeouts(x, n)
		}
	}
	return set
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

// lookIn finds program in the directories of path, the script's PATH.
func lookIn(path, program string) string {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return program
}

// scriptEnv is the script's environment, as exec gives it to a program.
func scriptEnv(ts *testscript.TestScript) []string {
	keys := map[string]bool{}
	for _, k := range []string{"WORK", "HOME", "TMPDIR", "PATH", "USER", "GOTRACEBACK", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
		"XDG_RUNTIME_DIR", "VETO_STATE", "VETO_POSTGRES", "VETO_MANAGED_POLICY", "VETO_NO_SERVER", "VETO_SOCKET", "CLAUDE_PROJECT_DIR"} {
		keys[k] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	var env []string
	for k := range keys {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// agentShell is "agent-shell HOOK... -- COMMAND...": a guarded agent
// client and its shell. It runs the hook (noted as its client, as a real
// client's hook notes it), then the agent's COMMAND, reading what COMMAND
// shows and typing back every code a prompt shows: the agent trying to
// answer for the person. It prints both outputs and exits with
// COMMAND's code.
func agentShell() {
	args := os.Args[1:]
	i := slices.Index(args, "--")
	if i < 1 || i == len(args)-1 {
		fmt.Fprintln(os.Stderr, "usage: agent-shell HOOK... -- COMMAND...")
		os.Exit(2)
	}
	hook := exec.Command(args[0], args[1:i]...)
	hook.Env = append(os.Environ(), underClientEnv+"=1")
	hook.Stdin, hook.Stdout, hook.Stderr = os.Stdin, os.Stdout, os.Stderr
	hook.Run()
	cmd := exec.Command(args[i+1], args[i+2:]...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stdout
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-shell:", err)
		os.Exit(127)
	}
	var seen bytes.Buffer
	buf := make([]byte, 1024)
	for {
		n, err := out.Read(buf)
		os.Stdout.Write(buf[:n])
		seen.Write(buf[:n])
		if m := presencetest.CodeRE.FindSubmatch(seen.Bytes()); m != nil {
			fmt.Fprintf(in, "%s\r", m[1])
			seen.Reset()
		}
		if err != nil {
			break
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	} else if err != nil {
		os.Exit(127)
	}
	os.Exit(0)
}
