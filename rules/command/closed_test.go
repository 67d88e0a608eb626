package command_test

import (
	"path/filepath"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/tools"
)

// Under an allowlist, a command that reaches no host is allowed by
// shell.egress without reading the run's allow-list (from a real store,
// closed since the run was loaded); one that reaches a host needs it.
func TestCommandReachingNoHostNeedsNoAllowList(t *testing.T) {
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Tools: tools.Defaults(), Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Decide(ctx, &veto.Call{ID: "a", Tool: "Grep", Args: map[string]any{"pattern": "x"}, Cwd: "/w", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed {
		t.Fatal(v)
	}
	st, err := s.Load(ctx, "r")
	if err != nil || st.Knowledge == nil {
		t.Fatal(st, err)
	}
	s.Close()
	cmds, err := command.New(command.Config{Vars: map[string]string{}, Egress: egress.Policy{Mode: egress.Allowlist}})
	if err != nil {
		t.Fatal(err)
	}
	var shellEgress veto.Rule
	for _, r := range cmds.Rules() {
		if r.Info().ID == "shell.egress" {
			shellEgress = r
		}
	}
	var bashTool *veto.Descriptor
	for _, d := range tools.Defaults() {
		if d.Name == "Bash" {
			bashTool = &d
		}
	}
	check := func(cmd string) (veto.Decision, error) {
		in := &veto.Input{Call: &veto.Call{Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: "/w"}, Descriptor: bashTool, Knowledge: st.Knowledge}
		return shellEgress.Check(ctx, in)
	}
	if d, err := check("ls -la"); err != nil || d.Denied() {
		t.Fatalf("a command reaching no host: %+v %v", d, err)
	}
	if d, err := check("curl -s https://a.example/"); err == nil {
		t.Fatalf("a host with an unreadable allow-list: %+v, want an error", d)
	}
}
