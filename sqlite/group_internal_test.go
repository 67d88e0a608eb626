package sqlite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
	"github.com/vetohq/veto/sqlstore"
)

// runEvents is a new run's first append: its start and one allowed call.
func runEvents(run string) []veto.Event {
	s, a := fev(1, veto.EventRunStarted, ""), fev(2, veto.EventAllowed, "c-"+run)
	s.Run, a.Run = run, run
	return []veto.Event{s, a}
}

// grouped holds the store's first commit until n more appends wait for
// the next one, then releases it, and returns each of their results:
// those n share one commit (group commit).
func grouped(t *testing.T, s *sqlstore.Store, fs *faultdb.Faults, appends map[string]func() error) map[string]error {
	t.Helper()
	hold := make(chan struct{})
	held := fs.Add(faultdb.Fault{Op: faultdb.Commit, N: 1, Hold: hold})
	first := make(chan error, 1)
	go func() { first <- s.Append(fctx, "lead", 1, runEvents("lead")) }()
	for deadline := time.Now().Add(10 * time.Second); fs.Fired(held) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first append never reached its commit")
		}
		time.Sleep(time.Millisecond)
	}
	var mu sync.Mutex
	out := map[string]error{}
	var wg sync.WaitGroup
	for name, f := range appends {
		wg.Go(func() {
			err := f()
			mu.Lock()
			out[name] = err
			mu.Unlock()
		})
	}
	for deadline := time.Now().Add(10 * time.Second); s.Queued() < len(appends); {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d appends queued behind the held commit", s.Queued(), len(appends))
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("the first append: %v", err)
	}
	return out
}

// A batch whose commit fails refuses every append in it, and stores none
// of them; the store commits the next append as if nothing happened.
//
// E35
func TestGroupCommitFailureRefusesEveryAppend(t *testing.T) {
	s, fs, _ := faulty(t)
	s.SetGroup(sqlstore.DefaultGroup)        // SQLite's dialect commits each alone
	failed := fs.Fail(faultdb.Commit, "", 2) // the batch after the held one
	runs := []string{"r1", "r2", "r3", "r4", "r5"}
	appends := map[string]func() error{}
	for _, r := range runs {
		appends[r] = func() error { return s.Append(fctx, r, 1, runEvents(r)) }
	}
	got := grouped(t, s, fs, appends)
	if fs.Fired(failed) != 1 {
		t.Fatalf("the batch's commit failed %d times, want once: the appends did not share one commit", fs.Fired(failed))
	}
	for _, r := range runs {
		if !errors.Is(got[r], veto.ErrStateUnavailable) {
			t.Errorf("%s: %v, want the state unavailable", r, got[r])
		}
		evs, err := s.Events(fctx, r, 0)
		if err != nil || len(evs) != 0 {
			t.Errorf("%s: %d events stored after its batch failed (%v)", r, len(evs), err)
		}
	}
	if err := s.Append(fctx, "r1", 1, runEvents("r1")); err != nil {
		t.Fatalf("an append after the failed batch: %v", err)
	}
	if evs, _ := s.Events(fctx, "r1", 0); len(evs) != 2 {
		t.Fatalf("%d events after the next append, want 2", len(evs))
	}
}

