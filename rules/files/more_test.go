package files_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/tools"
)

// withCommands hands the file rules a command's paths, as a policy's gate
// does.
func withCommands(t testing.TB, home string) func(*files.Config) {
	cmds, err := command.New(command.Config{Vars: map[string]string{"HOME": home, "TMPDIR": "/tmp", "USER": "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *files.Config) { c.Extractors = []veto.PathExtractor{cmds.Paths()} }
}

func bashIn(w *world, cmd string) veto.Verdict {
	return w.decide("Bash", map[string]any{"command": cmd})
}

// A command's paths meet the file rules, named as the command's; they are
// not the call's target, and a file a command overwrites needs no read
// first (veto cannot tell a command's overwrite from an append).
func TestCommandPathsMeetTheFileRules(t *testing.T) {
	w := newWorld(t, func(c *files.Config) { withCommands(t, c.Home)(c) })
	v := bashIn(w, "cat .env")
	check(t, v, credW)
	if !strings.HasPrefix(v.Message, "A path the command uses") {
		t.Errorf("message %q does not name the command's path", v.Message)
	}
	if v := bashIn(w, "cat src/main.go"); !v.Allowed || v.Target.Kind == veto.TargetFile {
		t.Errorf("a command reading one file: %+v, want allowed and the file not its target", v)
	}
	check(t, bashIn(w, "echo x > README.md"), allow)
	check(t, w.decide("Write", map[string]any{"file_path": "README.md", "content": "x"}), unreadW)
	// An unknown part of a path is tried as each literal segment of the
	// credential patterns: ~/.config/$D/hosts.yml may be gh's.
	v = bashIn(w, "cat ~/.config/$D/hosts.yml")
	if v.Allowed || v.Rule != "file.credential" {
		t.Errorf("a path that may be a credential: %+v", v)
	}
}

// The paths a call reads, for the sequence rules: a command's too.
func TestReadsHoldACommandsFiles(t *testing.T) {
	w := newWorld(t, nil)
	cmds, err := command.New(command.Config{Vars: map[string]string{"HOME": w.home, "TMPDIR": "/tmp"}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := files.New(files.Config{Home: w.home, TempDirs: []string{w.tmp}, Extractors: []veto.PathExtractor{cmds.Paths()}})
	if err != nil {
		t.Fatal(err)
	}
	var bash veto.Descriptor
	for _, d := range tools.Defaults() {
		if d.Name == "Bash" {
			bash = d
		}
	}
	in := &veto.Input{Call: &veto.Call{Tool: "Bash", Args: map[string]any{"command": "cat src/main.go | wc -l"}, Cwd: w.ws}, Descriptor: &bash}
	reads, err := set.Reads(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range reads {
		found = found || r == w.ws+"/src/main.go"
	}
	if !found {
		t.Fatalf("Reads = %q, want %s/src/main.go among them", reads, w.ws)
	}
}

// A call with no cwd is placed in its workspace.
func TestNoCwdIsTheWorkspace(t *testing.T) {
	w := newWorld(t, nil)
	c := w.call("Write", map[string]any{"file_path": "src/new.go", "content": "x"})
	c.Cwd, c.Workspace = "", w.ws
	check(t, w.gate.Decide(ctx, c), allow)
}

// On a filesystem that ignores case, a protected path in other case is
// protected.
func TestFoldCase(t *testing.T) {
	yes := true
	w := newWorld(t, func(c *files.Config) { c.FoldCase = &yes })
	check(t, w.decide("Write", map[string]any{"file_path": "$WS/.GIT/config", "content": "x"}), protectedW)
	no := false
	w = newWorld(t, func(c *files.Config) { c.FoldCase = &no })
	check(t, w.decide("Write", map[string]any{"file_path": "$WS/.GIT/config", "content": "x"}), allow)
}

// A workspace's place is reused for a second by the rules' clock, then
// found again.
func TestWorkspaceFoundAgainAfterASecond(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	w := newWorld(t, func(c *files.Config) { c.Now = func() time.Time { return now } })
	write := func() veto.Verdict {
		c := w.call("Write", map[string]any{"file_path": "$WS/NEW.md", "content": "x"})
		c.Cwd = w.ws + "/src"
		return w.gate.Decide(ctx, c)
	}
	check(t, write(), allow) // the workspace is the git top level
	must(t, os.RemoveAll(w.ws+"/.git"))
	check(t, write(), allow) // the same second: the place found stands
	now = now.Add(2 * time.Second)
	check(t, write(), roots) // no git top level: the workspace is the cwd, src
}

// The files section through a policy's files.
func TestFilesSectionThroughTheFiles(t *testing.T) {
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	l, err := policy.Parse(policy.KindUser, "user.yaml", []byte("files: {extra_roots: [/srv/data], manifest: [go.mod, go.sum]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, l}, c)
	if err != nil {
		t.Fatal(err)
	}
	st := policy.Effective[files.Settings](p, files.FilesSection.Key)
	if strings.Join(st.ExtraRoots, ",") != "/srv/data" || strings.Join(st.Manifest, ",") != "go.mod,go.sum" {
		t.Errorf("settings %+v", st)
	}
	shown := strings.Join(p.Show(), "\n")
	for _, s := range []string{"files.extra_roots: /srv/data ", "files.manifest: go.mod, go.sum "} {
		if !strings.Contains(shown, s) {
			t.Errorf("the explanation does not show %q:\n%s", s, shown)
		}
	}
	if y := policy.DefaultYAML(); !strings.Contains(y, "files:") || !strings.Contains(y, "extra_roots: []") {
		t.Errorf("the default policy file has no files section:\n%s", y)
	}
}

// core.hooksPath in the workspace's git config makes its directory a
// persistence target (comments and blank lines are skipped); the config
// is read again when it changed, once its second by the rules' clock is
// past (a change of size or of modification time).
func TestGitConfigHooksPathIsReadAgainAfterASecond(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	w := newWorld(t, func(c *files.Config) { c.Now = func() time.Time { return now } })
	config := func(body string) { must(t, os.WriteFile(w.ws+"/.git/config", []byte(body), 0o644)) }
	hook := func(dir string) veto.Verdict {
		return w.decide("Write", map[string]any{"file_path": "$WS/" + dir + "/pre-commit", "content": "x"})
	}
	config("[core]\n\n# hooksPath = commented\n; hooksPath = also\n\thooksPath = .githooks\n")
	check(t, hook(".githooks"), persistW)
	check(t, hook("commented"), allow)
	check(t, hook("also"), allow)
	config("[core]\n\thooksPath = elsewhere/hooks\n")
	check(t, hook("elsewhere/hooks"), allow) // the same second: the config read stands
	now = now.Add(2 * time.Second)
	check(t, hook("elsewhere/hooks"), persistW)
	check(t, hook(".githooks"), allow)
	// Another config of the same size: its modification time tells.
	config("[core]\n\thooksPath = elsewhere/other\n")
	must(t, os.Chtimes(w.ws+"/.git/config", now, now))
	now = now.Add(2 * time.Second)
	check(t, hook("elsewhere/other"), persistW)
}

// An undescribed tool's argument with a directory in it is a path, also
// when it is relative: out/x reaches outside the roots through a symlink.
func TestSniffedRelativePathWithADirectory(t *testing.T) {
	w := newWorld(t, nil)
	check(t, w.decide("mcp__other__do", map[string]any{"target": "out/x"}), want{"file.write_roots", "undescribed_outside_roots"})
	check(t, w.decide("mcp__other__do", map[string]any{"target": "src/x"}), allow)
}
