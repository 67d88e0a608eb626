package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/sqlstore"
)

// commits counts the store's commits from now on (a fault that fails
// none).
func commits(fs *faultdb.Faults) func() int {
	pass := make(chan struct{})
	close(pass)
	f := fs.Add(faultdb.Fault{Op: faultdb.Commit, Hold: pass})
	return func() int { return fs.Fired(f) }
}

// begun is a faulty store holding run r's first two events (prefix).
func begun(t *testing.T) (*sqlstore.Store, *faultdb.Faults) {
	t.Helper()
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, prefix()); err != nil {
		t.Fatal(err)
	}
	return s, fs
}

// observed is call's result, at seq.
func observed(seq uint64, call string) veto.Event {
	o := fev(seq, veto.EventObserved, call)
	o.Outcome = veto.Succeeded
	return o
}

// stored is the kinds and calls of run r's events, as stored.
func stored(t *testing.T, s *sqlstore.Store) []string {
	t.Helper()
	evs, err := s.Events(fctx, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d %s %s", e.Seq, e.Kind, e.CallID))
	}
	return out
}

// A call's result and the next call's decision, appended within one
// transaction held (Together), are stored in one commit: the load
// between them reads the result, another connection sees neither until
// the commit, and both once it is made.
func TestTogetherStoresItsAppendsInOneCommit(t *testing.T) {
	s, fs := begun(t)
	n := commits(fs)
	err := s.Together(fctx, func(ctx context.Context) {
		if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
			t.Error(err)
		}
		st, err := s.Load(loaded.With(ctx), "r") // as a decision loads: the row its store's append left is trusted
		if err != nil || st.Next != 4 {
			t.Errorf("the load between: next %d, %v; want 4", st.Next, err)
		}
		if h := st.History.Observations(); len(h) != 1 || h[0].Outcome != veto.Succeeded {
			t.Errorf("the load between reads the history %+v; want c0 succeeded", h)
		}
		var seen int
		if err := s.DB().QueryRowContext(fctx, `SELECT COUNT(*) FROM veto_events`).Scan(&seen); err != nil || seen != 2 {
			t.Errorf("another connection sees %d events (%v) before the commit, want 2", seen, err)
		}
		if err := s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c1")}); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := n(); got != 1 {
		t.Fatalf("%d commits, want 1", got)
	}
	want := []string{"1 run_started ", "2 invocation_allowed c0", "3 observation c0", "4 invocation_allowed c1"}
	if got := stored(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	// The row the transaction left is the store's own now: the next
	// append builds on it.
	if err := s.Append(fctx, "r", 5, []veto.Event{observed(5, "c1")}); err != nil {
		t.Fatal(err)
	}
}

// A transaction held whose commit fails stores none of its appends, and
// says the state is unavailable; the store goes on from the rows as
// stored.
func TestTogetherStoresNothingWhenItsCommitFails(t *testing.T) {
	s, fs := begun(t)
	fs.Fail(faultdb.Commit, "", 1)
	err := s.Together(fctx, func(ctx context.Context) {
		if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
			t.Error(err)
		}
		if err := s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c1")}); err != nil {
			t.Error(err)
		}
	})
	if !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("Together = %v, want the state unavailable", err)
	}
	want := []string{"1 run_started ", "2 invocation_allowed c0"}
	if got := stored(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	if err := s.Append(fctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
		t.Fatalf("the append after: %v", err)
	}
}

