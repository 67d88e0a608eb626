package celrule_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types/ref"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
)

const canary = "CANARY-cel-4e1f"

func gate(t testing.TB, c *celrule.Compiler, specs ...policy.RuleSpec) (*veto.Gate, *memstore.Store, *bytes.Buffer) {
	t.Helper()
	var rules []veto.Rule
	for _, s := range specs {
		r, err := c.Compile(s)
		if err != nil {
			t.Fatalf("compile %s: %v", s.ID, err)
		}
		rules = append(rules, r)
	}
	store, log := memstore.New(), &bytes.Buffer{}
	g, err := veto.NewGate(veto.Config{Rules: rules, Store: store,
		Logger: slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return g, store, log
}

// A CEL rule that panics, runs past its budget, or reads a missing field
// denies rule_failed, and its error text reaches no verdict, event or log.
func TestCELFailuresAreRuleFailed(t *testing.T) {
	c, err := celrule.New(celrule.Budget(1000), celrule.Functions(
		cel.Function("explode", cel.Overload("explode_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(v ref.Val) ref.Val { panic("explode: " + canary) }))),
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []policy.RuleSpec{
		{ID: "panics", Deny: `explode(args.x)`, Reason: "boom"},
		{ID: "too-costly", Deny: `args.items.all(a, args.items.all(b, args.items.all(c, a + b + c != "` + canary + `")))`, Reason: "cost"},
		{ID: "missing-field", Deny: `args.nope == "` + canary + `"`, Reason: "missing"},
		{ID: "type-error", Deny: `args.x + 1 == 2`, Reason: "types"},
	} {
		t.Run(spec.ID, func(t *testing.T) {
			g, store, log := gate(t, c, spec)
			items := make([]any, 60)
			for i := range items {
				items[i] = fmt.Sprint(i)
			}
			v := g.Decide(context.Background(), &veto.Call{ID: "c", Tool: "mcp__x__y",
				Args: map[string]any{"x": canary, "items": items}, Run: veto.Run{Ref: "r", Fresh: true}})
			if v.Allowed || v.Reason != veto.ReasonRuleFailed || v.Rule != spec.ID {
				t.Fatalf("verdict %+v, want rule_failed by %s", v, spec.ID)
			}
			vj, _ := json.Marshal(v)
			all := string(vj) + log.String()
			for _, raw := range store.Raw("r") {
				all += string(raw)
			}
			if strings.Contains(all, canary) {
				t.Fatalf("the canary leaked: %s", all)
			}
		})
	}
}

func TestCELRuleDeniesAndAllows(t *testing.T) {
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := gate(t, c, policy.RuleSpec{ID: "no-drop", Deny: `args.sql.lowerAscii().contains("drop table")`, Reason: "drop",
		Message: "Dropping tables needs a person.", Risk: "critical", Match: &policy.MatchSpec{Tool: "mcp__db__*"}})
	deny := g.Decide(context.Background(), &veto.Call{Tool: "mcp__db__query", Args: map[string]any{"sql": "DROP TABLE x"}})
	if deny.Allowed || deny.Rule != "no-drop" || deny.Reason != "drop" || deny.Risk != veto.RiskCritical || deny.Message != "Dropping tables needs a person." {
		t.Fatalf("%+v", deny)
	}
	// A tool glob crosses "/": the server's tool named like a path is
	// the server's tool (issue 27).
	if v := g.Decide(context.Background(), &veto.Call{Tool: "mcp__db__admin/query", Args: map[string]any{"sql": "DROP TABLE x"}}); v.Allowed || v.Rule != "no-drop" {
		t.Fatalf("mcp__db__* missed mcp__db__admin/query: %+v", v)
	}
	for _, c := range []veto.Call{
		{Tool: "mcp__db__query", Args: map[string]any{"sql": "select 1"}},
		{Tool: "Bash", Args: map[string]any{"sql": "DROP TABLE x"}}, // not matched
	} {
		if v := g.Decide(context.Background(), &c); !v.Allowed {
			t.Fatalf("%s: %+v", c.Tool, v)
		}
	}
}

// BenchmarkDecide20CELRules is a decision through twenty CEL rules that all
// evaluate and allow, with the arguments converted once for all of them.
func BenchmarkDecide20CELRules(b *testing.B) {
	c, err := celrule.New()
	if err != nil {
		b.Fatal(err)
	}
	exprs := []string{
		`args.command.contains("prod.internal")`, `tool == "WebFetch" && host(args.url) == "evil.example"`,
		`path.under(cwd, "/etc")`, `glob("**/*.pem", args.command)`, `actor.kind == "agent" && tool == "Write"`,
		`run.prior_turns > 1000`, `args.command.startsWith("sudo ")`, `args.command.size() > 10000`,
		`target.known && target.id.endsWith(".lock")`, `args.command.matches("^rm\\s+-rf\\s+/$")`,
	}
	var specs []policy.RuleSpec
	for i := 0; i < 20; i++ {
		specs = append(specs, policy.RuleSpec{ID: fmt.Sprintf("r%d", i), Deny: exprs[i%len(exprs)], Reason: "x"})
	}
	var rules []veto.Rule
	for _, s := range specs {
		r, err := c.Compile(s)
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, r)
	}
	g, err := veto.NewGate(veto.Config{Rules: rules, Store: memstore.New()})
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"command": "go test ./... 2>&1 | tail -20", "url": "https://example.com/"}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Bash", Args: args, Cwd: "/work/project", Run: veto.Run{Ref: "bench", Fresh: true}})
		if !v.Allowed {
			b.Fatal(v.Rule, v.Reason)
		}
	}
}

// host() reads a URL as the egress rule does, so a rule on a host is not
// bypassed by spelling it otherwise; a URL egress cannot read denies
// rule_failed rather than looking harmless.
func TestCELHostCannotBeRespelled(t *testing.T) {
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := gate(t, c,
		policy.RuleSpec{ID: "no-evil", Deny: `tool == "WebFetch" && host(args.url) == "evil.example"`, Reason: "evil"},
		policy.RuleSpec{ID: "no-loopback", Deny: `tool == "WebFetch" && host(args.url) == "127.0.0.1"`, Reason: "loopback"})
	for _, tc := range []struct{ url, rule, reason string }{
		{"https://ｅvil.example/", "no-evil", "evil"},
		{"https://evil%2eexample/", "no-evil", "evil"},
		{"https://EVIL.example./", "no-evil", "evil"},
		{"https://2130706433/", "no-loopback", "loopback"},
		{"https://a\\b@evil.example/", "no-evil", veto.ReasonRuleFailed},
		{"https://", "no-evil", veto.ReasonRuleFailed},
		{"https://good.example/", "", ""},
	} {
		v := g.Decide(context.Background(), &veto.Call{Tool: "WebFetch", Args: map[string]any{"url": tc.url}})
		if tc.rule == "" {
			if !v.Allowed {
				t.Errorf("%s: %+v, want allow", tc.url, v)
			}
			continue
		}
		if v.Allowed || v.Rule != tc.rule || v.Reason != tc.reason {
			t.Errorf("%s: %+v, want deny by %s (%s)", tc.url, v, tc.rule, tc.reason)
		}
	}
	// A rule whose answer does not depend on the host is not failed by it:
	// CEL's && and || absorb an error when the other side decides.
	if v := g.Decide(context.Background(), &veto.Call{Tool: "Bash", Args: map[string]any{"url": "https://"}}); !v.Allowed {
		t.Errorf("Bash with an unreadable url: %+v, want allow", v)
	}
}
