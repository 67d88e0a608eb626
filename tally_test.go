package veto_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rules/sequence"
)

// hiddenHistory is a store whose loaded histories cannot be read: only its
// running tally answers, as for a run of 100,000 observations never loaded.
type hiddenHistory struct {
	*memstore.Store
	t *testing.T
}

func (h hiddenHistory) Load(ctx context.Context, run string) (veto.RunState, error) {
	st, err := h.Store.Load(ctx, run)
	if err != nil || !st.Exists() {
		return st, err
	}
	if st.Tally == nil {
		h.t.Error("the store kept no tally")
	}
	st.History = veto.LazyHistory(st.History.Len(), st.History.Complete(), func() ([]veto.Observation, error) {
		h.t.Error("a decision read the run's observations")
		return nil, veto.ErrHistoryUnavailable
	})
	return st, nil
}

// The history rules decide through a gate from the store's running tally
// alone: a read of private material taints the run whatever became of it
// (succeeded, failed, cancelled or never reported), a denied one does not,
// and the calls let through are counted, as the history adds them up.
//
// E28
func TestHistoryRulesDecideFromTheStoresTally(t *testing.T) {
	secret := veto.Target{Kind: veto.TargetFile, ID: "/w/secrets/k"}
	rules, err := sequence.Rules(sequence.Config{Private: []string{"secrets/**"}, MaxCalls: map[string]int{"Write": 2}})
	if err != nil {
		t.Fatal(err)
	}
	tools := []veto.Descriptor{{Name: "Read", Caps: veto.CapReads}, {Name: "Write", Caps: veto.CapWrites}, {Name: "WebFetch", Caps: veto.CapNetwork}}
	for _, tc := range []struct {
		outcome veto.Outcome
		taints  bool
	}{
		{veto.Succeeded, true}, {veto.Failed, true}, {veto.Cancelled, true}, {veto.Pending, true}, {veto.Denied, false},
	} {
		t.Run(string(tc.outcome), func(t *testing.T) {
			f := newFixture(t, veto.Config{Store: hiddenHistory{memstore.New(), t}, Rules: rules, Tools: tools})
			run := veto.Run{Ref: "tally-" + string(tc.outcome), Fresh: true}
			if v := f.g.Decide(ctx, inRun(run, "read", "Read", nil)); !v.Allowed {
				t.Fatalf("read: %+v", v)
			}
			if err := f.g.Observe(ctx, run.Ref, veto.Observation{CallID: "read", Tool: "Read", Outcome: tc.outcome, Target: secret}); err != nil {
				t.Fatal(err)
			}
			v := f.g.Decide(ctx, inRun(run, "send", "WebFetch", nil))
			if tc.taints && (v.Allowed || v.Rule != "sequence.no_egress_after_private_read") {
				t.Fatalf("egress after a %s private read: %+v; want denied by sequence.no_egress_after_private_read", tc.outcome, v)
			}
			if !tc.taints && !v.Allowed {
				t.Fatalf("egress after a denied private read: %+v; want allowed", v)
			}
		})
	}
	t.Run("max-calls", func(t *testing.T) {
		f := newFixture(t, veto.Config{Store: hiddenHistory{memstore.New(), t}, Rules: rules, Tools: tools})
		run := veto.Run{Ref: "tally-calls", Fresh: true}
		for i, want := range []bool{true, true, false} {
			v := f.g.Decide(ctx, inRun(run, "w"+itoa(i), "Write", nil))
			if v.Allowed != want {
				t.Fatalf("write %d: %+v; want allowed=%v", i+1, v, want)
			}
		}
		if v := f.g.Decide(ctx, inRun(run, "w3", "Write", nil)); v.Allowed || v.Rule != "sequence.max_calls" {
			t.Fatalf("fourth write: %+v", v)
		}
	})
}

// HistoryTally, the reference every store's tally is held to, adds up a
// history as veto.Tally documents: calls let through by tool whatever
// their outcome, failed calls by known target, and the first touch of
// each file by each tool, in execution order.
func TestHistoryTallyAddsUpTheHistory(t *testing.T) {
	a := veto.Target{Kind: veto.TargetFile, ID: "/w/a"}
	b := veto.Target{Kind: veto.TargetFile, ID: "/w/b"}
	u := veto.Target{Kind: "url", ID: "x.example"}
	h := veto.NewHistory([]veto.Observation{
		{Seq: 2, CallID: "1", Tool: "Read", Outcome: veto.Denied, Target: a},
		{Seq: 3, CallID: "2", Tool: "Read", Outcome: veto.Cancelled, Target: a},
		{Seq: 4, CallID: "3", Tool: "Read", Outcome: veto.Succeeded, Target: a},
		{Seq: 5, CallID: "4", Tool: "Write", Outcome: veto.Failed, Target: a},
		{Seq: 6, CallID: "5", Tool: "Write", Outcome: veto.Failed, Target: b},
		{Seq: 7, CallID: "6", Tool: "Write", Outcome: veto.Failed, Target: a},
		{Seq: 8, CallID: "7", Tool: "WebFetch", Outcome: veto.Failed, Target: u},
		{Seq: 9, CallID: "8", Tool: "Bash", Outcome: veto.Failed},
		{Seq: 10, CallID: "9", Tool: "Grep", Outcome: veto.Pending, Target: b},
		{Seq: 11, CallID: "10", Tool: "Bash", Outcome: veto.Denied},
	}, true)
	tally := veto.HistoryTally(&h)
	calls, err := tally.Calls(ctx)
	if want := map[string]int{"Read": 2, "Write": 3, "WebFetch": 1, "Bash": 1, "Grep": 1}; err != nil || !maps.Equal(calls, want) {
		t.Errorf("Calls = %v %v, want %v", calls, err, want)
	}
	for target, want := range map[veto.Target]map[string]int{
		a: {"Write": 2}, b: {"Write": 1}, u: {"WebFetch": 1}, {}: {},
	} {
		if got, err := tally.Failed(ctx, target); err != nil || !maps.Equal(got, want) {
			t.Errorf("Failed(%v) = %v %v, want %v", target, got, err, want)
		}
	}
	files, err := tally.Files(ctx)
	var ids []string
	for _, o := range files {
		ids = append(ids, o.CallID)
	}
	if want := []string{"2", "4", "5", "9"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("Files = %v %v, want the first touches %v", ids, err, want)
	}
}
