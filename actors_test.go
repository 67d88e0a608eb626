package veto_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// TestValidName: a name holds no character that starts a line, redraws
// a terminal or reorders what a person reads.
func TestValidName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"", true}, {"run-1.a_b", true}, {"mcp__srv__get", true}, {"dir/tool", true}, {"héllo wörld", true}, {"日本", true},
		{"a\nb", false}, {"a\rb", false}, {"a\x00b", false}, {"a\tb", false}, {"\x1b[2J", false}, {"a\x7fb", false},
		{"a\u0085b", false}, {"a\u2028b", false}, {"a\u2029b", false}, {"a\u202eb", false}, {"a\u2066b", false},
		{"a\u200fb", false}, {"a\u061cb", false}, {"a\xffb", false}, {"\xc3", false},
	} {
		if got := veto.ValidName(c.name); got != c.ok {
			t.Errorf("ValidName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}

// TestNamesAndTimesAreBounded: a call whose run reference holds a
// control character is refused and recorded nowhere; one whose call id,
// tool or actor does is refused bounds_exceeded, recorded under names of
// veto's own; a time the stores cannot hold is refused and recorded at
// the gate's clock.
func TestNamesAndTimesAreBounded(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, veto.Config{})
	v := f.g.Decide(ctx, &veto.Call{ID: "c1", Tool: "Read", Run: veto.Run{Ref: "r1\nevent: x", Fresh: true}})
	if v.Allowed || v.Reason != veto.ReasonBoundsExceeded || v.Run != "" {
		t.Fatalf("run ref with a newline: %+v", v)
	}
	if runs, _ := f.store.Runs(ctx); len(runs) != 0 {
		t.Fatalf("recorded: %q", runs)
	}
	for _, c := range []veto.Call{
		{ID: "c\n1", Tool: "Read"},
		{ID: "c2", Tool: "Re\x1bad"},
		{ID: "c3", Tool: "Read", Actor: veto.Actor{Kind: "agent", ID: "a\u202e"}},
		{ID: "c4", Tool: "Read", Time: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "c5", Tool: "Read", Time: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		c.Run = veto.Run{Ref: "r2", Fresh: true}
		before := time.Now().Add(-time.Second)
		v := f.g.Decide(ctx, &c)
		if v.Allowed || v.Reason != veto.ReasonBoundsExceeded {
			t.Fatalf("%+v: %+v", c, v)
		}
		evs := f.events(t, "r2")
		e := evs[len(evs)-1]
		if !veto.ValidName(e.CallID) || !veto.ValidName(e.Tool) || !veto.ValidName(e.Actor.ID) || e.Time.Before(before) || e.Time.After(time.Now()) {
			t.Fatalf("recorded %+v", e)
		}
	}
	if err := f.g.Start(ctx, veto.Run{Ref: "r\n3", Fresh: true}); err == nil {
		t.Fatal("a run ref with a newline was started")
	}
	if err := f.g.Observe(ctx, "r2", veto.Observation{CallID: "c\r", Tool: "Read", Outcome: veto.Succeeded}); err == nil {
		t.Fatal("a call id with a carriage return was observed")
	}
}

// TestObserveReportedIsBound: the gate takes a reported observation of a
// call decided in its run for the same actor and tool, and refuses (and
// records) any other; ObserveCall's observation names its observer.
func TestObserveReportedIsBound(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, veto.Config{})
	a := veto.Actor{Kind: "service", ID: "a"}
	run := veto.Run{Ref: "r1", Fresh: true}
	if v := f.g.Decide(ctx, &veto.Call{ID: "c1", Tool: "Read", Actor: a, Run: run}); !v.Allowed {
		t.Fatalf("%+v", v)
	}
	for _, c := range []struct {
		name   string
		call   veto.Call
		reason string
	}{
		{"never decided", veto.Call{ID: "c9", Tool: "Read", Actor: a, Run: run}, veto.ReasonNotDecided},
		{"another tool", veto.Call{ID: "c1", Tool: "Write", Actor: a, Run: run}, veto.ReasonNotDecided},
		{"another actor", veto.Call{ID: "c1", Tool: "Read", Actor: veto.Actor{Kind: "service", ID: "b"}, Run: run}, veto.ReasonObserverMismatch},
		{"another agent kind", veto.Call{ID: "c1", Tool: "Read", Actor: veto.Actor{Kind: "agent", ID: "a"}, Run: run}, veto.ReasonObserverMismatch},
		{"the actor's own", veto.Call{ID: "c1", Tool: "Read", Actor: veto.Actor{Kind: "service", ID: "a", Agent: "sub"}, Run: run}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := f.g.ObserveReported(ctx, &c.call, veto.Succeeded)
			var or *veto.ObservationRefused
			switch {
			case c.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.reason != "" && (!errors.As(err, &or) || or.Reason != c.reason || !errors.Is(err, veto.ErrObservationRefused)):
				t.Fatalf("got %v, want %s", err, c.reason)
			}
			evs := f.events(t, "r1")
			e := evs[len(evs)-1]
			want := veto.EventObservationRefused
			if c.reason == "" {
				want = veto.EventObserved
			}
			if e.Kind != want || e.CallID != c.call.ID || e.Actor != c.call.Actor || (c.reason != "" && e.Reason != c.reason) {
				t.Fatalf("last event %+v, want %s", e, want)
			}
		})
	}
	if f.g.ObserveReported(ctx, &veto.Call{ID: "x", Tool: "Read", Run: veto.Run{Ref: "none"}}, veto.Succeeded) == nil {
		t.Fatal("an observation of a run with no events was taken")
	}
	if evs := f.events(t, "none"); len(evs) != 0 {
		t.Fatalf("the refusal started a run: %+v", evs)
	}
	if s := f.log.String(); !strings.Contains(s, "observation refused") {
		t.Fatalf("the refusal is not logged: %s", s)
	}
}

// TestGrantIsForTheAskedActor: Answer's event names the actor asked
// about, and only that actor's call of the same tool and arguments uses
// the grant.
func TestGrantIsForTheAskedActor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, veto.Config{Rules: []veto.Rule{asker()}})
	a, b := veto.Actor{Kind: "agent", ID: "a"}, veto.Actor{Kind: "agent", ID: "b"}
	call := func(id string, who veto.Actor) *veto.Call {
		return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": "deploy"}, Actor: who, Run: veto.Run{Ref: "r1", Fresh: true}}
	}
	if v := f.g.Decide(ctx, call("c1", a)); !v.Ask {
		t.Fatalf("%+v", v)
	}
	if err := f.g.Answer(ctx, "r1", "c1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Hour); err != nil {
		t.Fatal(err)
	}
	if v := f.g.Decide(ctx, call("c2", b)); v.Allowed || !v.Ask {
		t.Fatalf("another actor's call: %+v", v)
	}
	if v := f.g.Decide(ctx, call("c3", veto.Actor{Kind: "agent", ID: "a", Agent: "sub"})); !v.Allowed {
		t.Fatalf("the asked actor's (sub-agent's) call: %+v", v)
	}
}
