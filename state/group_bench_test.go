package state_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/state"
)

// Group commit's bounds, to measure others than the stores' own (see
// sqlstore.GroupOptions); unset, each store keeps its dialect's.
var (
	groupBatch   = flag.Int("group.batch", 0, "group commit: the most appends a transaction holds (0: the store's own)")
	groupWait    = flag.Duration("group.wait", -1, "group commit: how long a batch waits to fill (-1: the store's own)")
	groupWriters = flag.Int("group.writers", 0, "group commit: batches written at once (0: the store's own)")
)

// setGroup makes the stores opened from now on use the bounds the flags
// name, over their own.
func setGroup() {
	if *groupBatch == 0 && *groupWait < 0 && *groupWriters == 0 {
		return
	}
	o := sqlstore.GroupOptions{MaxBatch: *groupBatch, MaxWait: max(*groupWait, 0), Writers: *groupWriters}
	sqlstore.GroupOverride = &o
}

// BenchmarkServiceDecide is veto serve's store path without the HTTP:
// the service's state (an SQLite file proved sound before each request,
// or a PostgreSQL pool), a gate on it, and c workers deciding an allowed
// Read each in a run of its own, every decision recorded durably. It
// reports decisions/s; go test -bench ServiceDecide -benchtime 3s ./state
// compares group commit with one commit a decision.
func BenchmarkServiceDecide(b *testing.B) {
	setGroup()
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, c := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", kind, c), func(b *testing.B) {
				n := state.Name{Path: filepath.Join(b.TempDir(), "veto.db")}
				if kind == "postgres" {
					n = state.Name{DSN: pgtest.Fresh(b)}
				}
				svc, err := state.OpenService(context.Background(), n, state.ServiceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer svc.Close()
				g, err := veto.NewGate(veto.Config{Store: svc.Store})
				if err != nil {
					b.Fatal(err)
				}
				benchWorkers(b, c, func(w, i int) error {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					release, err := svc.Acquire(ctx)
					if err != nil {
						return err
					}
					defer release()
					v := g.Decide(ctx, &veto.Call{ID: fmt.Sprintf("c%d", i), Tool: "Read", Run: veto.Run{Ref: fmt.Sprintf("w%d", w), Fresh: true}})
					if !v.Allowed {
						return fmt.Errorf("%s: %s", v.Reason, v.Message)
					}
					return nil
				})
			})
		}
	}
}

// benchWorkers runs b.N calls of fn on c workers (fn gets the worker and
// the call's number) and reports decisions/s; the first error fails it.
func benchWorkers(b *testing.B, c int, fn func(w, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > b.N {
					return
				}
				if err := fn(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-µs/decision")
}

// cpuTime is the CPU time this process has used (user and system), in
// nanoseconds: on a loaded machine it varies less than the wall clock.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
