package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// GroupHarness is what the tests of a SQL store's group commit need: the
// store, and SQL of the store's own that makes a real commit or statement
// fail and holds the store's writer back.
type GroupHarness struct {
	// Open returns a fresh, empty store.
	Open func(t testing.TB) *sqlstore.Store
	// Doom makes the commit of every transaction that stored an event of
	// run fail: a deferred constraint, checked at COMMIT.
	Doom func(t testing.TB, s *sqlstore.Store, run string)
	// Refuse makes the statement that stores an event of run after its
	// first fail, at once, leaving the transaction usable.
	Refuse func(t testing.TB, s *sqlstore.Store, run string)
	// Block holds the store's next transaction back (another writer holds
	// the lock it needs) until release is called.
	Block func(t testing.TB, s *sqlstore.Store) (release func())
}

// RunGroup runs the tests of group commit.
func RunGroup(t *testing.T, h GroupHarness) {
	t.Run("FailedCommitRefusesTheWholeBatch", func(t *testing.T) { groupCommitFails(t, h) })
	t.Run("OneAppendFailsAlone", func(t *testing.T) { groupOneFails(t, h) })
}

// batchBehind queues the appends that start() makes behind a batch held
// back by h.Block: the first append of run "first" is taken alone and
// blocked; the n that follow wait in the queue, and are written in one
// batch once released. It returns first's result.
func batchBehind(t *testing.T, h GroupHarness, s *sqlstore.Store, n int, first func() error, start func()) error {
	t.Helper()
	release := h.Block(t, s)
	firstErr := make(chan error, 1)
	go func() { firstErr <- first() }()
	waitFor(t, s, func(queued, writing int) bool { return queued == 0 && writing == 1 })
	start()
	waitFor(t, s, func(queued, writing int) bool { return queued == n })
	release()
	return <-firstErr
}

func waitFor(t *testing.T, s *sqlstore.Store, ok func(queued, writing int) bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if q, w := s.Batching(); ok(q, w) {
			return
		}
		if time.Now().After(deadline) {
			q, w := s.Batching()
			t.Fatalf("the batch never formed: %d queued, %d writing", q, w)
		}
		time.Sleep(time.Millisecond)
	}
}

// A batch whose commit fails refuses every decision in it and records
// none of them: n concurrent decisions of n runs, one of which the
// database refuses at COMMIT, are all denied state_unavailable, and the
// store holds nothing of any; the store decides again after it.
func groupCommitFails(t *testing.T, h GroupHarness) {
	s := h.Open(t)
	s.SetGroup(sqlstore.GroupOptions{MaxBatch: 64, Writers: 1})
	h.Doom(t, s, "doomed")
	g := gate(t, s)
	const n = 8
	runs := []string{"doomed"}
	for i := 1; i < n; i++ {
		runs = append(runs, fmt.Sprintf("healthy-%d", i))
	}
	verdicts := make([]veto.Verdict, n)
	var wg sync.WaitGroup
	firstErr := batchBehind(t, h, s, n, func() error {
		if v := g.Decide(ctx, &veto.Call{ID: "c0", Tool: "Read", Run: veto.Run{Ref: "first", Fresh: true}}); !v.Allowed {
			return fmt.Errorf("the decision before the batch: %s %s", v.Reason, v.Message)
		}
		return nil
	}, func() {
		for i, run := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				verdicts[i] = g.Decide(ctx, &veto.Call{ID: "c1", Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}})
			}()
		}
	})
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	for i, v := range verdicts {
		if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
			t.Errorf("%s: allowed %v, reason %q (%s); want denied %s", runs[i], v.Allowed, v.Reason, v.Message, veto.ReasonStateUnavailable)
		}
	}
	for _, run := range runs {
		if evs, err := s.Events(ctx, run, 0); err != nil || len(evs) != 0 {
			t.Errorf("%s: %d events stored after the failed commit (%v); want none", run, len(evs), err)
		}
		if st, err := s.Load(ctx, run); err != nil || st.Exists() {
			t.Errorf("%s: the run exists after the failed commit (%v)", run, err)
		}
	}
	if evs, err := s.Events(ctx, "first", 0); err != nil || len(evs) != 2 {
		t.Errorf("first: %d events (%v); want its start and its decision", len(evs), err)
	}
	// The connection the commit failed on holds nothing of it: the next
	// decisions, alone, are recorded, and the doomed run's still refused.
	for _, run := range runs[1:] {
		if v := g.Decide(ctx, &veto.Call{ID: "c2", Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}}); !v.Allowed {
			t.Errorf("%s after the failed batch: %s %s", run, v.Reason, v.Message)
		}
		if evs, err := s.Events(ctx, run, 0); err != nil || len(evs) != 2 || evs[1].CallID != "c2" {
			t.Errorf("%s after the failed batch: %d events (%v); want its start and c2", run, len(evs), err)
		}
	}
	if v := g.Decide(ctx, &veto.Call{ID: "c2", Tool: "Read", Run: veto.Run{Ref: "doomed", Fresh: true}}); v.Allowed {
		t.Error("the doomed run's decision was allowed alone")
	}
	if evs, _ := s.Events(ctx, "doomed", 0); len(evs) != 0 {
		t.Errorf("doomed: %d events stored", len(evs))
	}
}

