package veto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
)

var ctx = context.Background()

// E1
func TestRuleIDsValidatedAndDuplicatesRefused(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"file.write_roots", true},
		{"x-1_2.3", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"A", false},
		{"1abc", false},
		{"_a", false},
		{"a b", false},
		{"a/b", false},
		{"aé", false},
		{"a\n", false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			if got := veto.ValidID(tc.id); got != tc.ok {
				t.Fatalf("ValidID(%q) = %v, want %v", tc.id, got, tc.ok)
			}
			var reg rule.Registry
			err := reg.Register(allowRule(tc.id))
			if (err == nil) != tc.ok {
				t.Fatalf("Register(%q) error = %v, want ok=%v", tc.id, err, tc.ok)
			}
			_, err = veto.NewGate(veto.Config{Store: memstore.New(), Rules: []veto.Rule{allowRule(tc.id)}})
			if (err == nil) != tc.ok {
				t.Fatalf("NewGate with rule %q error = %v, want ok=%v", tc.id, err, tc.ok)
			}
		})
	}

	t.Run("duplicate", func(t *testing.T) {
		var reg rule.Registry
		first, second := allowRule("same.id"), denyRule("same.id", "nope")
		if err := reg.Register(first); err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(second); err == nil {
			t.Fatal("second registration of same.id succeeded")
		}
		if rs := reg.Rules(); len(rs) != 1 || rs[0] != first {
			t.Fatalf("registry holds %d rules, want only the first", len(rs))
		}
		if _, err := veto.NewGate(veto.Config{Store: memstore.New(), Rules: []veto.Rule{first, second}}); err == nil {
			t.Fatal("NewGate accepted two rules with the same id")
		}
	})

	t.Run("must-register-panics", func(t *testing.T) {
		var reg rule.Registry
		reg.MustRegister(allowRule("once"))
		for _, r := range []veto.Rule{allowRule("once"), allowRule("Bad"), nil} {
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("MustRegister did not panic")
					}
				}()
				reg.MustRegister(r)
			}()
		}
	})

	t.Run("risk-mapping-reasons", func(t *testing.T) {
		r := &rule.Func{RuleInfo: veto.RuleInfo{ID: "ok", Risk: veto.RiskMapping{ByReason: map[string]veto.Risk{"Not Valid": veto.RiskLow}}}}
		var reg rule.Registry
		if err := reg.Register(r); err == nil {
			t.Fatal("a risk mapping with a malformed reason was accepted")
		}
	})
}

// E2
func TestMalformedReasonIsRuleFailed(t *testing.T) {
	for _, reason := range []string{"", "Has Caps", "9starts", strings.Repeat("r", 65), "semi;colon"} {
		t.Run(reason, func(t *testing.T) {
			later := allowRule("later")
			f := newFixture(t, veto.Config{Rules: []veto.Rule{denyRule("bad.reason", reason), later}})
			c := call("Read", nil)
			v := f.g.Decide(ctx, c)
			wantVerdict(t, v, false, veto.StageRule, "bad.reason", veto.ReasonRuleFailed)
			if e := f.lastDecision(t, c.Run.Ref); e.Reason != veto.ReasonRuleFailed || e.Rule != "bad.reason" {
				t.Fatalf("event reason %q rule %q", e.Reason, e.Rule)
			}
			if later.n.Load() != 0 {
				t.Fatal("a rule after the failed one was called")
			}
		})
	}
}

// E3
func TestFirstDenyWinsLaterRulesNotCalled(t *testing.T) {
	a, b, c, d := allowRule("a"), denyRule("b", "first_no"), denyRule("c", "second_no"), allowRule("d")
	f := newFixture(t, veto.Config{Rules: []veto.Rule{a, b, c, d}})
	v := f.g.Decide(ctx, call("Write", map[string]any{"file_path": "x"}))
	wantVerdict(t, v, false, veto.StageRule, "b", "first_no")
	if a.n.Load() != 1 || b.n.Load() != 1 || c.n.Load() != 0 || d.n.Load() != 0 {
		t.Fatalf("calls a=%d b=%d c=%d d=%d, want 1 1 0 0", a.n.Load(), b.n.Load(), c.n.Load(), d.n.Load())
	}
	if v.Risk != veto.RiskHigh {
		t.Fatalf("risk %v, want the rule's mapping (high)", v.Risk)
	}

	// A scoped rule is consulted for the calls it applies to, in its place,
	// and skipped for the others.
	shellOnly := &scopedRule{counting: denyRule("shell.only", "no_shell"), tool: "Bash"}
	after := denyRule("after", "later_no")
	f = newFixture(t, veto.Config{Rules: []veto.Rule{allowRule("first"), shellOnly, after}})
	wantVerdict(t, f.g.Decide(ctx, call("Bash", nil)), false, veto.StageRule, "shell.only", "no_shell")
	if shellOnly.n.Load() != 1 || after.n.Load() != 0 {
		t.Fatalf("scoped rule ran %d times, later rule %d; want 1 and 0", shellOnly.n.Load(), after.n.Load())
	}
	wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StageRule, "after", "later_no")
	if shellOnly.n.Load() != 1 || after.n.Load() != 1 {
		t.Fatalf("scoped rule ran %d times for a call it does not apply to", shellOnly.n.Load()-1)
	}
}

// scopedRule is a counting rule that applies to one tool only.
type scopedRule struct {
	*counting
	tool string
}

func (s *scopedRule) AppliesTo(c *veto.Call) bool { return c.Tool == s.tool }

// offerFunc adapts a function to Offerability.
type offerFunc func(ctx context.Context, c *veto.Call, d *veto.Descriptor) (veto.ToolDenial, error)

func (f offerFunc) Offer(ctx context.Context, c *veto.Call, d *veto.Descriptor) (veto.ToolDenial, error) {
	return f(ctx, c, d)
}

// E4
func TestOfferabilityAndRulesCompose(t *testing.T) {
	offer := &veto.Offer{
		RequireRegistered: true,
		Unavailable:       []string{"Off"},
		Actors:            map[string][]string{"agent:*": {"Read", "Grep"}},
	}
	tools := []veto.Descriptor{{Name: "Read"}, {Name: "Grep"}, {Name: "Off"}, {Name: "WebFetch"},
		{Name: "Secret", TrustZones: []string{"local"}}}
	cases := []struct {
		name  string
		rules []veto.Rule
		call  func() *veto.Call
		want  veto.ToolDenial
		allow bool
	}{
		{"no-rules-offered", nil, func() *veto.Call { return call("Read", nil) }, "", true},
		{"no-rules-not-registered", nil, func() *veto.Call { return call("Nope", nil) }, veto.NotRegistered, false},
		{"unavailable", nil, func() *veto.Call { return call("Off", nil) }, veto.Unavailable, false},
		{"actor-not-allowed", nil, func() *veto.Call {
			c := call("WebFetch", nil)
			c.Actor = veto.Actor{Kind: "agent", ID: "sub"}
			return c
		}, veto.ActorNotAllowed, false},
		{"not-in-run-allowlist", nil, func() *veto.Call {
			c := call("Grep", nil)
			c.Run.AllowedTools = []string{"Read"}
			return c
		}, veto.NotInRunAllowlist, false},
		{"outside-trust-zone", nil, func() *veto.Call {
			c := call("Secret", nil)
			c.Run.TrustZone = "cloud"
			return c
		}, veto.OutsideTrustZone, false},
		{"inside-trust-zone", nil, func() *veto.Call {
			c := call("Secret", nil)
			c.Run.TrustZone = "local"
			return c
		}, "", true},
		{"rules-allow-offer-denies", []veto.Rule{allowRule("ok")}, func() *veto.Call { return call("Off", nil) }, veto.Unavailable, false},
		{"offer-allows-rule-denies", []veto.Rule{denyRule("no", "no")}, func() *veto.Call { return call("Read", nil) }, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, veto.Config{Offer: offer, Tools: tools, Rules: tc.rules})
			c := tc.call()
			v := f.g.Decide(ctx, c)
			if v.Allowed != tc.allow || v.ToolDenial != tc.want {
				t.Fatalf("allowed %v tool denial %q; want %v %q", v.Allowed, v.ToolDenial, tc.allow, tc.want)
			}
			e := f.lastDecision(t, c.Run.Ref)
			switch {
			case tc.want != "":
				if e.Kind != veto.EventToolDenied || e.ToolDenial != tc.want || e.Reason != "" || e.Rule != "" {
					t.Fatalf("event %+v, want tool_denied %s with no rule reason", e, tc.want)
				}
				for _, r := range tc.rules {
					if r.(*counting).n.Load() != 0 {
						t.Fatal("a rule ran for a tool that is not offered")
					}
				}
			case tc.allow:
				if e.Kind != veto.EventAllowed {
					t.Fatalf("event kind %s, want invocation_allowed", e.Kind)
				}
			default:
				if e.Kind != veto.EventDenied {
					t.Fatalf("event kind %s, want invocation_denied", e.Kind)
				}
			}
		})
	}

	t.Run("offer-error-and-panic-deny", func(t *testing.T) {
		for _, o := range []veto.Offerability{
			offerFunc(func(context.Context, *veto.Call, *veto.Descriptor) (veto.ToolDenial, error) {
				return "", errors.New("boom")
			}),
			offerFunc(func(context.Context, *veto.Call, *veto.Descriptor) (veto.ToolDenial, error) { panic("boom") }),
			offerFunc(func(context.Context, *veto.Call, *veto.Descriptor) (veto.ToolDenial, error) { return "made_up", nil }),
		} {
			f := newFixture(t, veto.Config{Offer: o})
			wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StageOffer, "", veto.ReasonRuleFailed)
		}
	})
}

