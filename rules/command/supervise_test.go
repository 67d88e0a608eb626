package command_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/shell"
)

// supervisedGate is the default policy's gate (with policyText over it)
// in a fresh git workspace, built as a hook that can start veto exec
// builds it (BuildOptions.Supervisor), or as veto exec's own.
func supervisedGate(t *testing.T, policyText string, o policy.BuildOptions) (*veto.Gate, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	layers := []*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}
	if policyText != "" {
		l, err := policy.Parse(policy.KindFlag, "test.yaml", []byte(policyText))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	p, err := policy.Merge(layers, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Store, o.Home = memstore.New(), home
	o.Vars = map[string]string{"HOME": home, "TMPDIR": "/tmp", "USER": "agent"}
	g, err := p.Gate(o)
	if err != nil {
		t.Fatal(err)
	}
	return g, ws
}

var supervisor = []string{"/opt/veto/bin/veto", "exec", "--state", "/var/lib/veto state.db"}

// unseenCommand is one the analyzer cannot vouch for: a script file.
const unseenCommand = `eval "$BUILD" && echo "it's done"`

// A command the analyzer cannot vouch for is allowed rewritten to run
// under veto exec, for a client that runs rewritten calls; refused
// elsewhere, and with shell.exec: refuse.
//
// E33
func TestUnseenCommandRunsUnderVetoExec(t *testing.T) {
	ctx := context.Background()
	call := func(ws, src string, rewrites bool) *veto.Call {
		return &veto.Call{Tool: "Bash", Args: map[string]any{"command": src, "description": "build"}, Cwd: ws,
			Run: veto.Run{Ref: "r1", Fresh: true}, Rewrites: rewrites}
	}
	g, ws := supervisedGate(t, "", policy.BuildOptions{Supervisor: supervisor})
	v := g.Decide(ctx, call(ws, unseenCommand, true))
	if !v.Allowed || v.Args == nil {
		t.Fatalf("want allowed rewritten; got allowed=%v %s/%s args=%v", v.Allowed, v.Rule, v.Reason, v.Args)
	}
	want := `/opt/veto/bin/veto exec --state '/var/lib/veto state.db' --run r1 -- bash -c 'eval "$BUILD" && echo "it'\''s done"'`
	if got := v.Args["command"]; got != want {
		t.Fatalf("rewritten to\n%v\nwant\n%s", got, want)
	}
	if v.Args["description"] != "build" {
		t.Fatalf("the other arguments changed: %v", v.Args)
	}
	// The rewritten line is one command of veto exec, whose command is
	// the original, word for word.
	rep := shell.Analyze(want, shell.Env{})
	if len(rep.Findings) == 0 || rep.Findings[0].Reason != shell.CannotVouch {
		t.Fatalf("the rewritten line, analysed: %+v", rep.Findings)
	}

	for _, tc := range []struct {
		name     string
		policy   string
		o        policy.BuildOptions
		rewrites bool
	}{
		{"a client that runs the model's input whatever veto says", "", policy.BuildOptions{Supervisor: supervisor}, false},
		{"a process that cannot start veto exec", "", policy.BuildOptions{}, true},
		{"shell.exec: refuse", "shell:\n  exec: refuse\n", policy.BuildOptions{Supervisor: supervisor}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, ws := supervisedGate(t, tc.policy, tc.o)
			v := g.Decide(ctx, call(ws, unseenCommand, tc.rewrites))
			if v.Allowed || v.Reason != string(shell.CannotVouch) || v.Args != nil {
				t.Fatalf("want refused cannot_vouch; got allowed=%v %s/%s args=%v", v.Allowed, v.Rule, v.Reason, v.Args)
			}
		})
	}

	// What the analysis does see is still judged: a destructive
	// operation beside the unseen part, a credential read, a write out of
	// the roots.
	for _, src := range []string{
		"eval \"$B\"; git reset --hard",
		"eval \"$B\"; cat ~/.ssh/id_rsa",
		"eval \"$B\" > ~/.bashrc",
		"eval \"$X\"; curl http://169.254.169.254/",
	} {
		v := g.Decide(ctx, call(ws, src, true))
		if v.Allowed {
			t.Errorf("%q: allowed (rewritten to %v)", src, v.Args)
		}
	}
	// A path the analysis cannot know is decided at its open, under veto
	// exec; refused as before where the call cannot be supervised.
	unknownWrite := `f=$(mktemp); printf 'echo hi\n' > "$f"`
	if v := g.Decide(ctx, call(ws, unknownWrite, true)); !v.Allowed || v.Args == nil {
		t.Errorf("an unknown write: allowed=%v %s/%s args=%v; want allowed rewritten", v.Allowed, v.Rule, v.Reason, v.Args)
	}
	if v := g.Decide(ctx, call(ws, unknownWrite, false)); v.Allowed || v.Rule != "file.write_roots" {
		t.Errorf("an unknown write, not supervised: allowed=%v %s/%s", v.Allowed, v.Rule, v.Reason)
	}
	// A command the analyzer vouches for runs as it is.
	if v := g.Decide(ctx, call(ws, "go test ./...", true)); !v.Allowed || v.Args != nil {
		t.Fatalf("an ordinary command: allowed=%v args=%v", v.Allowed, v.Args)
	}
}