// In a batch, an append whose run's next number moved (ErrConflict) or
// whose statement the database refuses fails alone: the batch's other
// appends are stored, each run's sequence numbers and chain as if each
// had committed alone.
func groupOneFails(t *testing.T, h GroupHarness) {
	s := h.Open(t)
	s.SetGroup(sqlstore.GroupOptions{MaxBatch: 64, Writers: 1})
	h.Refuse(t, s, "refused")
	yes := true
	start := func(run string) veto.Event {
		return veto.Event{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Complete: &yes, Time: time.Now()}
	}
	for _, run := range []string{"moved", "a", "b"} {
		if err := s.Append(ctx, run, 1, []veto.Event{start(run)}); err != nil {
			t.Fatal(err)
		}
	}
	type tc struct {
		run  string
		next uint64
		want error
	}
	cases := []tc{{"a", 2, nil}, {"moved", 5, veto.ErrConflict}, {"refused", 1, veto.ErrStateUnavailable}, {"b", 2, nil}, {"c", 1, nil}}
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	firstErr := batchBehind(t, h, s, len(cases), func() error {
		return s.Append(ctx, "first", 1, []veto.Event{start("first")})
	}, func() {
		for i, c := range cases {
			wg.Add(1)
			go func() {
				defer wg.Done()
				evs := []veto.Event{}
				if c.next == 1 {
					evs = append(evs, start(c.run))
				}
				next := c.next + uint64(len(evs))
				evs = append(evs, veto.Event{V: veto.EventVersion, Run: c.run, Seq: next, Kind: veto.EventAllowed, CallID: "x", Tool: "Read", Time: time.Now()})
				errs[i] = s.Append(ctx, c.run, c.next, evs)
			}()
		}
	})
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	for i, c := range cases {
		if (c.want == nil) != (errs[i] == nil) || (c.want != nil && !errors.Is(errs[i], c.want)) {
			t.Errorf("%s: Append = %v, want %v", c.run, errs[i], c.want)
		}
		if c.want != veto.ErrConflict && errors.Is(errs[i], veto.ErrConflict) {
			t.Errorf("%s: a refused statement is no conflict: %v", c.run, errs[i])
		}
	}
	for run, want := range map[string]int{"a": 2, "b": 2, "c": 2, "moved": 1, "refused": 0, "first": 1} {
		evs, err := s.Events(ctx, run, 0)
		if err != nil || len(evs) != want {
			t.Errorf("%s: %d events (%v), want %d", run, len(evs), err, want)
		}
		st, err := s.Load(ctx, run)
		if err != nil || st.Next != uint64(want)+1 {
			t.Errorf("%s: next %d (%v), want %d", run, st.Next, err, want+1)
		}
		if want > 0 {
			if b := verify(t, s, run); b != nil {
				t.Errorf("%s: the chain breaks: %+v", run, b)
			}
		}
	}
}