// E5
func TestRuleErrorOrPanicIsRuleFailed(t *testing.T) {
	const canary = "CANARY-e5-7f3a9"
	for name, fn := range map[string]func(context.Context, *veto.Input) (veto.Decision, error){
		"error": func(context.Context, *veto.Input) (veto.Decision, error) {
			return veto.Allow(), errors.New("failed reading " + canary)
		},
		"error-with-deny": func(context.Context, *veto.Input) (veto.Decision, error) {
			return veto.Deny("fine_reason", canary), errors.New(canary)
		},
		"panic": func(context.Context, *veto.Input) (veto.Decision, error) { panic(canary) },
		"panic-error": func(context.Context, *veto.Input) (veto.Decision, error) {
			panic(errors.New(canary))
		},
	} {
		t.Run(name, func(t *testing.T) {
			later := allowRule("later")
			f := newFixture(t, veto.Config{Rules: []veto.Rule{ruleOf("flaky", veto.Needs{}, fn), later}})
			c := call("Read", map[string]any{"file_path": "a"})
			v := f.g.Decide(ctx, c)
			wantVerdict(t, v, false, veto.StageRule, "flaky", veto.ReasonRuleFailed)
			if later.n.Load() != 0 {
				t.Fatal("a later rule ran after a failed one")
			}
			var raw []string
			for _, b := range f.store.Raw(c.Run.Ref) {
				raw = append(raw, string(b))
			}
			noCanary(t, canary, "verdict, log or event", append(raw, mustJSON(t, v), v.Message, f.log.String())...)
		})
	}
}

func resolverOf(kind veto.TargetKind, id string, ok bool, err error) veto.Resolver {
	return veto.ResolverFunc(func(context.Context, *veto.Input) (veto.Target, bool, error) {
		return veto.Target{Kind: kind, ID: id}, ok, err
	})
}

// E6
func TestTargetUnknownAmbiguousOrUnresolvable(t *testing.T) {
	page := resolverOf("page", "42", true, nil)
	other := resolverOf("file", "/x", true, nil)
	none := resolverOf("", "", false, nil)
	failing := resolverOf("", "", false, errors.New("db down"))
	panicking := veto.ResolverFunc(func(context.Context, *veto.Input) (veto.Target, bool, error) { panic("x") })
	emptyClaim := resolverOf("", "", true, nil)
	for _, tc := range []struct {
		name      string
		resolvers []veto.Resolver
		reason    string
		target    veto.Target
	}{
		{"none-claims", []veto.Resolver{none, none}, "", veto.Target{}},
		{"no-resolvers", nil, "", veto.Target{}},
		{"one-claims", []veto.Resolver{none, page}, "", veto.Target{Kind: "page", ID: "42"}},
		{"two-claim", []veto.Resolver{page, other}, veto.ReasonTargetAmbiguous, veto.Target{}},
		{"one-fails", []veto.Resolver{page, failing}, veto.ReasonTargetUnresolvable, veto.Target{}},
		{"one-panics", []veto.Resolver{panicking, page}, veto.ReasonTargetUnresolvable, veto.Target{}},
		{"claims-nothing", []veto.Resolver{emptyClaim}, veto.ReasonTargetUnresolvable, veto.Target{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := veto.Target{Kind: "sentinel"}
			r := ruleOf("sees", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
				seen = in.Target
				return veto.Allow(), nil
			})
			f := newFixture(t, veto.Config{Resolvers: tc.resolvers, Rules: []veto.Rule{r}})
			c := call("Edit", nil)
			v := f.g.Decide(ctx, c)
			if tc.reason != "" {
				wantVerdict(t, v, false, veto.StageTarget, "", tc.reason)
				if seen.Kind != "sentinel" {
					t.Fatal("rules ran although the target could not be resolved")
				}
				return
			}
			wantVerdict(t, v, true, "", "", "")
			if seen != tc.target || v.Target != tc.target {
				t.Fatalf("rule saw %v, verdict %v; want %v", seen, v.Target, tc.target)
			}
			if e := f.lastDecision(t, c.Run.Ref); e.Target != tc.target {
				t.Fatalf("event target %v, want %v", e.Target, tc.target)
			}
		})
	}
}

// E7
func TestRuleNeedingKnownTargetDeniesUnknown(t *testing.T) {
	needy := needsRule("needs.target", veto.Needs{KnownTarget: true})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{needy}})
	wantVerdict(t, f.g.Decide(ctx, call("Edit", nil)), false, veto.StageRule, "needs.target", veto.ReasonTargetUnknown)
	if needy.n.Load() != 0 {
		t.Fatal("the rule ran on an unknown target")
	}
	f = newFixture(t, veto.Config{Rules: []veto.Rule{needy}, Resolvers: []veto.Resolver{resolverOf("page", "1", true, nil)}})
	wantVerdict(t, f.g.Decide(ctx, call("Edit", nil)), true, "", "", "")
	if needy.n.Load() != 1 {
		t.Fatal("the rule did not run on a known target")
	}
}

// E8
func TestRuleNeedingCompleteHistoryRefusedOnIncomplete(t *testing.T) {
	needy := needsRule("needs.history", veto.Needs{CompleteHistory: true})
	plain := allowRule("plain")
	f := newFixture(t, veto.Config{Rules: []veto.Rule{plain, needy}})
	seeded := veto.Run{Ref: "seeded-e8", PriorTurns: 3}
	wantVerdict(t, f.g.Decide(ctx, inRun(seeded, "c1", "Read", nil)), false, veto.StageRule, "needs.history", veto.ReasonHistoryIncomplete)
	if needy.n.Load() != 0 || plain.n.Load() != 1 {
		t.Fatalf("needy ran %d times, plain %d; want 0, 1", needy.n.Load(), plain.n.Load())
	}
	proven := veto.Run{Ref: "proven-e8", PriorTurns: 3, Initial: []veto.Observation{{CallID: "p1", Tool: "Read", Outcome: veto.Succeeded}}}
	wantVerdict(t, f.g.Decide(ctx, inRun(proven, "c2", "Read", nil)), true, "", "", "")
	if needy.n.Load() != 1 {
		t.Fatal("needy did not run on a proven history")
	}
}

