package claudecode_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/claudecode"
)

// A question's reason tells the model to wait for the person and then
// make the same call again, never to work around it.
func TestReasonOfAQuestion(t *testing.T) {
	v := veto.Verdict{Ask: true, Tool: "Bash", Stage: veto.StageRule, Rule: "deploy-needs-person", Reason: "deploy_needs_person",
		Message: "A deploy needs a person's approval.", Advice: veto.Advice{Instead: veto.AskAdvice}}
	got := claudecode.Reason(v)
	for _, want := range []string{"until a person approves it", "deploy_needs_person", "veto's page", "make the same call again"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Do not retry") {
		t.Fatalf("a question says not to retry: %q", got)
	}
	v.Ask = false
	if !strings.Contains(claudecode.Reason(v), "Do not retry it") {
		t.Fatal("a denial no longer says not to retry")
	}
}
