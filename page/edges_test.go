package page_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPageKnowsNoRuleFamily: the page imports no rule family (rules/…):
// what a family wants shown reaches it as structured fields of verdicts,
// events and explanations (veto.Taint), never by the family's package or
// its prose. Its own imports only: the what-if compiles a policy, and
// policy links the built-in families.
func TestPageKnowsNoRuleFamily(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/vetohq/veto/page").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if !slices.Contains(imports, "github.com/vetohq/veto/server") {
		t.Fatalf("go list gave %v, which lacks the service the page renders over", imports)
	}
	for _, p := range imports {
		if p == "github.com/vetohq/veto/rules" || strings.HasPrefix(p, "github.com/vetohq/veto/rules/") {
			t.Errorf("the page imports %s", p)
		}
	}
}
