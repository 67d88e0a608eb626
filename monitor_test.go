package veto_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vetohq/veto"
)

// A rule in monitor mode decides as usual, but its refusal lets the call
// run: the allow records which rule would have refused it and why. A rule
// not in monitor mode after it still refuses, and nothing but the rules is
// monitored: a bound is enforced whatever the mode.
//
// E37
func TestMonitorRuleRecordsWouldDeny(t *testing.T) {
	ctx := context.Background()
	failing := ruleOf("watch.fails", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Decision{}, errors.New("boom")
	})
	asking := ruleOf("watch.asks", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Ask("needs_person", "A person decides."), nil
	})
	cases := []struct {
		name        string
		rules       []veto.Rule
		monitor     map[string]bool
		allowed     bool
		rule        string // the verdict's (a denial's)
		would, wrsn string
	}{
		{"enforced", []veto.Rule{denyRule("watch.deny", "nope")}, nil, false, "watch.deny", "", ""},
		{"monitored", []veto.Rule{denyRule("watch.deny", "nope")}, map[string]bool{"watch.deny": true}, true, "", "watch.deny", "nope"},
		{"first monitored wins", []veto.Rule{denyRule("watch.a", "first"), denyRule("watch.b", "second")},
			map[string]bool{"watch.a": true, "watch.b": true}, true, "", "watch.a", "first"},
		{"enforced after monitored", []veto.Rule{denyRule("watch.a", "first"), denyRule("watch.b", "second")},
			map[string]bool{"watch.a": true}, false, "watch.b", "", ""},
		{"failure monitored", []veto.Rule{failing}, map[string]bool{"watch.fails": true}, true, "", "watch.fails", veto.ReasonRuleFailed},
		{"failure enforced", []veto.Rule{failing}, nil, false, "watch.fails", "", ""},
		{"question monitored", []veto.Rule{asking}, map[string]bool{"watch.asks": true}, true, "", "watch.asks", "needs_person"},
		{"needs history monitored", []veto.Rule{needsRule("watch.hist", veto.Needs{CompleteHistory: true})},
			map[string]bool{"watch.hist": true}, true, "", "watch.hist", veto.ReasonHistoryIncomplete},
		{"other rule monitored", []veto.Rule{denyRule("watch.deny", "nope")}, map[string]bool{"watch.other": true}, false, "watch.deny", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, veto.Config{Rules: tc.rules, Monitor: tc.monitor})
			c := call("Bash", map[string]any{"command": "true"})
			c.Run.Fresh = false // a history veto cannot prove: the needs rule refuses
			v := f.g.Decide(ctx, c)
			if v.Allowed != tc.allowed || v.Rule != tc.rule || v.WouldDeny != tc.would || v.WouldReason != tc.wrsn {
				t.Fatalf("verdict allowed=%v rule=%q would=%q/%q, want %v %q %q/%q", v.Allowed, v.Rule, v.WouldDeny, v.WouldReason,
					tc.allowed, tc.rule, tc.would, tc.wrsn)
			}
			ev := f.lastDecision(t, c.Run.Ref)
			if ev.WouldDeny != tc.would || ev.WouldReason != tc.wrsn {
				t.Fatalf("event would=%q/%q, want %q/%q", ev.WouldDeny, ev.WouldReason, tc.would, tc.wrsn)
			}
			if tc.allowed && ev.Kind != veto.EventAllowed {
				t.Fatalf("event kind %s, want an allow", ev.Kind)
			}
		})
	}

	t.Run("bounds are enforced", func(t *testing.T) {
		f := newFixture(t, veto.Config{Rules: []veto.Rule{denyRule("watch.deny", "nope")}, Monitor: map[string]bool{"watch.deny": true},
			Limits: veto.Limits{MaxArgBytes: 8, MaxDepth: 8, MaxString: 8, MaxNodes: 8, MaxName: 256, MaxPath: 4096, MaxHistory: 100}})
		v := f.g.Decide(ctx, call("Bash", map[string]any{"command": "a command longer than the bound"}))
		if v.Allowed || v.Reason != veto.ReasonBoundsExceeded || v.WouldDeny != "" {
			t.Fatalf("verdict %+v, want bounds_exceeded with nothing would-denied", v)
		}
	})
	t.Run("malformed id refused", func(t *testing.T) {
		if _, err := veto.NewGate(veto.Config{Store: newFixture(t, veto.Config{}).store, Monitor: map[string]bool{"Bad Id": true}}); err == nil {
			t.Fatal("NewGate took a malformed monitored rule id")
		}
	})
}