// E9
func TestFreshRunCompleteSeededRunIncomplete(t *testing.T) {
	obs := []veto.Observation{{CallID: "p1", Tool: "Read", Outcome: veto.Succeeded, Target: veto.Target{Kind: "file", ID: "/a"}}}
	for _, tc := range []struct {
		name     string
		run      veto.Run
		complete bool
		n        int
	}{
		{"fresh-zero", veto.Run{Fresh: true}, true, 0},
		{"fresh-prior-turns", veto.Run{Fresh: true, PriorTurns: 1}, false, 0},
		{"fresh-prior-calls", veto.Run{Fresh: true, PriorCalls: 2}, false, 0},
		{"not-fresh-zero", veto.Run{}, false, 0},
		{"seeded-authoritative", veto.Run{PriorTurns: 2, Initial: obs}, true, 1},
		{"seeded-authoritative-empty", veto.Run{PriorTurns: 2, Initial: []veto.Observation{}}, true, 0},
		{"not-fresh-authoritative", veto.Run{Initial: obs}, true, 1},
		{"authoritative-damaged", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: "p", Tool: "Read", Outcome: "exploded"}}}, false, 0},
		{"authoritative-duplicate-ids", veto.Run{PriorTurns: 1, Initial: []veto.Observation{
			{CallID: "p", Tool: "Read", Outcome: veto.Succeeded}, {CallID: "p", Tool: "Write", Outcome: veto.Failed}}}, false, 0},
		{"authoritative-empty-id", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: "", Tool: "Read", Outcome: veto.Succeeded}}}, false, 0},
		{"authoritative-long-id", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: strings.Repeat("i", veto.DefaultLimits.MaxName+1), Tool: "Read", Outcome: veto.Succeeded}}}, false, 0},
		{"authoritative-long-tool", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: "p", Tool: strings.Repeat("t", veto.DefaultLimits.MaxName+1), Outcome: veto.Succeeded}}}, false, 0},
		{"authoritative-long-target", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: "p", Tool: "Read", Outcome: veto.Succeeded,
			Target: veto.Target{Kind: "file", ID: "/" + strings.Repeat("p", veto.DefaultLimits.MaxPath)}}}}, false, 0},
		{"authoritative-at-the-bounds", veto.Run{PriorTurns: 1, Initial: []veto.Observation{{CallID: strings.Repeat("i", veto.DefaultLimits.MaxName),
			Tool: strings.Repeat("t", veto.DefaultLimits.MaxName), Outcome: veto.Succeeded,
			Target: veto.Target{Kind: "file", ID: "/" + strings.Repeat("p", veto.DefaultLimits.MaxPath-1)}}}}, true, 1},
		{"authoritative-valid-then-damaged", veto.Run{PriorTurns: 1, Initial: []veto.Observation{
			{CallID: "p1", Tool: "Read", Outcome: veto.Succeeded}, {CallID: "p2", Tool: "Read", Outcome: "exploded"}}}, false, 0},
		{"authoritative-two", veto.Run{PriorTurns: 1, Initial: []veto.Observation{
			{CallID: "p1", Tool: "Read", Outcome: veto.Succeeded}, {CallID: "p2", Tool: "Read", Outcome: veto.Cancelled}}}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen veto.History
			r := ruleOf("sees", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
				seen = *in.History
				return veto.Allow(), nil
			})
			f := newFixture(t, veto.Config{Rules: []veto.Rule{r}})
			tc.run.Ref = "e9-" + tc.name
			f.g.Decide(ctx, inRun(tc.run, "c1", "Read", nil))
			if seen.Complete() != tc.complete || seen.Len() != tc.n {
				t.Fatalf("rule saw complete=%v with %d observations; want %v with %d", seen.Complete(), seen.Len(), tc.complete, tc.n)
			}
			// The run's start is recorded with the same bit.
			evs := f.events(t, tc.run.Ref)
			if evs[0].Kind != veto.EventRunStarted || *evs[0].Complete != tc.complete {
				t.Fatalf("first event %+v, want run_started complete=%v", evs[0], tc.complete)
			}
		})
	}

	t.Run("explicit-start", func(t *testing.T) {
		f := newFixture(t, veto.Config{})
		run := veto.Run{Ref: "e9-start", Fresh: true}
		if err := f.g.Start(ctx, run); err != nil {
			t.Fatal(err)
		}
		// A later call that claims prior turns does not unmake the start.
		f.g.Decide(ctx, inRun(veto.Run{Ref: "e9-start", PriorTurns: 1}, "c1", "Read", nil))
		if h := f.history(t, "e9-start"); !h.Complete() || h.Len() != 1 {
			t.Fatalf("history complete=%v len=%d; want complete with the one call", h.Complete(), h.Len())
		}
	})
}

