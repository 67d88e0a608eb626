package veto_test

import (
	"context"
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
