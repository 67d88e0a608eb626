package agent_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// The one denial sentence, for every client and the MCP gateway: a
// question tells the model to wait for the person and make the same call
// again; a denial names its rule, reason, tool denial and policy hint and
// says not to retry.
func TestReason(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v        veto.Verdict
		want     []string
		wantNone []string
	}{
		{"question", veto.Verdict{Ask: true, Tool: "Bash", Stage: veto.StageRule, Rule: "deploy-needs-person", Reason: "deploy_needs_person",
			Message: "A deploy needs a person's approval.", Advice: veto.Advice{Instead: veto.AskAdvice}},
			[]string{"veto blocked this Bash call until a person approves it (rule deploy-needs-person, reason deploy_needs_person)", "veto's page", "make the same call again"},
			[]string{"Do not retry"}},
		{"rule denial", veto.Verdict{Tool: "Bash", Stage: veto.StageRule, Rule: "shell.analyzer", Reason: "git_destructive", Message: "It discards work."},
			[]string{"veto blocked this Bash call (rule shell.analyzer, reason git_destructive): It discards work. Do not retry it or work around it; ask the user to do it, or to change veto's policy (the rule shell.analyzer)."},
			[]string{"until a person", "["}},
		{"tool denial", veto.Verdict{Tool: "mcp__x__y", Stage: veto.StageOffer, Reason: veto.ReasonToolDenied, ToolDenial: "not_offered",
			Message: "This tool is not offered.", Advice: veto.Advice{Policy: "offer"}},
			[]string{"veto blocked this mcp__x__y call (tool_denied) [not_offered]: This tool is not offered.", "change veto's policy (offer)."},
			nil},
		{"state", veto.Verdict{Tool: "Read", Stage: veto.StageState, Reason: veto.ReasonStateUnavailable, Message: "veto could not load this run's history, so the call is refused."},
			[]string{"(state_unavailable): veto could not load", "ask the user how to proceed."}, []string{"["}},
	} {
		got := agent.Reason(tc.v)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.wantNone {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q holds %q", tc.name, got, w)
			}
		}
	}
}