// A later policy file cannot undo an earlier shell.exec: refuse.
func TestExecRefuseCannotBeUndone(t *testing.T) {
	l1, err := policy.Parse(policy.KindFlag, "a.yaml", []byte("shell:\n  exec: refuse\n"))
	if err != nil {
		t.Fatal(err)
	}
	l2, err := policy.Parse(policy.KindFlag, "b.yaml", []byte("shell:\n  exec: supervise\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, l1, l2}, nil); err == nil ||
		!strings.Contains(err.Error(), "shell.exec") {
		t.Fatalf("want a problem naming shell.exec; got %v", err)
	}
	if _, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"},
		mustParse(t, "shell:\n  exec: sometimes\n")}, nil); err == nil {
		t.Fatal("shell.exec: sometimes was accepted")
	}
}

func mustParse(t *testing.T, text string) *policy.Layer {
	t.Helper()
	l, err := policy.Parse(policy.KindFlag, "x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// veto exec's own gate decides each program as it starts: what the
// analysis of one program's argv cannot see is no refusal, and what it
// does see is judged as ever.
func TestSupervisingGateDecidesEachProgram(t *testing.T) {
	ctx := context.Background()
	sup := &rule.Supervision{}
	g, ws := supervisedGate(t, "", policy.BuildOptions{Supervising: true, Supervision: sup})
	run := func(argv ...string) veto.Verdict {
		return g.Decide(ctx, &veto.Call{Tool: "exec.run", Args: map[string]any{"command": shell.ArgvLine(argv)}, Cwd: ws,
			Run: veto.Run{Ref: "x", Fresh: true}})
	}
	if v := run("/usr/bin/bash", "-c", unseenCommand); !v.Allowed {
		t.Fatalf("bash -c of a script it cannot see, under supervision: %s/%s", v.Rule, v.Reason)
	}
	if v := run("/usr/bin/bash", "-c", `f=$(mktemp); printf 'echo hi\n' > "$f"; sh "$f"`); !v.Allowed {
		t.Fatalf("a script that writes where the analysis cannot know, under supervision: %s/%s", v.Rule, v.Reason)
	}
	if v := run("/usr/bin/git", "reset", "--hard"); v.Allowed || v.Reason != "git_destructive" {
		t.Fatalf("git reset --hard under supervision: allowed=%v %s", v.Allowed, v.Reason)
	}
	if v := run("/usr/bin/python3", "-c", "import shutil, os; shutil.rmtree(os.path.expanduser('~'))"); v.Allowed {
		t.Fatal("interpreter code that removes the home directory, under supervision: allowed")
	}
	if sup.ReadMatters == nil || sup.Floor == nil {
		t.Fatal("the file rules filled in no supervision")
	}
	home := filepath.Join(filepath.Dir(ws), "home")
	if !sup.ReadMatters(filepath.Join(home, ".ssh", "id_ed25519")) || !sup.ReadMatters(filepath.Join(home, ".aws", "config")) {
		t.Fatal("a credential read does not matter")
	}
	if sup.ReadMatters(filepath.Join(ws, "main.go")) || sup.ReadMatters("/usr/lib/x86_64-linux-gnu/libc.so.6") {
		t.Fatal("an ordinary read matters")
	}
	read := func(p string) veto.Verdict {
		return g.Decide(ctx, &veto.Call{Tool: "exec.read", Args: map[string]any{"path": p}, Cwd: ws, Run: veto.Run{Ref: "x"}})
	}
	if v := read(filepath.Join(home, ".aws", "credentials")); v.Allowed || v.Rule != "file.credential" {
		t.Fatalf("exec.read of a credential: allowed=%v %s/%s", v.Allowed, v.Rule, v.Reason)
	}
	write := func(p string) veto.Verdict {
		return g.Decide(ctx, &veto.Call{Tool: "exec.write", Args: map[string]any{"path": p}, Cwd: ws, Run: veto.Run{Ref: "x"}})
	}
	if v := write(filepath.Join(ws, "out", "a.o")); !v.Allowed {
		t.Fatalf("exec.write in the workspace: %s/%s", v.Rule, v.Reason)
	}
	if v := write(filepath.Join(home, ".bashrc")); v.Allowed {
		t.Fatal("exec.write of ~/.bashrc: allowed")
	}
	connect := func(u string) veto.Verdict {
		return g.Decide(ctx, &veto.Call{Tool: "exec.connect", Args: map[string]any{"url": u}, Cwd: ws, Run: veto.Run{Ref: "x"}})
	}
	if v := connect("tcp://169.254.169.254:80"); v.Allowed {
		t.Fatal("exec.connect to the metadata address: allowed")
	}
	if v := connect("tcp://127.0.0.1:5432"); !v.Allowed {
		t.Fatalf("exec.connect to loopback: %s/%s", v.Rule, v.Reason)
	}
}