// An append that fails within a transaction held, after some of its
// statements ran, leaves nothing of its own in it: the appends before and
// after it are stored, and it is not, not even its event.
func TestTogetherAppendThatFailsLeavesTheOthers(t *testing.T) {
	s, fs := begun(t)
	err := s.Together(fctx, func(ctx context.Context) {
		if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
			t.Error(err)
		}
		// Its event is inserted, then its observation fails.
		fs.Fail(faultdb.Exec, "INSERT INTO veto_observations", 1)
		if err := s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c1")}); err == nil {
			t.Error("the append whose observation failed was not refused")
		}
		if err := s.Append(ctx, "r", 9, []veto.Event{fev(9, veto.EventAllowed, "c9")}); !errors.Is(err, veto.ErrConflict) {
			t.Errorf("an append on a row it was not computed on: %v, want a conflict", err)
		}
		if err := s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c2")}); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1 run_started ", "2 invocation_allowed c0", "3 observation c0", "4 invocation_allowed c2"}
	if got := stored(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	st, err := s.Load(fctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if h := st.History.Observations(); len(h) != 2 || h[1].CallID != "c2" {
		t.Fatalf("history %+v; want c0's and c2's, and nothing of c1", h)
	}
}

// A statement that panics within a transaction held (a driver's bug,
// recovered by the caller as the gate recovers it) commits nothing, and
// leaves neither the turn nor SQLite's write lock held: the next append
// is stored.
func TestTogetherStatementPanicCommitsNothing(t *testing.T) {
	s, fs := begun(t)
	fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_events", N: 1, Panic: "driver bug"})
	err := s.Together(fctx, func(ctx context.Context) {
		func() {
			defer func() { recover() }()
			s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")})
		}()
		if err := s.Append(ctx, "r", 3, []veto.Event{fev(3, veto.EventAllowed, "c1")}); err != nil {
			t.Logf("the append after the panic: %v", err)
		}
	})
	if !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("Together = %v, want the state unavailable", err)
	}
	want := []string{"1 run_started ", "2 invocation_allowed c0"}
	if got := stored(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
	ctx, cancel := context.WithTimeout(fctx, 5*time.Second)
	defer cancel()
	if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
		t.Fatalf("the append after: %v", err)
	}
}

