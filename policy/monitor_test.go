package policy_test

import (
	"context"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
)

// Monitor mode from the files: the user's file may put a family, a rule or
// the whole policy in monitor mode, and any file its own CEL rule; the
// monitored refusal lets the call run and is recorded as would_deny, while
// veto.control (veto's own switches) stays enforced whatever the mode.
func TestMonitorModeFromFiles(t *testing.T) {
	ctx := context.Background()
	write := func(body string) string { return write(t, t.TempDir(), "veto.yaml", body) }
	bash := func(cmd string) *veto.Call {
		return &veto.Call{Tool: "Bash", Args: map[string]any{"command": cmd}, Run: veto.Run{Ref: "r-" + cmd[:4], Fresh: true},
			Cwd: "/work/project", Workspace: "/work/project"}
	}
	cases := []struct {
		name        string
		opts        func() policy.LoadOptions
		call        *veto.Call
		allowed     bool
		rule, would string
	}{
		{"own rule monitored in a project file", func() policy.LoadOptions {
			return policy.LoadOptions{ProjectPath: write("rules:\n  - id: org.watch\n    deny: 'tool == \"Bash\"'\n    reason: watched\n    mode: monitor\n")}
		}, bash("echo hi"), true, "", "org.watch"},
		{"own rule enforced", func() policy.LoadOptions {
			return policy.LoadOptions{ProjectPath: write("rules:\n  - id: org.watch\n    deny: 'tool == \"Bash\"'\n    reason: watched\n")}
		}, bash("echo hi"), false, "org.watch", ""},
		{"family monitored by the user", func() policy.LoadOptions {
			return policy.LoadOptions{UserPath: write("monitor: [command]\n")}
		}, bash("sudo true"), true, "", "shell.privilege"},
		{"family enforced", func() policy.LoadOptions { return policy.LoadOptions{} }, bash("sudo true"), false, "shell.privilege", ""},
		{"whole policy monitored", func() policy.LoadOptions {
			return policy.LoadOptions{UserPath: write("mode: monitor\n")}
		}, bash("sudo true"), true, "", "shell.privilege"},
		{"veto.control enforced in monitor mode", func() policy.LoadOptions {
			return policy.LoadOptions{UserPath: write("mode: monitor\n")}
		}, bash("veto uninstall claude-code"), false, "veto.control", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts()
			o.Compiler = compiler(t)
			p, err := policy.Load(o)
			if err != nil {
				t.Fatal(err)
			}
			g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: "/home/u"})
			if err != nil {
				t.Fatal(err)
			}
			v := g.Decide(ctx, tc.call)
			if v.Allowed != tc.allowed || v.Rule != tc.rule || v.WouldDeny != tc.would {
				t.Fatalf("allowed=%v rule=%q would=%q (%s), want %v %q %q", v.Allowed, v.Rule, v.WouldDeny, v.Message, tc.allowed, tc.rule, tc.would)
			}
		})
	}
}
