package evidence_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/evidence"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// BenchmarkDecideSigning is a decision through a gate (no rules: the load
// of the run and the append are the cost) over 100 runs, with the signer
// off, signing as veto serve does by default (every 1000 events or 10 s,
// looked at each second), and signing every 10 events looked at each
// millisecond; on SQLite and PostgreSQL. p50 and p99 are of the
// decisions' own times; checkpoints/op says how often it signed.
func BenchmarkDecideSigning(b *testing.B) {
	open := map[string]func(b *testing.B) backend{
		"sqlite": func(b *testing.B) backend {
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "veto.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return backend{"sqlite", s, "sqlite"}
		},
		"postgres": func(b *testing.B) backend {
			s, err := postgres.Open(ctx, pgtest.Fresh(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return backend{"postgres", s, "postgres"}
		},
	}
	modes := []struct {
		name  string
		every int
		poll  time.Duration
	}{
		{"off", 0, 0},
		{"every1000", 1000, time.Second},
		{"every10", 10, time.Millisecond},
	}
	for _, store := range []string{"sqlite", "postgres"} {
		for _, m := range modes {
			b.Run(store+"/"+m.name, func(b *testing.B) {
				be := open[store](b)
				g, err := veto.NewGate(veto.Config{Store: be.store})
				if err != nil {
					b.Fatal(err)
				}
				var table *sqlstore.Checkpoints
				stop := func() {}
				if m.every > 0 {
					table = be.table()
					s, err := evidence.NewSigner(evidence.Options{Key: newKey(b), Table: table, Every: m.every, Interval: 10 * time.Second, Poll: m.poll})
					if err != nil {
						b.Fatal(err)
					}
					rctx, cancel := context.WithCancel(ctx)
					var wg sync.WaitGroup
					wg.Go(func() { s.Run(rctx) })
					stop = func() { cancel(); wg.Wait() }
				}
				times := make([]time.Duration, 0, 1<<16)
				i := 0
				for b.Loop() {
					i++
					c := &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: fmt.Sprint("run", i%100), Fresh: true}}
					t0 := time.Now()
					if v := g.Decide(ctx, c); !v.Allowed {
						b.Fatal(v.Reason)
					}
					times = append(times, time.Since(t0))
				}
				b.StopTimer()
				stop()
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
				if table != nil {
					last, err := table.Last(ctx)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(last.N)/float64(i), "checkpoints/op")
				}
			})
		}
	}
}

// BenchmarkSignCheckpoint is the signer's own work for one checkpoint of
// 100 runs that moved: reading the last checkpoint and the moved heads
// (with their events' bytes), signing, and the transaction that adds it.
// The decisions that move the runs are not timed.
func BenchmarkSignCheckpoint(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		b.Run(store, func(b *testing.B) {
			var be backend
			if store == "sqlite" {
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "veto.db"), sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				be = backend{store, s, store}
			} else {
				s, err := postgres.Open(ctx, pgtest.Fresh(b))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				be = backend{store, s, store}
			}
			g := gateOn(b, be.store)
			sg := signer(b, newKey(b), be.table())
			i := 0
			for b.Loop() {
				b.StopTimer()
				for r := range 100 {
					i++
					if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: fmt.Sprint("run", r), Fresh: true}}); !v.Allowed {
						b.Fatal(v.Reason)
					}
				}
				b.StartTimer()
				if n, err := sg.SignOnce(ctx); err != nil || n != 100 {
					b.Fatalf("signed %d heads: %v", n, err)
				}
			}
		})
	}
}
