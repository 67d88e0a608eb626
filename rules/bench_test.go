package rules_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
)

// BenchmarkDefaultPolicyBash is one decision of a typical Bash call under
// the embedded default policy, every family built as veto builds it: the
// command rules and veto.control share one analysis of the command.
func BenchmarkDefaultPolicyBash(b *testing.B) {
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: ws, Vars: map[string]string{"HOME": ws, "TMPDIR": "/tmp", "USER": "agent"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c := veto.Call{Tool: "Bash", Workspace: ws, Cwd: ws, Run: veto.Run{Ref: "r1", Fresh: true},
		Args: map[string]any{"command": `git add -A && git commit -m "fix: handle empty input" && go test ./... 2>&1 | tail`}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		c.ID, c.Run.Ref = "", "r"+strconv.Itoa(n) // a short run each: the decision, not the run's length
		if v := g.Decide(ctx, &c); !v.Allowed {
			b.Fatal(v.Rule, v.Reason)
		}
	}
}