// E10
func TestDamagedStoredStatesLoadIncomplete(t *testing.T) {
	start := `{"v":1,"run":"R","seq":1,"kind":"run_started","time":"2026-01-01T00:00:00Z","complete":true}`
	good2 := `{"v":1,"run":"R","seq":2,"kind":"invocation_allowed","time":"2026-01-01T00:00:00Z","call_id":"a","tool":"Read"}`
	for _, tc := range []struct {
		name string
		raw  []string
	}{
		{"not-json", []string{start, "\x00\x01garbage"}},
		{"truncated-json", []string{start, good2[:40]}},
		{"older-shape", []string{start, `{"run":"R","seq":2,"kind":"invocation_allowed","call_id":"a","tool":"Read"}`}},
		{"unknown-kind", []string{start, `{"v":1,"run":"R","seq":2,"kind":"teleported","call_id":"a"}`}},
		{"unknown-outcome", []string{start, `{"v":1,"run":"R","seq":2,"kind":"observation","call_id":"a","tool":"Read","outcome":"maybe"}`}},
		{"sequence-gap", []string{start, strings.Replace(good2, `"seq":2`, `"seq":5`, 1)}},
		{"duplicate-sequence", []string{start, good2, good2}},
		{"never-started", []string{strings.Replace(good2, `"seq":2`, `"seq":1`, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needy := needsRule("needs.history", veto.Needs{CompleteHistory: true})
			f := newFixture(t, veto.Config{Rules: []veto.Rule{needy}})
			run := "e10-" + tc.name
			for _, r := range tc.raw {
				f.store.AppendRaw(run, []byte(strings.ReplaceAll(r, `"run":"R"`, `"run":"`+run+`"`)))
			}
			if f.history(t, run).Complete() {
				t.Fatal("damaged state loaded as complete")
			}
			fresh := veto.Run{Ref: run, Fresh: true}
			wantVerdict(t, f.g.Decide(ctx, inRun(fresh, "later", "Read", nil)), false, veto.StageRule, "needs.history", veto.ReasonHistoryIncomplete)
			if err := f.g.Observe(ctx, run, veto.Observation{CallID: "later", Tool: "Read", Outcome: veto.Succeeded}); err != nil {
				t.Fatal(err)
			}
			if f.history(t, run).Complete() {
				t.Fatal("appending made a damaged history complete")
			}
			wantVerdict(t, f.g.Decide(ctx, inRun(fresh, "later2", "Read", nil)), false, veto.StageRule, "needs.history", veto.ReasonHistoryIncomplete)
			if needy.n.Load() != 0 {
				t.Fatal("a rule needing complete history ran on a damaged one")
			}
		})
	}

	// The stored form of a history (as kept in a suspension) is judged the same way.
	good := `{"v":1,"complete":true,"observations":[{"seq":1,"call_id":"a","tool":"Read","outcome":"succeeded"}]}`
	if h := veto.DecodeHistory([]byte(good)); !h.Complete() || h.Len() != 1 {
		t.Fatalf("good stored history decoded as complete=%v len=%d", h.Complete(), h.Len())
	}
	for name, raw := range map[string]string{
		"empty":           ``,
		"not-json":        `{{{`,
		"truncated":       good[:30],
		"older-shape":     `{"complete":true,"observations":[]}`,
		"no-complete-bit": `{"v":1,"observations":[]}`,
		"unknown-outcome": strings.Replace(good, "succeeded", "exploded", 1),
		"out-of-order":    `{"v":1,"complete":true,"observations":[{"seq":2,"call_id":"a","tool":"R","outcome":"failed"},{"seq":1,"call_id":"b","tool":"R","outcome":"failed"}]}`,
		"duplicate-call":  `{"v":1,"complete":true,"observations":[{"seq":1,"call_id":"a","tool":"R","outcome":"failed"},{"seq":2,"call_id":"a","tool":"R","outcome":"failed"}]}`,
	} {
		if h := veto.DecodeHistory([]byte(raw)); h.Complete() {
			t.Errorf("stored history %s decoded as complete", name)
		}
	}
}

// E11
func TestOutcomesStayDistinctThroughPersistence(t *testing.T) {
	store := memstore.New()
	deny := ruleOf("no.write", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Tool == "Write" {
			return veto.Deny("no_writes", "Writes are off."), nil
		}
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Store: store, Rules: []veto.Rule{deny}, Offer: &veto.Offer{Unavailable: []string{"Off"}}})
	run := veto.Run{Ref: "e11", Fresh: true}
	for _, id := range []string{"ok", "bad", "stop", "wait"} {
		f.g.Decide(ctx, inRun(run, id, "Read", nil))
	}
	f.g.Decide(ctx, inRun(run, "refused", "Write", nil))
	f.g.Decide(ctx, inRun(run, "unoffered", "Off", nil))
	for id, o := range map[string]veto.Outcome{"ok": veto.Succeeded, "bad": veto.Failed, "stop": veto.Cancelled} {
		if err := f.g.Observe(ctx, "e11", veto.Observation{CallID: id, Tool: "Read", Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]veto.Outcome{"ok": veto.Succeeded, "bad": veto.Failed, "stop": veto.Cancelled, "wait": veto.Pending,
		"refused": veto.Denied, "unoffered": veto.Denied}

	// The stored bytes themselves name each reported outcome, read here
	// without veto's decoder.
	raw := store.Raw("e11")
	stored := map[string]string{}
	kinds := map[string]string{}
	for _, b := range raw {
		var e struct {
			Kind    string `json:"kind"`
			CallID  string `json:"call_id"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("stored event %s: %v", b, err)
		}
		if e.Kind == "observation" {
			stored[e.CallID] = e.Outcome
		} else if e.CallID != "" {
			kinds[e.CallID] = e.Kind
		}
	}
	for id, o := range map[string]string{"ok": "succeeded", "bad": "failed", "stop": "cancelled"} {
		if stored[id] != o {
			t.Errorf("call %s: stored outcome %q, want %q", id, stored[id], o)
		}
	}
	for id, k := range map[string]string{"wait": "invocation_allowed", "refused": "invocation_denied", "unoffered": "tool_denied"} {
		if kinds[id] != k {
			t.Errorf("call %s: stored decision %q, want %q", id, kinds[id], k)
		}
	}

	// A second store rebuilds the history from those bytes alone.
	second := memstore.New()
	for _, b := range raw {
		second.AppendRaw("e11", b)
	}
	g2 := newFixture(t, veto.Config{Store: second})
	h := g2.history(t, "e11")
	got := map[string]veto.Outcome{}
	for _, o := range h.All() {
		got[o.CallID] = o.Outcome
	}
	if len(got) != len(want) || !h.Complete() {
		t.Fatalf("history %+v; want %d observations, complete", h, len(want))
	}
	for id, o := range want {
		if got[id] != o {
			t.Errorf("call %s: outcome %q rebuilt from stored bytes, want %q", id, got[id], o)
		}
	}
	// And through the stored form a suspension keeps, read back by veto
	// and without it.
	b, err := veto.EncodeHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	var plain struct {
		Observations []struct {
			CallID  string `json:"call_id"`
			Outcome string `json:"outcome"`
		} `json:"observations"`
	}
	if err := json.Unmarshal(b, &plain); err != nil {
		t.Fatal(err)
	}
	for _, o := range plain.Observations {
		if o.Outcome != string(want[o.CallID]) {
			t.Errorf("call %s: outcome %q in the stored history, want %q", o.CallID, o.Outcome, want[o.CallID])
		}
	}
	h2 := veto.DecodeHistory(b)
	if !h2.Complete() || !slices.Equal(h2.Observations(), h.Observations()) {
		t.Fatalf("history changed through its stored form:\n%+v\n%+v", h.Observations(), h2.Observations())
	}
}

// E12
func TestSameTurnSiblingsVisibleInOrder(t *testing.T) {
	var seen [][]string
	r := ruleOf("sees", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		var s []string
		for _, o := range in.History.All() {
			s = append(s, o.CallID+"="+string(o.Outcome))
		}
		seen = append(seen, s)
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{r}})
	run := veto.Run{Ref: "e12", Fresh: true}
	f.g.Decide(ctx, inRun(run, "first", "Read", nil))
	f.g.Decide(ctx, inRun(run, "second", "Grep", nil))
	if err := f.g.Observe(ctx, "e12", veto.Observation{CallID: "first", Tool: "Read", Outcome: veto.Succeeded}); err != nil {
		t.Fatal(err)
	}
	f.g.Decide(ctx, inRun(run, "third", "Edit", nil))
	want := [][]string{nil, {"first=pending"}, {"first=succeeded", "second=pending"}}
	if len(seen) != 3 {
		t.Fatalf("rule ran %d times", len(seen))
	}
	for i := range want {
		if !slices.Equal(seen[i], want[i]) {
			t.Errorf("call %d saw %v, want %v", i+1, seen[i], want[i])
		}
	}
}

// E13
func TestRetryWithoutObservationsIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name     string
		run      veto.Run
		complete bool
	}{
		{"retry-fresh", veto.Run{Fresh: true, Retries: 1}, false},
		{"retry-empty-history", veto.Run{Retries: 2, Initial: []veto.Observation{}}, false},
		{"retry-no-history", veto.Run{Retries: 1}, false},
		{"retry-with-observations", veto.Run{Retries: 1, Initial: []veto.Observation{{CallID: "x", Tool: "Bash", Outcome: veto.Failed}}}, true},
		{"fresh-attempt", veto.Run{Fresh: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needy := needsRule("needs.history", veto.Needs{CompleteHistory: true})
			f := newFixture(t, veto.Config{Rules: []veto.Rule{needy}})
			tc.run.Ref = "e13-" + tc.name
			v := f.g.Decide(ctx, inRun(tc.run, "c", "Bash", nil))
			if v.Allowed != tc.complete {
				t.Fatalf("allowed=%v (reason %s); want history complete=%v", v.Allowed, v.Reason, tc.complete)
			}
			if !tc.complete && v.Reason != veto.ReasonHistoryIncomplete {
				t.Fatalf("reason %s, want history_incomplete", v.Reason)
			}
		})
	}
}

// switchable is a rule whose verdict a test changes, as a policy edit would.
type switchable struct {
	deny atomic.Bool
	n    atomic.Int64
	args []map[string]any
}

func (s *switchable) Info() veto.RuleInfo { return veto.RuleInfo{ID: "live.policy"} }
func (s *switchable) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	s.n.Add(1)
	s.args = append(s.args, in.Call.Args)
	if s.deny.Load() {
		return veto.Deny("changed_policy", "The policy no longer allows this."), nil
	}
	return veto.Allow(), nil
}

// E14
func TestApprovalResumeDecidesAgainLive(t *testing.T) {
	live := &switchable{}
	f := newFixture(t, veto.Config{Rules: []veto.Rule{live}})
	run := veto.Run{Ref: "e14", Fresh: true}
	f.g.Decide(ctx, inRun(run, "before", "Read", nil))
	s, err := f.g.Suspend(ctx, inRun(run, "pending", "Bash", map[string]any{"command": "make deploy"}), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.History.Len() != 1 || !s.History.Complete() {
		t.Fatalf("suspension history %+v, want the earlier call, complete", s.History)
	}
	b, err := veto.EncodeSuspension(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range f.store.Raw("e14") {
		if strings.Contains(string(raw), "make deploy") {
			t.Fatal("the suspended call's arguments reached the event log")
		}
	}

	// The policy changes while the call waits; the person approves.
	live.deny.Store(true)
	restored, err := veto.DecodeSuspension(b, veto.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	before := live.n.Load()
	res := f.g.ResumeApproval(ctx, restored)
	if live.n.Load() != before+1 {
		t.Fatal("approval resume did not decide again")
	}
	if res.Execute || res.Verdict.Allowed || res.Verdict.Reason != "changed_policy" {
		t.Fatalf("resume = %+v; want a denial by the live policy", res)
	}
	if e := f.lastDecision(t, "e14"); e.Kind != veto.EventDenied || e.CallID != "pending" {
		t.Fatalf("last decision %+v; want invocation_denied for the resumed call", e)
	}
	evs := f.events(t, "e14")
	suspended := 0
	for _, e := range evs {
		if e.Kind == veto.EventSuspended {
			suspended++
		}
	}
	if suspended != 1 {
		t.Fatalf("%d suspension events; a denial at resume must not ask again", suspended)
	}

	// With the policy back, the same approval runs the call.
	live.deny.Store(false)
	if res := f.g.ResumeApproval(ctx, restored); !res.Execute || !res.Verdict.Allowed {
		t.Fatalf("resume under an allowing policy = %+v", res)
	}

	// On another process with its own store, the suspension's history is carried forward.
	needy := needsRule("needs.history", veto.Needs{CompleteHistory: true})
	other := newFixture(t, veto.Config{Rules: []veto.Rule{needy}})
	if res := other.g.ResumeApproval(ctx, restored); !res.Execute {
		t.Fatalf("resume elsewhere = %+v; want allowed on the carried history", res.Verdict)
	}
	if h := other.history(t, "e14"); !h.Complete() || h.Len() != 2 {
		t.Fatalf("carried history complete=%v len=%d, want complete with 2", h.Complete(), h.Len())
	}

	// A suspension of another shape version carries no history veto can vouch for.
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	top["v"] = veto.SuspensionVersion + 1
	if restored, err := veto.DecodeSuspension([]byte(mustJSON(t, top)), veto.DefaultLimits); err != nil {
		t.Fatal(err)
	} else if restored.History.Complete() {
		t.Fatal("a suspension of another shape version decoded with a complete history")
	} else if res := newFixture(t, veto.Config{Rules: []veto.Rule{needy}}).g.ResumeApproval(ctx, restored); res.Execute ||
		res.Verdict.Reason != veto.ReasonHistoryIncomplete {
		t.Fatalf("resume of another shape version = %+v; want history_incomplete", res.Verdict)
	}

	// An incomplete suspension history is not carried as authoritative.
	partial := veto.Run{Ref: "e14-partial"} // not fresh: its history cannot be proven
	f.g.Decide(ctx, inRun(partial, "earlier", "Read", nil))
	s2, err := f.g.Suspend(ctx, inRun(partial, "later", "Bash", nil), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2.History.Complete() || s2.History.Len() != 1 {
		t.Fatalf("suspension history complete=%v len=%d; want incomplete with the earlier call", s2.History.Complete(), s2.History.Len())
	}
	b2, err := veto.EncodeSuspension(s2)
	if err != nil {
		t.Fatal(err)
	}
	restored2, err := veto.DecodeSuspension(b2, veto.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := newFixture(t, veto.Config{Rules: []veto.Rule{needy}})
	if res := elsewhere.g.ResumeApproval(ctx, restored2); res.Execute || res.Verdict.Reason != veto.ReasonHistoryIncomplete {
		t.Fatalf("resume of an incomplete suspension elsewhere = %+v; want history_incomplete", res.Verdict)
	}
	if h := elsewhere.history(t, "e14-partial"); h.Complete() {
		t.Fatal("an incomplete suspension history was carried as complete")
	}
}

// E15
func TestInputResumeAppliesHumanValuesFirst(t *testing.T) {
	live := &switchable{}
	branchRule := ruleOf("no.main", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Args["branch"] == "main" {
			return veto.Deny("protected_branch", "Pushing to the main branch is not allowed."), nil
		}
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{live, branchRule}, Tools: []veto.Descriptor{
		{Name: "push", Params: map[string]veto.Role{"branch": veto.RoleInput, "remote": veto.RoleURL}},
	}})
	run := veto.Run{Ref: "e15", Fresh: true}
	s, err := f.g.Suspend(ctx, inRun(run, "p", "push", map[string]any{"branch": "main", "remote": "origin"}), veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Fields, []string{"branch"}) {
		t.Fatalf("fields %v, want the descriptor's input field", s.Fields)
	}
	res := f.g.ResumeInput(ctx, s, map[string]any{"branch": "feature"})
	if !res.Execute || res.Call.Args["branch"] != "feature" || res.Call.Args["remote"] != "origin" {
		t.Fatalf("resume = %+v", res)
	}
	if got := live.args[len(live.args)-1]["branch"]; got != "feature" {
		t.Fatalf("the rule saw branch %v, want the human value", got)
	}
	if s.Call.Args["branch"] != "main" {
		t.Fatal("resume changed the suspension's own arguments")
	}
	if res := f.g.ResumeInput(ctx, s, map[string]any{"branch": "main"}); res.Execute || res.Verdict.Rule != "no.main" {
		t.Fatalf("human value main: %+v; want denied by no.main", res.Verdict)
	}
	for name, human := range map[string]map[string]any{
		"undeclared-field": {"branch": "feature", "remote": "evil"},
		"missing-field":    {},
		"renamed-field":    {"remote": "evil"},
	} {
		res := f.g.ResumeInput(ctx, s, human)
		if res.Execute || res.Verdict.Reason != veto.ReasonInputRejected || res.Verdict.Stage != veto.StageResume {
			t.Errorf("%s: %+v; want input_rejected", name, res.Verdict)
		}
	}
	if res := f.g.ResumeApproval(ctx, s); res.Execute {
		t.Fatal("an input suspension was resumed as approved")
	}
	approval, err := f.g.Suspend(ctx, inRun(run, "a", "push", map[string]any{"branch": "dev"}), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := f.g.ResumeInput(ctx, approval, map[string]any{}); res.Execute || res.Verdict.Reason != veto.ReasonInputRejected {
		t.Fatalf("an approval suspension resumed with input: %+v; want input_rejected", res.Verdict)
	}
}

// E16
func TestDecisionEventKindsAndLogLevels(t *testing.T) {
	f := newFixture(t, veto.Config{
		Rules: []veto.Rule{ruleOf("no.bash", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if in.Call.Tool == "Bash" {
				return veto.Deny("no_shell", "Shell is off."), nil
			}
			return veto.Allow(), nil
		})},
		Offer:     &veto.Offer{Unavailable: []string{"WebFetch"}},
		Resolvers: []veto.Resolver{resolverOf("file", "/work/a", true, nil)},
	})
	run := veto.Run{Ref: "e16", Fresh: true}
	f.g.Decide(ctx, inRun(run, "c-allow", "Read", nil))
	f.g.Decide(ctx, inRun(run, "c-deny", "Bash", nil))
	f.g.Decide(ctx, inRun(run, "c-tool", "WebFetch", nil))
	var kinds []veto.EventKind
	for _, e := range f.events(t, "e16")[1:] {
		kinds = append(kinds, e.Kind)
	}
	if want := []veto.EventKind{veto.EventAllowed, veto.EventDenied, veto.EventToolDenied}; !slices.Equal(kinds, want) {
		t.Fatalf("event kinds %v, want %v", kinds, want)
	}
	denied := f.lastDecision(t, "e16")
	if denied.ToolDenial != veto.Unavailable || denied.Reason != "" || denied.CallID != "c-tool" {
		t.Fatalf("tool_denied event %+v", denied)
	}
	type line struct {
		Level, Msg, CallID, Tool, Rule, Reason, ToolDenial, Target string
	}
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(f.log.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		lines = append(lines, line{s("level"), s("msg"), s("call_id"), s("tool"), s("rule"), s("reason"), s("tool_denial"), s("target")})
	}
	want := []line{
		{"DEBUG", "allowed", "c-allow", "Read", "", "", "", "file:/work/a"},
		{"WARN", "denied", "c-deny", "Bash", "no.bash", "no_shell", "", "file:/work/a"},
		{"WARN", "denied", "c-tool", "WebFetch", "", veto.ReasonToolDenied, "unavailable", "unknown"},
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("log lines\n%+v\nwant\n%+v", lines, want)
	}

	// The engine's own denials log at warn too: an internal failure, an
	// unreadable state and a decision that could not be recorded.
	unreadable := memstore.New()
	unreadable.Fail(errors.New("gone"))
	for _, tc := range []struct {
		name   string
		store  veto.Store
		reason string
	}{
		{"internal", panicking{memstore.New()}, veto.ReasonInternal},
		{"state-unavailable", unreadable, veto.ReasonStateUnavailable},
		{"record-failure", appendFails{memstore.New()}, veto.ReasonStateUnavailable},
	} {
		var buf bytes.Buffer
		g, err := veto.NewGate(veto.Config{Store: tc.store, Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		c := call("Read", nil)
		if v := g.Decide(ctx, c); v.Allowed || v.Reason != tc.reason {
			t.Fatalf("%s: verdict %+v, want denied %s", tc.name, v, tc.reason)
		}
		found := false
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: log line %q: %v", tc.name, l, err)
			}
			if m["msg"] == "denied" {
				found = true
				if m["level"] != "WARN" || m["reason"] != tc.reason || m["call_id"] != c.ID || m["tool"] != "Read" {
					t.Errorf("%s: denial logged as %v", tc.name, m)
				}
			}
		}
		if !found {
			t.Errorf("%s: no denial in the log:\n%s", tc.name, buf.String())
		}
	}
}

// panicking wraps a store whose loads panic: veto's own failure while deciding.
type panicking struct{ *memstore.Store }

func (panicking) Load(context.Context, string) (veto.RunState, error) { panic("store bug") }

// E17
func TestCanaryNeverLeaks(t *testing.T) {
	const canary = "CANARY-e17-5b0c1d"
	quoting := ruleOf("quotes.args", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Tool == "Write" {
			content, _ := in.Call.Args["content"].(string)
			return veto.Deny("bad_content", "The content "+content+" is not allowed."), nil
		}
		return veto.Allow(), nil
	})
	failing := ruleOf("fails.loudly", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Tool == "Edit" {
			return veto.Allow(), errors.New("cannot parse " + canary)
		}
		return veto.Allow(), nil
	})
	panicky := ruleOf("panics.loudly", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Tool == "Bash" {
			panic("cannot parse " + canary)
		}
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{quoting, failing, panicky}})
	run := veto.Run{Ref: "e17", Fresh: true}
	var outputs []string
	for _, c := range []*veto.Call{
		inRun(run, "read", "Read", map[string]any{"file_path": "/tmp/" + canary}),
		inRun(run, "write", "Write", map[string]any{"file_path": "/tmp/x", "content": "secret " + canary + " material"}),
		inRun(run, "edit", "Edit", map[string]any{"nested": []any{map[string]any{"deep": canary}}}),
		inRun(run, "bash", "Bash", map[string]any{"command": "echo " + canary}),
		inRun(run, "big", "Read", map[string]any{canary: strings.Repeat("x", 1<<21)}),
	} {
		v := f.g.Decide(ctx, c)
		outputs = append(outputs, mustJSON(t, v), v.Message)
	}
	if err := f.g.Observe(ctx, "e17", veto.Observation{CallID: "read", Tool: "Read", Outcome: veto.Succeeded}); err != nil {
		t.Fatal(err)
	}
	s, err := f.g.Suspend(ctx, inRun(run, "susp", "Read", map[string]any{"file_path": canary}), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, mustJSON(t, f.g.ResumeApproval(ctx, s).Verdict))
	for _, raw := range f.store.Raw("e17") {
		outputs = append(outputs, string(raw))
	}
	outputs = append(outputs, f.log.String())
	noCanary(t, canary, "verdict, event or log", outputs...)
	if !strings.Contains(f.log.String(), "quotes.args") {
		t.Fatal("the log does not name the rule: the test would pass vacuously")
	}

	// A rule that quotes one word of an argument, an element of an array,
	// the working directory or the workspace is caught the same way: the
	// rule holds the canary itself, as if it had parsed it out.
	word := ruleOf("quotes.word", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Deny("bad_word", "The word "+canary+" is not allowed."), nil
	})
	fw := newFixture(t, veto.Config{Rules: []veto.Rule{word}})
	var calls []*veto.Call
	for _, sep := range []string{" ", "\t", "\n", "/", "=", `"`, "'", ";", "|", "&"} {
		calls = append(calls, call("Tool", map[string]any{"value": "x" + sep + canary + sep + "y"}))
	}
	calls = append(calls,
		call("Tool", map[string]any{"list": []any{"x", []any{"a " + canary + " b"}}}),
		call("Tool", map[string]any{"nested": map[string]any{"k": "a " + canary + " b"}}),
		call("Tool", map[string]any{"whole": canary}))
	cwd := call("Tool", nil)
	cwd.Cwd = "/work/" + canary + "/sub"
	ws := call("Tool", nil)
	ws.Workspace = "/work/" + canary + "/ws"
	calls = append(calls, cwd, ws)
	for _, c := range calls {
		v := fw.g.Decide(ctx, c)
		noCanary(t, canary, "the message of a call with "+mustJSON(t, c.Args)+" cwd "+c.Cwd+" workspace "+c.Workspace, v.Message)
		if v.Reason != "bad_word" {
			t.Fatalf("verdict %+v, want the rule's denial", v)
		}
	}
	// The thresholds: a whole value of six bytes or a word of eight is a
	// quote; a message that quotes none keeps its words.
	for _, tc := range []struct {
		arg, msg string
		kept     bool
	}{
		{"Zq7Xw9", "Value Zq7Xw9 refused.", false},
		{"Zq7Xw", "Value Zq7Xw refused.", true},
		{"ab Zq7Xw9Yk cd", "Word Zq7Xw9Yk refused.", false},
		{"ab Zq7Xw9Y cd", "Word Zq7Xw9Y refused.", true},
		{"none", strings.Repeat("m", 399) + ".", true},
		{"none", strings.Repeat("m", 400) + ".", false},
		{"none", "A tab\there.", false},
		{"none", "A delete\x7fhere.", false},
		{"none", "A broken \uFFFD here.", false},
		{"none", "", false},
	} {
		msg := tc.msg
		r := ruleOf("says", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
			return veto.Deny("said", msg), nil
		})
		v := newFixture(t, veto.Config{Rules: []veto.Rule{r}}).g.Decide(ctx, call("Tool", map[string]any{"v": tc.arg}))
		if kept := v.Message == tc.msg; kept != tc.kept {
			t.Errorf("argument %q, message %q: the verdict says %q; kept=%v, want %v", tc.arg, tc.msg, v.Message, kept, tc.kept)
		}
	}
}

// E18
func TestBoundsExceededIsDeny(t *testing.T) {
	deep := map[string]any{"leaf": 1}
	for range 40 {
		deep = map[string]any{"n": deep}
	}
	many := map[string]any{}
	for i := range 60_000 {
		many[string(rune('a'+i%26))+strings.Repeat("k", i%7)+itoa(i)] = true
	}
	wide := make([]any, 1<<12)
	for i := range wide {
		wide[i] = strings.Repeat("w", 512)
	}
	for _, tc := range []struct {
		name string
		mut  func(c *veto.Call)
	}{
		{"deep", func(c *veto.Call) { c.Args = deep }},
		{"long-string", func(c *veto.Call) { c.Args = map[string]any{"content": strings.Repeat("x", 600<<10)} }},
		{"long-key", func(c *veto.Call) { c.Args = map[string]any{strings.Repeat("k", 600<<10): 1} }},
		{"many-values", func(c *veto.Call) { c.Args = many }},
		{"total-bytes", func(c *veto.Call) { c.Args = map[string]any{"a": wide, "b": wide} }},
		{"long-tool", func(c *veto.Call) { c.Tool = strings.Repeat("T", 300) }},
		{"long-call-id", func(c *veto.Call) { c.ID = strings.Repeat("i", 300) }},
		{"long-cwd", func(c *veto.Call) { c.Cwd = "/" + strings.Repeat("d", 5000) }},
		{"negative-counter", func(c *veto.Call) { c.Run.Retries = -1 }},
		{"unsupported-type", func(c *veto.Call) { c.Args = map[string]any{"f": func() {}} }},
		{"no-tool", func(c *veto.Call) { c.Tool = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := allowRule("after.bounds")
			f := newFixture(t, veto.Config{Rules: []veto.Rule{r}})
			c := call("Read", nil)
			tc.mut(c)
			v := f.g.Decide(ctx, c)
			wantVerdict(t, v, false, veto.StageBounds, "", veto.ReasonBoundsExceeded)
			if r.n.Load() != 0 {
				t.Fatal("a rule ran on a call past its bounds")
			}
			if e := f.lastDecision(t, c.Run.Ref); e.Reason != veto.ReasonBoundsExceeded || len(e.Tool) > 256 || len(e.CallID) > 256 {
				t.Fatalf("event %+v", e)
			}
		})
	}
	t.Run("history-length", func(t *testing.T) {
		l := veto.DefaultLimits
		l.MaxHistory = 3
		f := newFixture(t, veto.Config{Limits: l})
		run := veto.Run{Ref: "e18-hist", Fresh: true}
		for i := range 3 {
			wantVerdict(t, f.g.Decide(ctx, inRun(run, itoa(i), "Read", nil)), true, "", "", "")
		}
		wantVerdict(t, f.g.Decide(ctx, inRun(run, "4", "Read", nil)), false, veto.StageBounds, "", veto.ReasonBoundsExceeded)
	})

	// Each bound admits a call at its limit and refuses one past it.
	l := veto.DefaultLimits
	l.MaxString, l.MaxArgBytes, l.MaxDepth, l.MaxNodes, l.MaxName, l.MaxPath = 16, 64, 3, 10, 12, 20
	keys := func(n, width int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[string(rune('a'+i))+strings.Repeat("k", width-1)] = true
		}
		return m
	}
	nest := func(n int, leaf any, wrap func(any) any) any {
		v := leaf
		for range n {
			v = wrap(v)
		}
		return v
	}
	inMap := func(v any) any { return map[string]any{"n": v} }
	inList := func(v any) any { return []any{v} }
	name := func(n int) string { return strings.Repeat("n", n) }
	for _, tc := range []struct {
		name string
		mut  func(c *veto.Call, over int)
	}{
		{"string", func(c *veto.Call, o int) { c.Args = map[string]any{"s": strings.Repeat("x", 16+o)} }},
		{"key", func(c *veto.Call, o int) { c.Args = map[string]any{strings.Repeat("k", 16+o): 1} }},
		{"total-bytes", func(c *veto.Call, o int) {
			c.Args = map[string]any{"a": strings.Repeat("x", 15), "b": strings.Repeat("x", 15), "c": strings.Repeat("x", 15), "d": strings.Repeat("x", 15+o)}
		}},
		{"key-bytes", func(c *veto.Call, o int) { c.Args = keys(3+o, 16) }},
		{"number-bytes", func(c *veto.Call, o int) {
			c.Args = map[string]any{"a": 1, "b": 2.5, "c": int64(3), "d": uint8(4), "e": float32(5), "f": int32(6), "g": json.Number(strings.Repeat("9", 9+o))}
		}},
		{"values", func(c *veto.Call, o int) { c.Args = keys(9+o, 1) }},
		{"map-depth", func(c *veto.Call, o int) { c.Args = nest(3+o, 1, inMap).(map[string]any) }},
		{"list-depth", func(c *veto.Call, o int) { c.Args = map[string]any{"l": nest(1+o, []any{1}, inList)} }},
		{"tool", func(c *veto.Call, o int) { c.Tool = name(12 + o) }},
		{"call-id", func(c *veto.Call, o int) { c.ID = name(12 + o) }},
		{"run-ref", func(c *veto.Call, o int) { c.Run.Ref = name(12 + o) }},
		{"actor-kind", func(c *veto.Call, o int) { c.Actor.Kind = name(12 + o) }},
		{"actor-id", func(c *veto.Call, o int) { c.Actor.ID = name(12 + o) }},
		{"actor-agent", func(c *veto.Call, o int) { c.Actor.Agent = name(12 + o) }},
		{"trust-zone", func(c *veto.Call, o int) { c.Run.TrustZone = name(12 + o) }},
		{"cwd", func(c *veto.Call, o int) { c.Cwd = "/" + name(19+o) }},
		{"workspace", func(c *veto.Call, o int) { c.Workspace = "/" + name(19+o) }},
		{"allow-list", func(c *veto.Call, o int) {
			c.Run.AllowedTools = append(make([]string, 9+o), "Read")
		}},
		{"prior-turns", func(c *veto.Call, o int) { c.Run.PriorTurns = -o }},
		{"prior-calls", func(c *veto.Call, o int) { c.Run.PriorCalls = -o }},
	} {
		t.Run("limit-"+tc.name, func(t *testing.T) {
			for over := range 2 {
				f := newFixture(t, veto.Config{Limits: l})
				c := call("Read", nil)
				tc.mut(c, over)
				v := f.g.Decide(ctx, c)
				if over == 0 && v.Reason == veto.ReasonBoundsExceeded {
					t.Fatalf("a call at the limit was refused: %s", v.Message)
				}
				if over == 1 {
					wantVerdict(t, v, false, veto.StageBounds, "", veto.ReasonBoundsExceeded)
				}
			}
		})
	}

	// A patch is held to the same bounds: one that breaks a bound is a
	// failed patch, never a truncated or oversized call.
	for _, p := range map[string]func(args map[string]any){
		"long-string": func(args map[string]any) { args["s"] = strings.Repeat("x", 17) },
		"too-deep":    func(args map[string]any) { args["d"] = nest(3, 1, inMap) },
	} {
		patch := p
		grow := patcherFunc(func(_ context.Context, _ *veto.Input, args map[string]any) (map[string]any, bool, error) {
			patch(args)
			return args, true, nil
		})
		f := newFixture(t, veto.Config{Limits: l, Patchers: []veto.Patcher{grow}})
		wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StagePatch, "", veto.ReasonPatchFailed)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// E19
func TestFloorMismatchDeniesEveryCallLazily(t *testing.T) {
	var asked atomic.Int64
	live := func(list []string, err error) func(context.Context) ([]string, error) {
		return func(context.Context) ([]string, error) {
			asked.Add(1)
			return list, err
		}
	}
	f := newFixture(t, veto.Config{PolicyTools: []string{"Read", "mcp__gone__tool"}, LiveTools: live([]string{"Read", "Bash"}, nil)})
	if asked.Load() != 0 {
		t.Fatal("the floor was checked before the first call")
	}
	for _, tool := range []string{"Read", "Bash", "Read"} {
		v := f.g.Decide(ctx, call(tool, nil))
		wantVerdict(t, v, false, veto.StageFloor, "", veto.ReasonFloorMismatch)
		if !strings.Contains(v.Message, "mcp__gone__tool") {
			t.Fatalf("message %q does not name the mismatch", v.Message)
		}
	}
	if asked.Load() != 1 {
		t.Fatalf("live tool list read %d times, want once", asked.Load())
	}
	if err := f.g.Start(ctx, veto.Run{Ref: "e19", Fresh: true}); err == nil {
		t.Fatal("Start did not report the floor mismatch")
	}

	f = newFixture(t, veto.Config{PolicyTools: []string{"Read"}, LiveTools: live(nil, errors.New("unreadable"))})
	wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StageFloor, "", veto.ReasonFloorMismatch)

	f = newFixture(t, veto.Config{PolicyTools: []string{"Read"}, LiveTools: live([]string{"Read", "Bash"}, nil)})
	if err := f.g.Start(ctx, veto.Run{Ref: "e19-ok", Fresh: true}); err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, f.g.Decide(ctx, call("Bash", nil)), true, "", "", "")
	v := f.g.Decide(ctx, call("NotLive", nil))
	if v.Allowed || v.ToolDenial != veto.Unavailable {
		t.Fatalf("a tool the runtime does not offer: %+v; want tool_denied unavailable", v)
	}
}

