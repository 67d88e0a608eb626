package veto_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

// Suspend refuses what it cannot park, keeps its own copy of the call,
// and its stored form decodes back, refusing what it cannot read.
func TestSuspendAndItsStoredForm(t *testing.T) {
	f := newFixture(t, veto.Config{Tools: []veto.Descriptor{{Name: "ask", Params: map[string]veto.Role{"b": veto.RoleInput, "a": veto.RoleInput}}}})
	run := veto.Run{Ref: "susp", Fresh: true}
	for name, tc := range map[string]struct {
		c    *veto.Call
		kind veto.SuspendKind
	}{
		"unknown-kind":       {inRun(run, "x", "Read", nil), "later"},
		"past-a-bound":       {inRun(run, "x", strings.Repeat("t", 300), nil), veto.AwaitApproval},
		"no-run":             {&veto.Call{ID: "x", Tool: "Read"}, veto.AwaitApproval},
		"input-of-no-fields": {inRun(run, "x", "Read", nil), veto.AwaitInput},
	} {
		if s, err := f.g.Suspend(ctx, tc.c, tc.kind, nil); err == nil {
			t.Errorf("%s: suspended %+v", name, s)
		}
	}
	if evs := f.events(t, "susp"); len(evs) != 0 {
		t.Fatalf("refused suspensions recorded %+v", evs)
	}
	args := map[string]any{"a": map[string]any{"deep": "x"}}
	s, err := f.g.Suspend(ctx, &veto.Call{Tool: "ask", Args: args, Run: run}, veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Call.ID == "" || s.Call.Time.IsZero() || !slices.Equal(s.Fields, []string{"a", "b"}) || s.Kind != veto.AwaitInput {
		t.Fatalf("suspension %+v", s)
	}
	args["a"].(map[string]any)["deep"] = "changed"
	if s.Call.Args["a"].(map[string]any)["deep"] != "x" {
		t.Fatal("the suspension shares the caller's arguments")
	}
	named, err := f.g.Suspend(ctx, inRun(run, "y", "ask", nil), veto.AwaitInput, []string{"z", "q"})
	if err != nil || !slices.Equal(named.Fields, []string{"q", "z"}) {
		t.Fatalf("named fields %v %v", named.Fields, err)
	}
	if e := f.lastDecisionOrSuspension(t, "susp"); e.Kind != veto.EventSuspended || e.Awaiting != veto.AwaitInput || e.CallID != "y" {
		t.Fatalf("recorded %+v", e)
	}

	b, err := veto.EncodeSuspension(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := veto.DecodeSuspension(b, veto.DefaultLimits)
	if err != nil || back.Kind != s.Kind || !slices.Equal(back.Fields, s.Fields) || back.Call.ID != s.Call.ID ||
		!back.Call.Time.Equal(s.Call.Time) || back.History.Len() != s.History.Len() || back.History.Complete() != s.History.Complete() {
		t.Fatalf("decoded %+v %v", back, err)
	}
	for name, raw := range map[string]string{
		"not-json":     "{",
		"unknown-kind": strings.Replace(string(b), `"kind":"input"`, `"kind":"later"`, 1),
		"bad-call":     strings.Replace(string(b), `"tool":"ask"`, `"tool":""`, 1),
	} {
		if _, err := veto.DecodeSuspension([]byte(raw), veto.DefaultLimits); err == nil {
			t.Errorf("%s decoded", name)
		}
	}
	// A damaged history inside is no error: it loads incomplete.
	damaged := strings.Replace(string(b), `"complete":true`, `"complete":"yes"`, 1)
	if !strings.Contains(string(b), `"complete":true`) {
		t.Fatalf("stored form %s", b)
	}
	if d, err := veto.DecodeSuspension([]byte(damaged), veto.DefaultLimits); err != nil || d.History.Complete() {
		t.Fatalf("damaged history: %+v %v", d, err)
	}
	var fe *veto.FieldError
	if _, err := veto.DecodeSuspension([]byte(strings.Replace(string(b), `"tool":"ask"`, `"tool":7`, 1)), veto.DefaultLimits); !errors.As(err, &fe) {
		t.Errorf("a malformed call: %v", err)
	}
}

// lastDecisionOrSuspension returns the last event of a run.
func (f *fixture) lastDecisionOrSuspension(t *testing.T, run string) veto.Event {
	t.Helper()
	evs := f.events(t, run)
	if len(evs) == 0 {
		t.Fatalf("run %s has no events", run)
	}
	return evs[len(evs)-1]
}
