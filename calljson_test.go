package veto_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// A call survives its JSON form: every field, the time, numbers as
// json.Number, the run and its initial history.
func TestCallJSONRoundTrip(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	c := veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": "make", "n": json.Number("3"), "l": []any{true, nil}},
		Actor: veto.Actor{Kind: "agent", ID: "sub", Agent: "x"}, Cwd: "/w", Workspace: "/w", Time: at,
		Run: veto.Run{Ref: "r", PriorTurns: 1, PriorCalls: 2, Retries: 3, Fresh: true, AllowedTools: []string{"Bash"}, TrustZone: "local",
			Initial: []veto.Observation{{Seq: 2, CallID: "p", Tool: "Read", Outcome: veto.Cancelled, Target: veto.Target{Kind: "file", ID: "/a"}}}}}
	b, err := veto.EncodeCall(&c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := veto.DecodeCall(b, veto.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, c)
	}
	// Without a run, a call is a fresh run of its own; with one, fresh must
	// be said; null args are none.
	for raw, fresh := range map[string]bool{
		`{"tool":"Read"}`:                        true,
		`{"tool":"Read","run":{"ref":"r"}}`:      false,
		`{"tool":"Read","run":{"fresh":false}}`:  false,
		`{"tool":"Read","run":{"fresh":true}}`:   true,
		`{"tool":"Read","args":null,"cwd":"/w"}`: true,
	} {
		c, err := veto.DecodeCall([]byte(raw), veto.DefaultLimits)
		if err != nil || c.Run.Fresh != fresh || c.Args != nil || !c.Time.IsZero() || c.Run.Initial != nil {
			t.Errorf("%s: %+v %v; want fresh=%v, no args, time or history", raw, c, err, fresh)
		}
	}
	c2, err := veto.DecodeCall([]byte(`{"tool":"Read","history":{"observations":[]}}`), veto.DefaultLimits)
	if err != nil || c2.Run.Initial == nil || len(c2.Run.Initial) != 0 {
		t.Errorf("an empty history is an authoritative empty one: %+v %v", c2.Run.Initial, err)
	}
	plain := veto.Call{Tool: "Read"}
	if b, err := veto.EncodeCall(&plain); err != nil || strings.Contains(string(b), `"time"`) || strings.Contains(string(b), `"history"`) ||
		strings.Contains(string(b), `"args"`) {
		t.Errorf("a call with no time, args or history: %s %v", b, err)
	}
}

// DecodeCall's refusals name the field and never quote the value.
func TestDecodeCallNamesTheField(t *testing.T) {
	const canary = "CANARY-calljson-9e1"
	long := strings.Repeat("f", 80)
	for _, tc := range []struct {
		raw, field, problem string
	}{
		{``, "", "empty input: want one JSON object"},
		{`{"tool":"Read"`, "", "the JSON ends too early"},
		{`{"tool":"Read",}`, "", "not valid JSON (at byte 16)"},
		{`{"tool":"Read"} {}`, "", "unexpected data after the call object"},
		{`{"tool":"Read"} x`, "", "unexpected data after the call object"},
		{`{}`, "tool", "required, and must name the tool"},
		{`{"tool":""}`, "tool", "required, and must name the tool"},
		{`{"tool":"Read","color":"` + canary + `"}`, "color", "unknown field"},
		{`{"tool":"Read","` + long + `":1}`, long[:64] + "…", "unknown field"},
		{`{"tool":7}`, "tool", "want a string, got number"},
		{`{"tool":"Read","run":{"retries":"` + canary + `"}}`, "run.retries", "want a number, got string"},
		{`{"tool":"Read","run":{"fresh":"yes"}}`, "run.fresh", "want true or false, got string"},
		{`{"tool":"Read","run":{"allowed_tools":"Bash"}}`, "run.allowed_tools", "want an array, got string"},
		{`{"tool":"Read","run":"r"}`, "run", "want an object, got string"},
		{`{"tool":"Read","args":["` + canary + `"]}`, "args", "must be a JSON object"},
		{`{"tool":"Read","history":{"observations":[{"call_id":"a","tool":"R","outcome":"failed"},{"call_id":"b","tool":"R","outcome":"maybe"}]}}`,
			"history.observations[1].outcome", "must be one of succeeded, failed, denied, cancelled, pending"},
		{`{"tool":"Read","history":{"observations":[{"call_id":"a","outcome":"failed"}]}}`, "history.observations[0]", "needs a tool and a call_id"},
		{`{"tool":"Read","history":{"observations":[{"tool":"R","outcome":"failed"}]}}`, "history.observations[0]", "needs a tool and a call_id"},
	} {
		_, err := veto.DecodeCall([]byte(tc.raw), veto.DefaultLimits)
		var fe *veto.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a FieldError", tc.raw, err)
			continue
		}
		if fe.Field != tc.field || fe.Problem != tc.problem {
			t.Errorf("%s: field %q problem %q; want %q %q", tc.raw, fe.Field, fe.Problem, tc.field, tc.problem)
		}
		want := tc.problem
		if tc.field != "" {
			want = "field " + tc.field + ": " + tc.problem
		}
		if err.Error() != want {
			t.Errorf("%s: %q, want %q", tc.raw, err.Error(), want)
		}
		noCanary(t, canary, "a decode error", err.Error())
	}
	l := veto.DefaultLimits
	l.MaxArgBytes = 10
	big := `{"tool":"Read","cwd":"` + strings.Repeat("w", veto.MaxCallJSON(l)) + `"}`
	var fe *veto.FieldError
	if _, err := veto.DecodeCall([]byte(big), l); !errors.As(err, &fe) || !strings.Contains(fe.Problem, "larger than") {
		t.Errorf("an oversized call: %v", err)
	}
	if veto.MaxCallJSON(l) != 40+1<<20 {
		t.Errorf("MaxCallJSON = %d", veto.MaxCallJSON(l))
	}
	at := `{"tool":"Read","cwd":"` + strings.Repeat("w", veto.MaxCallJSON(l)-len(`{"tool":"Read","cwd":""}`)) + `"}`
	if _, err := veto.DecodeCall([]byte(at), l); err != nil {
		t.Errorf("a call of exactly the most bytes: %v", err)
	}
}

// A call without a time is decided, and recorded, at the gate's clock.
func TestDecisionsTakeTheGatesClock(t *testing.T) {
	at := time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC)
	f := newFixture(t, veto.Config{Now: func() time.Time { return at }})
	c := call("Read", nil)
	f.g.Decide(ctx, c)
	for _, e := range f.events(t, c.Run.Ref) {
		if !e.Time.Equal(at) {
			t.Fatalf("event %s at %v, want the gate's clock %v", e.Kind, e.Time, at)
		}
	}
	given := at.Add(-time.Hour)
	c = call("Read", nil)
	c.Time = given
	f.g.Decide(ctx, c)
	if e := f.lastDecision(t, c.Run.Ref); !e.Time.Equal(given) {
		t.Fatalf("a call's own time %v recorded as %v", given, e.Time)
	}
}
