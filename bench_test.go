package veto_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
)

// BenchmarkDecide10Rules is one decision through ten rules that all allow
// (each declaring that it needs a complete history), recorded in the
// in-memory store, in runs of 1,000 calls. The store is replaced every
// 10,000 calls so that the figure is the decision's, not the garbage
// collector's scanning of an ever-growing in-memory log.
func BenchmarkDecide10Rules(b *testing.B) {
	var rules []veto.Rule
	for i := range 10 {
		rules = append(rules, ruleOf("r"+strconv.Itoa(i), veto.Needs{CompleteHistory: true}, func(context.Context, *veto.Input) (veto.Decision, error) {
			return veto.Allow(), nil
		}))
	}
	newGate := func() *veto.Gate {
		g, err := veto.NewGate(veto.Config{Rules: rules, Store: memstore.New(), Offer: &veto.Offer{}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	ids := make([]string, 10_000)
	for i := range ids {
		ids[i] = "call-" + strconv.Itoa(i)
	}
	runs := []string{"run-0", "run-1", "run-2", "run-3", "run-4", "run-5", "run-6", "run-7", "run-8", "run-9"}
	args := map[string]any{"file_path": "/work/project/main.go", "offset": 1, "limit": 200}
	ctx := context.Background()
	g := newGate()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(ids) {
			b.StopTimer()
			g, i = newGate(), 0
			b.StartTimer()
		}
		c := &veto.Call{ID: ids[i], Tool: "Read", Args: args, Cwd: "/work/project", Run: veto.Run{Ref: runs[i/1000], Fresh: true}}
		if v := g.Decide(ctx, c); !v.Allowed {
			b.Fatal(v.Reason)
		}
		i++
	}
}

// discardStore keeps nothing: every run has just started, complete and
// empty, and every append succeeds. It isolates the engine's stages from
// the cost of recording.
type discardStore struct{}

var startedEmpty = veto.NewHistory(nil, true)

func (discardStore) Load(_ context.Context, run string) (veto.RunState, error) {
	return veto.RunState{Run: run, Next: 2, History: startedEmpty}, nil
}
func (discardStore) Append(context.Context, string, uint64, []veto.Event) error { return nil }
func (discardStore) Events(context.Context, string, uint64) ([]veto.Event, error) {
	return nil, nil
}

// BenchmarkDecide10RulesUnrecorded is BenchmarkDecide10Rules without the
// store: what the stages cost before the record.
func BenchmarkDecide10RulesUnrecorded(b *testing.B) {
	var rules []veto.Rule
	for i := range 10 {
		rules = append(rules, ruleOf("r"+strconv.Itoa(i), veto.Needs{CompleteHistory: true}, func(context.Context, *veto.Input) (veto.Decision, error) {
			return veto.Allow(), nil
		}))
	}
	g, err := veto.NewGate(veto.Config{Rules: rules, Store: discardStore{}, Offer: &veto.Offer{}})
	if err != nil {
		b.Fatal(err)
	}
	c := &veto.Call{ID: "c", Tool: "Read", Args: map[string]any{"file_path": "/work/project/main.go", "offset": 1, "limit": 200},
		Cwd: "/work/project", Run: veto.Run{Ref: "r", Fresh: true}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v := g.Decide(ctx, c); !v.Allowed {
			b.Fatal(v.Reason)
		}
	}
}
