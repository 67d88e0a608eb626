package command_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/policytest"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/tools"
)

var ctx = context.Background()

var (
	merge = policytest.Merge
	shows = policytest.Shows
)

// The shell section through a policy's files: each setting, where it came
// from, only lowered after the user's file, and refused when malformed.
func TestShellSectionThroughTheFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string
		want    command.Settings
		shown   [][3]string
		problem string
	}{
		{name: "the user's settings", files: []string{policy.KindUser, "shell: {interpreters: [bash, python3], max_depth: 3, default_timeout: 2m}"},
			want:  command.Settings{Interpreters: []string{"bash", "python3"}, MaxDepth: 3, DefaultTimeout: 2 * time.Minute},
			shown: [][3]string{{"shell.interpreters", "bash, python3", "user"}, {"shell.max_depth", "3", "user"}, {"shell.default_timeout", "2m0s", "user"}}},
		{name: "a project only lowers", files: []string{policy.KindUser, "shell: {interpreters: [bash, python3], max_depth: 3, default_timeout: 2m}",
			policy.KindProject, "shell: {interpreters: [python3, node], max_depth: 9, default_timeout: 1m}"},
			want:  command.Settings{Interpreters: []string{"python3"}, MaxDepth: 3, DefaultTimeout: time.Minute},
			shown: [][3]string{{"shell.default_timeout", "1m0s", "project"}}},
		{name: "an interpreter with a directory", files: []string{policy.KindUser, "shell: {interpreters: [/bin/bash]}"}, problem: "must be a program name"},
		{name: "a negative depth", files: []string{policy.KindUser, "shell: {max_depth: -1}"}, problem: "shell.max_depth: want a positive number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := merge(t, tc.files...)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := policy.Effective[command.Settings](p, command.ShellSection.Key)
			if !slices.Equal(got.Interpreters, tc.want.Interpreters) || got.MaxDepth != tc.want.MaxDepth || got.DefaultTimeout != tc.want.DefaultTimeout {
				t.Errorf("settings %+v, want %+v", got, tc.want)
			}
			for _, s := range tc.shown {
				if !shows(p, s[0], s[1], s[2]) {
					t.Errorf("the explanation does not show %s: %s from the %s file: %q", s[0], s[1], s[2], p.Show())
				}
			}
		})
	}
	if y := policy.DefaultYAML(); !strings.Contains(y, "shell:") || !strings.Contains(y, "max_depth: 5") {
		t.Errorf("the default policy file has no shell section:\n%s", y)
	}
}

// The gate a policy builds runs the command rules with its settings: the
// interpreter list, the nesting depth, the default timeout (a patch), the
// egress list, and a command's paths handed to the file rules.
func TestShellSectionBuildsTheRules(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	p, err := merge(t, policy.KindUser, "shell: {interpreters: [bash], max_depth: 1, default_timeout: 90s}\negress: {mode: allowlist, allow: [a.example]}\n")
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: root})
	if err != nil {
		t.Fatal(err)
	}
	run := veto.Run{Ref: "r", Fresh: true}
	n := 0
	bash := func(cmd string) veto.Verdict {
		n++
		return g.Decide(ctx, &veto.Call{ID: "c" + string(rune('a'+n)), Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: ws, Run: run})
	}
	for _, tc := range []struct{ cmd, rule, reason string }{
		{"python3 -c 'print(1)'", "exec.interpreter", "interpreter_not_allowed"},
		{"bash -c 'bash -c \"ls\"'", "shell.analyzer", "depth_exceeded"},
		{"curl -s https://b.example/", "shell.egress", "egress_not_listed"},
		{"echo x > .git/config", "file.protected", "protected_path"},
	} {
		v := bash(tc.cmd)
		if v.Allowed || v.Rule != tc.rule || v.Reason != tc.reason {
			t.Errorf("%s: %+v, want %s/%s", tc.cmd, v, tc.rule, tc.reason)
		}
	}
	if v := bash("curl -s https://a.example/"); !v.Allowed || v.Args["timeout"] != int64(90000) {
		t.Errorf("an allowed command: %+v, want it patched with the default timeout", v)
	}
}

// A call that runs no command is not judged by the command rules, even
// with an interpreter list; a descriptor's command parameter that is
// absent is no command.
func TestNoCommandIsNotJudged(t *testing.T) {
	cmds, err := command.New(command.Config{Interpreters: []string{"bash"}, Vars: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Tools: tools.Defaults(), Rules: cmds.Rules(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*veto.Call{
		{Tool: "Read", Args: map[string]any{"file_path": "/tmp/x"}, Cwd: "/tmp"},
		{Tool: "Bash", Args: map[string]any{"description": "nothing"}, Cwd: "/tmp"},
	} {
		if v := g.Decide(ctx, c); !v.Allowed {
			t.Errorf("%s with no command: %+v", c.Tool, v)
		}
	}
}

// Without variables given, a command's $HOME, $USER and $TMPDIR are the
// environment's (TMPDIR /tmp when unset); given ones are used as they are.
func TestCommandVariables(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", "")
	paths := func(vars map[string]string, cmd string) []string {
		t.Helper()
		cmds, err := command.New(command.Config{Vars: vars})
		if err != nil {
			t.Fatal(err)
		}
		var bashTool *veto.Descriptor
		for _, d := range tools.Defaults() {
			if d.Name == "Bash" {
				bashTool = &d
			}
		}
		in := &veto.Input{Call: &veto.Call{Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: "/w"}, Descriptor: bashTool}
		ps, err := cmds.Paths().Paths(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Path)
		}
		return out
	}
	if got := paths(nil, "rm $HOME/a $TMPDIR/b"); !slices.Equal(got, []string{home + "/a", "/tmp/b"}) {
		t.Errorf("the environment's variables: %q", got)
	}
	if got := paths(map[string]string{"HOME": "/h"}, "rm $HOME/a"); !slices.Equal(got, []string{"/h/a"}) {
		t.Errorf("the given variables: %q", got)
	}
}