type patcherFunc func(ctx context.Context, in *veto.Input, args map[string]any) (map[string]any, bool, error)

func (f patcherFunc) Patch(ctx context.Context, in *veto.Input, args map[string]any) (map[string]any, bool, error) {
	return f(ctx, in, args)
}

// E21
func TestOnlyAllowedCallsArePatched(t *testing.T) {
	var patched atomic.Int64
	timeout := patcherFunc(func(_ context.Context, in *veto.Input, args map[string]any) (map[string]any, bool, error) {
		patched.Add(1)
		if in.Call.Tool != "Bash" {
			return args, false, nil
		}
		args["timeout"] = 120000
		args["nested"].(map[string]any)["touched"] = true
		return args, true, nil
	})
	noRm := ruleOf("no.rm", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		if in.Call.Args["command"] == "rm -rf /" {
			return veto.Deny("destructive", "Deleting everything is not allowed."), nil
		}
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{noRm}, Patchers: []veto.Patcher{timeout}})

	args := map[string]any{"command": "go test ./...", "nested": map[string]any{}}
	c := call("Bash", args)
	v := f.g.Decide(ctx, c)
	if !v.Allowed || v.Args["timeout"] != 120000 {
		t.Fatalf("allowed call not patched: %+v", v)
	}
	if _, ok := args["timeout"]; ok || len(args["nested"].(map[string]any)) != 0 {
		t.Fatal("the patch changed the caller's arguments")
	}
	if e := f.lastDecision(t, c.Run.Ref); !e.Patched {
		t.Fatal("the decision event does not say the call was patched")
	}

	denied := map[string]any{"command": "rm -rf /", "nested": map[string]any{}}
	before := patched.Load()
	v = f.g.Decide(ctx, call("Bash", denied))
	wantVerdict(t, v, false, veto.StageRule, "no.rm", "destructive")
	if patched.Load() != before || len(denied) != 2 {
		t.Fatal("a denied call was patched")
	}

	if v := f.g.Decide(ctx, call("Read", map[string]any{"file_path": "a"})); !v.Allowed || v.Args != nil {
		t.Fatalf("a call no patcher changed came back with args: %+v", v.Args)
	}

	broken := patcherFunc(func(context.Context, *veto.Input, map[string]any) (map[string]any, bool, error) {
		return nil, false, errors.New("nope")
	})
	f = newFixture(t, veto.Config{Patchers: []veto.Patcher{broken}})
	wantVerdict(t, f.g.Decide(ctx, call("Bash", nil)), false, veto.StagePatch, "", veto.ReasonPatchFailed)

	// An allowed, patched call that cannot be recorded, or whose decision
	// ran out of time, is denied, and the denial carries no patched input.
	f = newFixture(t, veto.Config{Store: appendFails{memstore.New()}, Patchers: []veto.Patcher{timeout}})
	wantVerdict(t, f.g.Decide(ctx, call("Bash", map[string]any{"command": "make", "nested": map[string]any{}})),
		false, veto.StageRecord, "", veto.ReasonStateUnavailable)
	f = newFixture(t, veto.Config{Patchers: []veto.Patcher{timeout}})
	done, cancel := context.WithCancel(ctx)
	cancel()
	c = call("Bash", map[string]any{"command": "make", "nested": map[string]any{}})
	wantVerdict(t, f.g.Decide(done, c), false, veto.StageRecord, "", veto.ReasonCancelled)
	if e := f.lastDecision(t, c.Run.Ref); e.Patched || e.Kind != veto.EventDenied {
		t.Fatalf("a cancelled decision recorded as %+v", e)
	}
}