// What a person is shown of a question asked within a transaction held
// (Approvals.Keep, in a transaction of its own that would wait for the
// held one's write lock) is kept once that one commits: not before, and
// not when it fails.
func TestTogetherKeepsWhatIsShownOnceCommitted(t *testing.T) {
	s, fs := begun(t)
	now := time.Now()
	shownOf := func(call string) bool {
		t.Helper()
		st, err := s.Load(fctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := st.Approvals.Shown(fctx, call, now)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, fail := range []bool{true, false} {
		call := fmt.Sprint("asked-", fail)
		if fail {
			fs.Fail(faultdb.Commit, "", 1)
		}
		err := s.Together(fctx, func(ctx context.Context) {
			st, err := s.Load(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			sh := veto.Shown{Run: "r", CallID: call, Tool: "Read", Asked: now, Expires: now.Add(time.Hour)}
			if err := st.Approvals.Keep(ctx, sh); err != nil {
				t.Error(err)
			}
			if shownOf(call) {
				t.Errorf("%s is shown before its transaction committed", call)
			}
		})
		if (err != nil) != fail {
			t.Fatalf("Together = %v", err)
		}
		if got := shownOf(call); got == fail {
			t.Fatalf("%s shown: %v, with the commit failing: %v", call, got, fail)
		}
	}
}

// A transaction held whose context ends in the middle of an append (the
// decision's deadline) is rolled back on its connection, which goes back
// to the appends: the first version ended it as after a panic, and each
// such decision took one of the pool's connections for good (in use 1,
// 2, 3 after three), until none was left and every decision was refused.
func TestTogetherEndingMidwayKeepsItsConnection(t *testing.T) {
	s, _ := begun(t)
	for i := range 3 {
		ctx, cancel := context.WithCancel(fctx)
		err := s.Together(ctx, func(ctx context.Context) {
			cancel() // the deadline passes before the append
			if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err == nil {
				t.Errorf("round %d: an append whose context ended was made", i)
			}
		})
		if err == nil {
			t.Fatalf("round %d: a transaction whose context ended was committed", i)
		}
	}
	if n := s.DB().Stats().InUse; n > 1 {
		t.Fatalf("%d connections in use after three transactions ended midway, want at most the appends' one", n)
	}
	if err := s.Append(fctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
		t.Fatal(err)
	}
}

// A statement that fails within a transaction held fails the whole of
// it: SQLite ends the transaction on some errors (a full disk, an I/O
// error), and a savepoint begun after would be a transaction of its own,
// committed when released. No append begins after, and nothing commits.
func TestTogetherAfterAFailedReadAppendsNothing(t *testing.T) {
	s, fs := begun(t)
	err := s.Together(fctx, func(ctx context.Context) {
		if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
			t.Error(err)
		}
		fs.Fail(faultdb.Query, "FROM veto_tally_calls", 1)
		st, err := s.Load(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Tally.Calls(ctx); err == nil {
			t.Fatal("the failing read did not fail")
		}
		if err := s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c1")}); err == nil {
			t.Error("an append after a failed read was made")
		}
	})
	if !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("Together = %v, want the state unavailable", err)
	}
	want := []string{"1 run_started ", "2 invocation_allowed c0"}
	if got := stored(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %q, want %q", got, want)
	}
}

// What a question shown within a transaction held drops (a row expired)
// is scrubbed from the WAL after the commit; a scrub that fails then
// does not make the committed transaction read as failed, which its
// caller would take as nothing stored and record again.
func TestTogetherScrubFailingAfterTheCommitIsNoFailure(t *testing.T) {
	s, fs := begun(t)
	t1 := time.Now()
	st, err := s.Load(fctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Approvals.Keep(fctx, veto.Shown{Run: "r", CallID: "old", Tool: "Read", Asked: t1, Expires: t1.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	scrub := fs.Fail(faultdb.Query, "wal_checkpoint", 1)
	err = s.Together(fctx, func(ctx context.Context) {
		st, err := s.Load(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		t2 := t1.Add(time.Minute) // "old" has expired
		if err := st.Approvals.Keep(ctx, veto.Shown{Run: "r", CallID: "new", Tool: "Read", Asked: t2, Expires: t2.Add(time.Hour)}); err != nil {
			t.Error(err)
		}
		if err := s.Append(ctx, "r", 3, []veto.Event{observed(3, "c0")}); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatalf("Together = %v, want nil: everything was committed", err)
	}
	if fs.Fired(scrub) != 1 {
		t.Fatal("the scrub after the commit was not tried")
	}
	if got := stored(t, s); len(got) != 3 {
		t.Fatalf("stored %q, want the observation too", got)
	}
}

// A damaged decision found within a transaction held (Together) is
// marked in it, and stored with its appends: made on another of the
// pool's connections, the mark waited for the write lock its own
// transaction held until the busy timeout, and failed.
func TestTogetherMarksDamageInItsTransaction(t *testing.T) {
	s, _ := begun(t)
	if err := s.Append(fctx, "r", 3, []veto.Event{fev(3, veto.EventAllowed, "c1")}); err != nil {
		t.Fatal(err)
	}
	// Not the last event, which a load proves: the decision of c0.
	if _, err := s.DB().ExecContext(fctx, `UPDATE veto_events SET body = x'7b' WHERE run = 'r' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	var markErr, appendErr error
	err := s.Together(fctx, func(ctx context.Context) {
		// An append before the mark, whose row the transaction keeps, and
		// one after it, which must build on the row as marked.
		appendErr = s.Append(ctx, "r", 4, []veto.Event{fev(4, veto.EventAllowed, "c2")})
		_, _, markErr = s.Decided(ctx, "r", "c0")
		appendErr = errors.Join(appendErr, s.Append(ctx, "r", 5, []veto.Event{fev(5, veto.EventAllowed, "c3")}))
	})
	if markErr != nil || appendErr != nil || err != nil {
		t.Fatalf("within the transaction: the mark %v, the appends %v; its commit %v", markErr, appendErr, err)
	}
	var damaged bool
	if err := s.DB().QueryRowContext(fctx, `SELECT damaged FROM veto_runs WHERE run = 'r'`).Scan(&damaged); err != nil || !damaged {
		t.Fatalf("the run's row says damaged=%v (%v), want the mark stored with the append", damaged, err)
	}
}
