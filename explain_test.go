package veto_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/vetohq/veto"
)

// knowing is a rule that says what it knows of the run, or panics saying it.
type knowing struct {
	*counting
	notes  []string
	panics bool
}

func (k *knowing) Known(context.Context, *veto.Input) []string {
	if k.panics {
		panic("cannot say")
	}
	return k.notes
}

// Explain lays every rule's outcome open, each rule judged on its own:
// not applicable, needing a complete history or a known target, failed by
// an error, a panic or a malformed reason, denying with its reason, and
// what a Knower knows; the facts it decided on are shown.
func TestExplainLaysEveryOutcomeOpen(t *testing.T) {
	errRule := ruleOf("errs", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Allow(), errors.New("broken")
	})
	panicRule := ruleOf("panics", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) { panic("boom") })
	badReason := ruleOf("bad.reason", veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Deny("Not A Code", "Bad."), nil
	})
	rules := []veto.Rule{
		&scopedRule{counting: denyRule("shell.only", "no_shell"), tool: "Bash"},
		needsRule("needs.history", veto.Needs{CompleteHistory: true}),
		needsRule("needs.target", veto.Needs{KnownTarget: true}),
		errRule, panicRule, badReason,
		&knowing{counting: denyRule("knows", "known_no"), notes: []string{"read /w/a"}},
		&knowing{counting: allowRule("knows.not"), panics: true},
		allowRule("last"),
	}
	f := newFixture(t, veto.Config{Rules: rules})
	run := veto.Run{Ref: "explain-all"} // not fresh: incomplete
	f.g.Decide(ctx, inRun(run, "earlier", "Read", nil))
	e := f.g.Explain(ctx, inRun(run, "now", "Read", nil))
	var got []string
	for _, s := range e.Rules {
		got = append(got, s.Rule+"="+s.Outcome+":"+s.Reason)
	}
	want := []string{"shell.only=not_applicable:", "needs.history=needs_complete_history:", "needs.target=needs_known_target:",
		"errs=failed:", "panics=failed:", "bad.reason=failed:", "knows=deny:known_no", "knows.not=allow:", "last=allow:"}
	if !slices.Equal(got, want) {
		t.Fatalf("steps\n%v\nwant\n%v", got, want)
	}
	if !slices.Equal(e.Rules[6].Known, []string{"read /w/a"}) || !slices.Equal(e.Rules[7].Known, []string{"(the rule failed to say)"}) ||
		e.Rules[0].Known != nil {
		t.Fatalf("known notes %q %q %q", e.Rules[6].Known, e.Rules[7].Known, e.Rules[0].Known)
	}
	if e.HistoryComplete || e.HistoryLen != 1 || e.Target.Known() {
		t.Fatalf("facts: complete %v len %d target %v", e.HistoryComplete, e.HistoryLen, e.Target)
	}
	// The verdict is the decision's own: the first rule that does not allow.
	wantVerdict(t, e.Verdict, false, veto.StageRule, "needs.history", veto.ReasonHistoryIncomplete)
	if n := len(f.events(t, "explain-all")); n != 2 {
		t.Fatalf("explain recorded: %d events", n)
	}
}

// A call outside any run is a run of its own, named after the call.
func TestCallOutsideARunIsItsOwnRun(t *testing.T) {
	f := newFixture(t, veto.Config{})
	v := f.g.Decide(ctx, &veto.Call{ID: "lonely", Tool: "Read"})
	if !v.Allowed || v.Run != "call-lonely" || v.Seq != 2 {
		t.Fatalf("verdict %+v; want allowed in run call-lonely at seq 2", v)
	}
	if e := f.lastDecision(t, "call-lonely"); e.CallID != "lonely" {
		t.Fatalf("decision %+v", e)
	}
	// A call without an id gets one, the same in verdict and record.
	v = f.g.Decide(ctx, &veto.Call{Tool: "Read", Run: veto.Run{Ref: "r-noid", Fresh: true}})
	if v.CallID == "" || f.lastDecision(t, "r-noid").CallID != v.CallID {
		t.Fatalf("verdict call id %q", v.CallID)
	}
}

// tainting is a rule that counts the run's taint: the observations it was
// given, an error, or a panic.
type tainting struct {
	*counting
	obs    []veto.Observation
	err    error
	panics bool
}

func (r *tainting) Taint(context.Context, *veto.Input) ([]veto.Observation, error) {
	if r.panics {
		panic("cannot count")
	}
	return r.obs, r.err
}

// Explain carries a Tainter's count as data (the page draws it without
// parsing notes): read with its observations; unread when the rule errs,
// panics or is not reached; nil for a rule that counts no taint.
func TestExplainCarriesTaintAsData(t *testing.T) {
	obs := []veto.Observation{{Seq: 4, CallID: "c2", Tool: "Read", Outcome: veto.Succeeded}}
	cases := []struct {
		name     string
		rule     *tainting
		call     *veto.Call
		read     bool
		seqs     []uint64
		outcome  string
		notTaint bool
	}{
		{name: "counted", rule: &tainting{counting: allowRule("taints"), obs: obs}, read: true, seqs: []uint64{4}, outcome: "allow"},
		{name: "nothing read", rule: &tainting{counting: allowRule("taints")}, read: true, outcome: "allow"},
		{name: "an error", rule: &tainting{counting: allowRule("taints"), obs: obs, err: errors.New("tally gone")}, outcome: "allow"},
		{name: "a panic", rule: &tainting{counting: allowRule("taints"), panics: true}, outcome: "allow"},
		{name: "not reached", rule: &tainting{counting: allowRule("taints"), obs: obs}, outcome: "not_reached",
			call: &veto.Call{ID: "huge", Tool: "Read", Args: map[string]any{"x": string(make([]byte, veto.DefaultLimits.MaxArgBytes+1))}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, veto.Config{Rules: []veto.Rule{allowRule("first"), c.rule}})
			call := c.call
			if call == nil {
				call = inRun(veto.Run{Ref: "taint", Fresh: true}, "now", "Read", nil)
			}
			e := f.g.Explain(ctx, call)
			if len(e.Rules) != 2 || e.Rules[0].Taint != nil {
				t.Fatalf("steps %+v: a rule that counts no taint carries none", e.Rules)
			}
			st := e.Rules[1]
			if st.Taint == nil || st.Outcome != c.outcome || st.Taint.Read != c.read {
				t.Fatalf("step %+v (taint %+v); want outcome %s, read %v", st, st.Taint, c.outcome, c.read)
			}
			var seqs []uint64
			for _, o := range st.Taint.Observations {
				seqs = append(seqs, o.Seq)
			}
			if !slices.Equal(seqs, c.seqs) || (!c.read && len(st.Taint.Observations) > 0) {
				t.Fatalf("observations %v; want %v", seqs, c.seqs)
			}
		})
	}
}