func TestUnreachableStoreDenies(t *testing.T) {
	store := memstore.New()
	f := newFixture(t, veto.Config{Store: store})
	store.Fail(errors.New("disk on fire"))
	v := f.g.Decide(ctx, call("Read", nil))
	wantVerdict(t, v, false, veto.StageState, "", veto.ReasonStateUnavailable)
	if strings.Contains(mustJSON(t, v)+f.log.String(), "disk on fire") {
		t.Fatal("the store's error text leaked")
	}
}

// appendFails wraps a store whose appends fail, as a full disk would.
type appendFails struct{ *memstore.Store }

func (appendFails) Append(context.Context, string, uint64, []veto.Event) error {
	return errors.New("no space")
}

func TestUnrecordableAllowIsDenied(t *testing.T) {
	f := newFixture(t, veto.Config{Store: appendFails{memstore.New()}})
	wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StageRecord, "", veto.ReasonStateUnavailable)
}

// racing appends one foreign event between the gate's load and its append,
// once, as a second process would.
type racing struct {
	*memstore.Store
	raced atomic.Bool
}

func (r *racing) Append(ctx context.Context, run string, next uint64, evs []veto.Event) error {
	if !r.raced.Swap(true) {
		foreign := []veto.Event{{V: veto.EventVersion, Run: run, Seq: next, Kind: veto.EventAllowed, CallID: "other", Tool: "Bash"}}
		if next == 1 {
			ok := true
			foreign = []veto.Event{{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Complete: &ok},
				{V: veto.EventVersion, Run: run, Seq: 2, Kind: veto.EventAllowed, CallID: "other", Tool: "Bash"}}
		}
		if err := r.Store.Append(ctx, run, next, foreign); err != nil {
			return err
		}
	}
	return r.Store.Append(ctx, run, next, evs)
}

