package command_test

import (
	"context"
	"testing"

	"github.com/vetohq/veto"
)

// A command argument in another letter case is the command (issue 27: a
// tool that reads "COMMAND" as its command, as Go's encoding/json does,
// ran what veto never judged), and a call that spells it twice has both
// judged: the tool runs one, veto cannot tell which.
func TestCommandArgumentInAnyCase(t *testing.T) {
	g, ws := gate(t)
	const bad = "git reset --hard HEAD~1"
	for _, tc := range []struct {
		name         string
		args         map[string]any
		rule, reason string // empty: allowed
	}{
		{"upper", map[string]any{"COMMAND": bad}, an, "git_destructive"},
		{"mixed", map[string]any{"Command": bad}, an, "git_destructive"},
		{"twice, the second bad", map[string]any{"command": "git status", "Command": bad}, an, "git_destructive"},
		{"twice, the first bad", map[string]any{"COMMAND": bad, "command": "git status"}, an, "git_destructive"},
		{"env dump in another case", map[string]any{"cOMMAND": "printenv"}, dump, "env_dump"},
		{"twice, one not text", map[string]any{"command": "git status", "COMMAND": 7}, an, "command_not_text"},
		{"upper, harmless", map[string]any{"COMMAND": "git status"}, "", ""},
		{"twice, both harmless", map[string]any{"command": "git status", "Command": "ls"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := g.Decide(context.Background(), &veto.Call{Tool: "Bash", Args: tc.args, Cwd: ws, Run: veto.Run{Ref: "argcase", Fresh: true}})
			if tc.rule == "" {
				if !v.Allowed {
					t.Fatalf("denied by %s/%s (%s); want allow", v.Rule, v.Reason, v.Message)
				}
				return
			}
			if v.Allowed || v.Rule != tc.rule || v.Reason != tc.reason {
				t.Fatalf("allowed=%v %s/%s (%s); want %s/%s", v.Allowed, v.Rule, v.Reason, v.Message, tc.rule, tc.reason)
			}
		})
	}
}