// An append of a batch that fails on its own (another writer moved its
// run; its statements fail) gets its own error, and the rest of the batch
// commits: one failure never refuses the others, nor stores part of
// itself.
func TestGroupCommitOneFailureLeavesTheOthers(t *testing.T) {
	s, fs, _ := faulty(t)
	s.SetGroup(sqlstore.DefaultGroup)
	for _, r := range []string{"moved", "broken"} {
		if err := s.Append(fctx, r, 1, runEvents(r)); err != nil {
			t.Fatal(err)
		}
	}
	// The append of "broken" fails at its observation's insert.
	bad := fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_observations", N: 2})
	appends := map[string]func() error{
		"fresh1": func() error { return s.Append(fctx, "fresh1", 1, runEvents("fresh1")) },
		"fresh2": func() error { return s.Append(fctx, "fresh2", 1, runEvents("fresh2")) },
		// Built on next 2, but the run is at 3: another writer won.
		"moved": func() error {
			e := fev(2, veto.EventAllowed, "late")
			e.Run = "moved"
			return s.Append(fctx, "moved", 2, []veto.Event{e})
		},
		"broken": func() error {
			e := fev(3, veto.EventAllowed, "x")
			e.Run = "broken"
			return s.Append(fctx, "broken", 3, []veto.Event{e})
		},
	}
	got := grouped(t, s, fs, appends)
	if !errors.Is(got["moved"], veto.ErrConflict) {
		t.Errorf("moved: %v, want a conflict", got["moved"])
	}
	if fs.Fired(bad) != 1 || !errors.Is(got["broken"], veto.ErrStateUnavailable) {
		t.Errorf("broken: %v (fault fired %d), want the state unavailable", got["broken"], fs.Fired(bad))
	}
	for r, want := range map[string]int{"fresh1": 2, "fresh2": 2, "moved": 2, "broken": 2} {
		evs, err := s.Events(fctx, r, 0)
		if err != nil || len(evs) != want {
			t.Errorf("%s: %d events (%v), want %d", r, len(evs), err, want)
		}
		if want == 2 && (r == "fresh1" || r == "fresh2") && got[r] != nil {
			t.Errorf("%s: %v, want stored", r, got[r])
		}
	}
	checks, err := s.CheckRuns(fctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Broken != 0 || c.Marked {
			t.Errorf("run %s after the batch: %+v", c.Run, c)
		}
	}
}

// A driver that panics while a batch commits refuses that batch's
// appends, and the store goes on committing: the panic left the lead
// held and the batch's others waiting, so that every later append of
// the process waited for good (SQLite has one leader, PostgreSQL four).
func TestGroupCommitPanicRefusesItsBatchAndLeavesTheLead(t *testing.T) {
	s, fs, _ := faulty(t)
	s.SetGroup(sqlstore.DefaultGroup)
	fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_events", N: 1, Panic: "a driver's bug"})
	ctx, cancel := context.WithTimeout(fctx, 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Append(ctx, "r1", 1, runEvents("r1")) }()
	select {
	case err := <-done:
		if !errors.Is(err, veto.ErrStateUnavailable) {
			t.Fatalf("the append whose statement panicked: %v, want the state unavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append whose statement panicked did not return in 10 s")
	}
	next := make(chan error, 1)
	go func() { next <- s.Append(ctx, "r2", 1, runEvents("r2")) }()
	select {
	case err := <-next:
		if err != nil {
			t.Fatalf("the append after the panic: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append after the panic did not return in 10 s: the lead was never given back")
	}
	if evs, err := s.Events(fctx, "r1", 0); err != nil || len(evs) != 0 {
		t.Fatalf("r1: %d events stored by the append that panicked (%v)", len(evs), err)
	}
}

// A panic in the middle of a batch of several appends refuses each of
// them, and stores none.
func TestGroupCommitPanicRefusesEveryAppendOfItsBatch(t *testing.T) {
	s, fs, _ := faulty(t)
	s.SetGroup(sqlstore.DefaultGroup)
	// The held first append inserted its two events before its commit:
	// the batch's first insert is the third.
	boom := fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_events", N: 3, Panic: "a driver's bug"})
	runs := []string{"r1", "r2", "r3"}
	appends := map[string]func() error{}
	for _, r := range runs {
		appends[r] = func() error { return s.Append(fctx, r, 1, runEvents(r)) }
	}
	got := grouped(t, s, fs, appends)
	if fs.Fired(boom) != 1 {
		t.Fatal("the fault never fired")
	}
	for _, r := range runs {
		if !errors.Is(got[r], veto.ErrStateUnavailable) {
			t.Errorf("%s: %v, want the state unavailable", r, got[r])
		}
		if evs, err := s.Events(fctx, r, 0); err != nil || len(evs) != 0 {
			t.Errorf("%s: %d events stored by a batch that panicked (%v)", r, len(evs), err)
		}
	}
	if err := s.Append(fctx, "r1", 1, runEvents("r1")); err != nil {
		t.Fatalf("an append after the batch: %v", err)
	}
}