// losing refuses a run's first appends as lost to another writer, and
// notes what each try's load was asked: to hold the run's row or not.
type losing struct {
	*memstore.Store
	lose     int
	held     []bool
	released atomic.Int64
}

func (l *losing) Load(ctx context.Context, run string) (veto.RunState, error) {
	n := loaded.From(ctx)
	l.held = append(l.held, n != nil && n.Hold)
	if n != nil {
		n.OnRelease(func() { l.released.Add(1) })
	}
	return l.Store.Load(ctx, run)
}

func (l *losing) Append(ctx context.Context, run string, next uint64, evs []veto.Event) error {
	if l.lose > 0 {
		l.lose--
		return veto.ErrConflict
	}
	return l.Store.Append(ctx, run, next, evs)
}

// A decision, and an observation, whose tries lose to another writer ask
// their store to hold the run's row from the third try on (a try that
// holds it cannot lose, sqlstore/rowhold.go); every try's note is
// released, appended or not, so that nothing stays held.
func TestTriesAfterTwoLostHoldTheRunsRow(t *testing.T) {
	l := &losing{Store: memstore.New(), lose: 3}
	f := newFixture(t, veto.Config{Store: l})
	v := f.g.Decide(ctx, inRun(veto.Run{Ref: "r", Fresh: true}, "c1", "Read", nil))
	if !v.Allowed {
		t.Fatalf("refused: %s %s", v.Reason, v.Message)
	}
	if want := []bool{false, false, true, true}; !slices.Equal(l.held, want) {
		t.Fatalf("the tries asked to hold the row: %v, want %v", l.held, want)
	}
	if n := l.released.Load(); n != 4 {
		t.Fatalf("%d of 4 tries' notes released", n)
	}
	l.held, l.lose = nil, 2
	l.released.Store(0)
	if err := f.g.Observe(ctx, "r", veto.Observation{CallID: "c1", Tool: "Read", Outcome: veto.Succeeded}); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, true}; !slices.Equal(l.held, want) || l.released.Load() != 3 {
		t.Fatalf("the observation's tries asked to hold the row: %v, %d released; want %v, 3", l.held, l.released.Load(), want)
	}
	// A dry run appends nothing: it asks nothing held, and has no note.
	l.held = nil
	f.g.DryRun(ctx, inRun(veto.Run{Ref: "r"}, "c2", "Read", nil))
	if !slices.Equal(l.held, []bool{false}) {
		t.Fatalf("a dry run's load was asked %v", l.held)
	}
}

