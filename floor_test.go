package veto_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

// The floor names every missing tool, sorted; a live list that panics is
// unreadable; the check runs once, and a gate without a live list has no floor.
func TestFloorNamesTheMissingToolsInOrder(t *testing.T) {
	f := newFixture(t, veto.Config{PolicyTools: []string{"zeta", "Read", "alpha"},
		LiveTools: func(context.Context) ([]string, error) { return []string{"Read"}, nil }})
	v := f.g.Decide(ctx, call("Read", nil))
	if !strings.Contains(v.Message, "(alpha, zeta)") {
		t.Fatalf("message %q, want the missing tools sorted", v.Message)
	}
	n := 0
	f = newFixture(t, veto.Config{PolicyTools: []string{"Read"},
		LiveTools: func(context.Context) ([]string, error) { n++; panic("client bug") }})
	for range 2 {
		wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), false, veto.StageFloor, "", veto.ReasonFloorMismatch)
	}
	if n != 1 {
		t.Fatalf("a panicking live list was asked %d times, want once", n)
	}
	f = newFixture(t, veto.Config{PolicyTools: []string{"Read"}})
	wantVerdict(t, f.g.Decide(ctx, call("Read", nil)), true, "", "", "")
}

// A resolver's claim past the name or path bound is unresolvable; at the
// bound it is the target; no claim is an unknown target.
func TestResolverClaimsWithinBounds(t *testing.T) {
	l := veto.DefaultLimits
	for _, tc := range []struct {
		name   string
		kind   veto.TargetKind
		id     string
		reason string
	}{
		{"kind-at-bound", veto.TargetKind(strings.Repeat("k", l.MaxName)), "/a", ""},
		{"kind-past-bound", veto.TargetKind(strings.Repeat("k", l.MaxName+1)), "/a", veto.ReasonTargetUnresolvable},
		{"id-at-bound", "file", strings.Repeat("p", l.MaxPath), ""},
		{"id-past-bound", "file", strings.Repeat("p", l.MaxPath+1), veto.ReasonTargetUnresolvable},
	} {
		f := newFixture(t, veto.Config{Resolvers: []veto.Resolver{resolverOf(tc.kind, tc.id, true, nil), resolverOf("", "", false, nil)}})
		v := f.g.Decide(ctx, call("Read", nil))
		if v.Reason != tc.reason || (tc.reason == "" && (v.Target.Kind != tc.kind || v.Target.ID != tc.id)) {
			t.Errorf("%s: %+v", tc.name, v)
		}
	}
}

// A refusal for a bound names the bound; an allow-list entry for a run
// whose reference is past its bound is refused even when a store holds
// such a run.
func TestBoundsNameThemselves(t *testing.T) {
	l := veto.DefaultLimits
	l.MaxHistory = 2
	f := newFixture(t, veto.Config{Limits: l})
	c := call("Read", nil)
	c.Run.Initial = make([]veto.Observation, 3)
	for i := range c.Run.Initial {
		c.Run.Initial[i] = veto.Observation{CallID: "p" + itoa(i), Tool: "Read", Outcome: veto.Succeeded}
	}
	v := f.g.Decide(ctx, c)
	if v.Reason != veto.ReasonBoundsExceeded || !strings.Contains(v.Message, "initial history longer than 2 observations") {
		t.Fatalf("%+v", v)
	}
	long := strings.Repeat("r", veto.DefaultLimits.MaxName+1)
	ok := true
	if err := f.store.Append(ctx, long, 1, []veto.Event{{V: veto.EventVersion, Run: long, Seq: 1, Kind: veto.EventRunStarted, Complete: &ok}}); err != nil {
		t.Fatal(err)
	}
	if err := f.g.AllowEgress(ctx, long, "x.example"); err == nil || errors.Is(err, veto.ErrNoRun) {
		t.Fatalf("an allow-list entry for an over-long run: %v", err)
	}
}
