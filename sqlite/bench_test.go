package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rules/sequence"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/tools"
)

// BenchmarkAppendDecision is one decision recorded in SQLite
// (synchronous=NORMAL, WAL): the load of the run, no rules, one event.
func BenchmarkAppendDecision(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "veto.db"))
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Read", Run: veto.Run{Ref: "bench", Fresh: true}}); !v.Allowed {
			b.Fatal(v.Reason)
		}
	}
}

// BenchmarkHeldFileDecision is BenchmarkAppendDecision as a long-lived
// process makes it (the hook server, veto serve, veto mcp): the file
// proved unmoved at each Acquire, and the WAL checkpointed by the store
// itself.
func BenchmarkHeldFileDecision(b *testing.B) {
	path := filepath.Join(b.TempDir(), "veto.db")
	open(b, path).Close()
	f := sqlite.OpenFile(path, sqlite.Options{Verify: true})
	defer f.Close()
	g, err := veto.NewGate(veto.Config{Store: f})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		release, err := f.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Read", Run: veto.Run{Ref: "bench", Fresh: true}})
		release()
		if !v.Allowed {
			b.Fatal(v.Reason)
		}
	}
}

// BenchmarkLoadProjection is the read a decision starts with.
func BenchmarkLoadProjection(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "veto.db"))
	fill(b, s, "r", 1000)
	for b.Loop() {
		if _, err := s.Load(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}

// fill gives run n observations, in batches of 1,000 events.
func fill(b testing.TB, s *sqlstore.Store, run string, n int) { fillWith(b, s, run, n, nil) }

// fillWith is fill with target(i) as the i-th observation's target.
func fillWith(b testing.TB, s *sqlstore.Store, run string, n int, target func(i int) veto.Target) {
	b.Helper()
	ok := true
	if err := s.Append(ctx, run, 1, []veto.Event{{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Complete: &ok, Time: time.Now()}}); err != nil {
		b.Fatal(err)
	}
	next := uint64(2)
	for done := 0; done < n; {
		batch := make([]veto.Event, 0, 1000)
		for ; len(batch) < 1000 && done < n; done++ {
			e := veto.Event{V: veto.EventVersion, Run: run, Seq: next + uint64(len(batch)), Kind: veto.EventAllowed,
				CallID: fmt.Sprint("f", done), Tool: "Read", Time: time.Now()}
			if target != nil {
				e.Target = target(done)
			}
			batch = append(batch, e)
		}
		if err := s.Append(ctx, run, next, batch); err != nil {
			b.Fatal(err)
		}
		next += uint64(len(batch))
	}
}

// BenchmarkDecideWithHistory decides in a run of 10 and of 100,000 prior
// observations, with a rule that needs the complete history (but does
// not read every observation): the cost must not grow with the run.
func BenchmarkDecideWithHistory(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("observations=%d", n), func(b *testing.B) {
			s := open(b, filepath.Join(b.TempDir(), "veto.db"))
			fill(b, s, "r", n)
			g, err := veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{needsHistory{}}})
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("d", i), Tool: "Read", Run: veto.Run{Ref: "r"}}); !v.Allowed {
					b.Fatal(v.Reason)
				}
			}
		})
	}
}

// BenchmarkDecideWithHistoryRules is the same with the history rules on
// (sequence.max_calls for every tool, sequence.no_egress_after_private_read)
// deciding a WebFetch, in a run whose reads touched the same 10 files:
// they read the run's tally, not its observations. (The taint check reads
// one tally entry per file and tool touched: that count, not the run's
// length, is what its cost follows.)
func BenchmarkDecideWithHistoryRules(b *testing.B) {
	distinct := 10
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("observations=%d", n), func(b *testing.B) {
			s := open(b, filepath.Join(b.TempDir(), "veto.db"))
			fillWith(b, s, "r", n, func(i int) veto.Target {
				return veto.Target{Kind: "file", ID: fmt.Sprintf("/w/src/f%d.go", i%distinct)}
			})
			descs := map[string]*veto.Descriptor{}
			for _, d := range tools.Defaults() {
				descs[d.Name] = &d
			}
			rules, err := sequence.Rules(sequence.Config{Private: []string{"secrets/**"}, MaxCalls: map[string]int{"*": 1 << 30},
				Tool: func(name string) *veto.Descriptor { return descs[name] }})
			if err != nil {
				b.Fatal(err)
			}
			g, err := veto.NewGate(veto.Config{Store: s, Rules: rules, Tools: tools.Defaults()})
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				c := &veto.Call{ID: fmt.Sprint("d", i), Tool: "WebFetch", Args: map[string]any{"url": "https://example.com/", "prompt": "x"}, Run: veto.Run{Ref: "r"}}
				if v := g.Decide(ctx, c); !v.Allowed {
					b.Fatal(v.Rule, v.Reason)
				}
			}
		})
	}
}

type needsHistory struct{}

func (needsHistory) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "needs.history", Needs: veto.Needs{CompleteHistory: true}}
}
func (needsHistory) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	if in.History.Len() < 1 {
		return veto.Deny("empty", "no history"), nil
	}
	return veto.Allow(), nil
}