func TestConcurrentAppendRedecidesOnNewHistory(t *testing.T) {
	var seen []int
	r := ruleOf("sees", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		seen = append(seen, in.History.Len())
		return veto.Allow(), nil
	})
	store := &racing{Store: memstore.New()}
	f := newFixture(t, veto.Config{Store: store, Rules: []veto.Rule{r}})
	v := f.g.Decide(ctx, inRun(veto.Run{Ref: "race", Fresh: true}, "mine", "Read", nil))
	if !v.Allowed || !slices.Equal(seen, []int{0, 1}) {
		t.Fatalf("allowed=%v, rule saw history lengths %v; want a second decision on the other writer's call", v.Allowed, seen)
	}
	if h := f.history(t, "race"); h.Len() != 2 || h.At(0).CallID != "other" {
		t.Fatalf("history %+v", h)
	}
}

func TestExplainShowsEveryRuleAndRecordsNothing(t *testing.T) {
	c3 := allowRule("c3")
	f := newFixture(t, veto.Config{Rules: []veto.Rule{allowRule("a1"), denyRule("b2", "no_b"), c3,
		needsRule("d4", veto.Needs{KnownTarget: true})}})
	c := call("Read", nil)
	e := f.g.Explain(ctx, c)
	wantVerdict(t, e.Verdict, false, veto.StageRule, "b2", "no_b")
	var got []string
	for _, s := range e.Rules {
		got = append(got, s.Rule+"="+s.Outcome)
	}
	if want := []string{"a1=allow", "b2=deny", "c3=allow", "d4=needs_known_target"}; !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if !e.HistoryComplete || e.HistoryLen != 0 {
		t.Fatalf("history facts %+v", e)
	}
	if evs := f.events(t, c.Run.Ref); len(evs) != 0 {
		t.Fatalf("explain recorded %d events", len(evs))
	}
	// A call refused before the rules shows them not reached.
	e = f.g.Explain(ctx, &veto.Call{Tool: strings.Repeat("x", 300)})
	if e.Verdict.Reason != veto.ReasonBoundsExceeded || e.Rules[0].Outcome != "not_reached" {
		t.Fatalf("%+v", e)
	}
}
