package veto_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
)

// A gate with one rule: no Bash command may mention the production host.
// The rule's message says why in words and never quotes the command.
func ExampleGate_Decide() {
	noProd := &rule.Func{
		RuleInfo: veto.RuleInfo{ID: "example.no_prod", Risk: veto.RiskMapping{Default: veto.RiskHigh}},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			cmd, _ := in.Call.Args["command"].(string)
			if in.Call.Tool == "Bash" && strings.Contains(cmd, "prod.internal") {
				return veto.Deny("production_host", "Commands against the production host need a person."), nil
			}
			return veto.Allow(), nil
		},
	}
	g, err := veto.NewGate(veto.Config{Rules: []veto.Rule{noProd}, Store: memstore.New()})
	if err != nil {
		panic(err)
	}
	run := veto.Run{Ref: "session-1", Fresh: true}
	for _, cmd := range []string{"go test ./...", "ssh prod.internal reboot"} {
		v := g.Decide(context.Background(), &veto.Call{ID: cmd[:2], Tool: "Bash", Args: map[string]any{"command": cmd}, Run: run})
		if v.Allowed {
			fmt.Println("allow")
			continue
		}
		fmt.Println("deny", v.Rule, v.Reason, v.Risk, "-", v.Message)
	}
	// Output:
	// allow
	// deny example.no_prod production_host high - Commands against the production host need a person.
}
