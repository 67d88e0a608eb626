package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
)

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated(t *testing.T) uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatal("this Go counts no goroutines created")
	}
	return s[0].Value.Uint64()
}

// A decision on a held file, as the hook server, veto serve and veto mcp
// make it (the file proved, the run's row read under the write lock, the
// event and its projections written, committed), starts two goroutines:
// database/sql's watch of the transaction and of the one query's rows in
// it. The driver watched every statement with one of its own, the
// file's proof included: 13 a decision, each a wake-up of an idle
// process's threads. A collection that falls in the window starts one
// more a processor.
func TestHeldFileDecisionStartsNoGoroutinePerStatement(t *testing.T) {
	p, _ := heldState(t)
	f := OpenFile(p, Options{Verify: true, BusyTimeout: time.Second})
	t.Cleanup(func() { f.Close() })
	g := gateOn(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a deadline, as every decision has
	defer cancel()
	decide := func(i int) {
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
	for i := range 3 { // the statements prepared, the run's row kept
		decide(i)
	}
	const n = 20
	runtime.GC()
	before := goroutinesCreated(t)
	for i := 3; i < 3+n; i++ {
		decide(i)
	}
	if got, most := goroutinesCreated(t)-before, uint64(2*n+runtime.GOMAXPROCS(0)); got > most {
		t.Fatalf("%d decisions started %d goroutines, want at most %d", n, got, most)
	}
}

// holdWriteLock has another connection take the state's write lock, as
// another process's writer would; release ends its transaction.
func holdWriteLock(t *testing.T, p string) (release func()) {
	t.Helper()
	holder, err := sql.Open("sqlite", dsn(p, Options{BusyTimeout: 1}, true))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := holder.BeginTx(context.Background(), nil) // _txlock=immediate
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE veto_meta SET value = value`); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			tx.Rollback()
			holder.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// An append's statements run unwatched, but the append still ends with
// its context: one already ended stores nothing; one that ends while the
// append waits for another writer's lock stores nothing once it has the
// lock (the BEGIN itself waits up to the busy timeout); and a wait the
// busy timeout ends is refused as the state locked.
func TestUnwatchedAppendEndsWithItsContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(context.Background(), p, Options{BusyTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	yes := true
	start := []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, CallID: "c", Tool: "Read", Time: t0},
	}
	stored := func() uint64 {
		st, err := s.Load(context.Background(), "r")
		if err != nil {
			t.Fatal(err)
		}
		return st.Next
	}

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ended, "r", 1, start); !errors.Is(err, context.Canceled) {
		t.Fatalf("an append with its context ended: %v, want context.Canceled", err)
	}
	if n := stored(); n != 1 {
		t.Fatalf("an ended append stored events: next %d", n)
	}

	release := holdWriteLock(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(50 * time.Millisecond)
		cancel()
		time.Sleep(50 * time.Millisecond)
		release()
	}()
	err = s.Append(ctx, "r", 1, start)
	<-released
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("an append whose context ended while it waited for the lock: %v, want context.Canceled", err)
	}
	if n := stored(); n != 1 {
		t.Fatalf("an append whose context ended while it waited stored events: next %d", n)
	}

	holdWriteLock(t, p)
	began := time.Now()
	err = s.Append(context.Background(), "r", 1, start)
	if c, _ := classify(err); !errors.Is(err, veto.ErrStateUnavailable) || c != veto.CauseLocked {
		t.Fatalf("an append past the busy timeout: %v, want the state refused as locked", err)
	}
	if waited := time.Since(began); waited < 250*time.Millisecond {
		t.Fatalf("the append gave up after %s, before the busy timeout", waited)
	}
	if n := stored(); n != 1 {
		t.Fatalf("a refused append stored events: next %d", n)
	}
}

// A context that ends while an append's last statement runs, its
// statements all run unwatched, is found before the commit: nothing is
// committed (a hook server stopped past veto-hook's wait, and continued,
// records nothing).
func TestUnwatchedAppendIsNotCommittedOnceItsContextEnded(t *testing.T) {
	s, fs, _ := faulty(t)
	hold := make(chan struct{})
	last := fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_runs", Hold: hold})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Append(ctx, "r", 1, prefix()) }()
	for fs.Fired(last) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	close(hold)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("an append whose context ended before its commit: %v, want context.Canceled", err)
	}
	if st, err := s.Load(context.Background(), "r"); err != nil || st.Next != 1 {
		t.Fatalf("the run after it: next %d (%v), want nothing stored", st.Next, err)
	}
}

// whileThePoolIsHeld runs do with a context of 100 ms while db's one
// connection is held, and returns how long do took; one that waits for a
// connection regardless returns 2 s later, when the connection is freed.
func whileThePoolIsHeld(t *testing.T, db *sql.DB, do func(ctx context.Context)) time.Duration {
	t.Helper()
	held, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	free := time.AfterFunc(2*time.Second, func() { held.Close() })
	began := time.Now()
	do(ctx)
	waited := time.Since(began)
	if free.Stop() {
		held.Close()
	}
	return waited
}

// An append waits for a connection of the pool only until its context
// ends: the pool's wait is watched, though the transaction is not.
func TestUnwatchedAppendWaitsForAConnectionOnlyUntilItsContextEnds(t *testing.T) {
	defer SetMaxConns(1)()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	waited := whileThePoolIsHeld(t, s.DB(), func(ctx context.Context) { err = s.Append(ctx, "r", 1, prefix()) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an append with no connection free: %v, want context.DeadlineExceeded", err)
	}
	if waited > time.Second {
		t.Fatalf("the append waited %s for a connection, past its 100ms deadline", waited)
	}
	if st, err := s.Load(context.Background(), "r"); err != nil || st.Next != 1 {
		t.Fatalf("the run after it: next %d (%v), want nothing stored", st.Next, err)
	}
}

// A held file's proof before a request reads its marker unwatched, but
// waits for a connection of the pool only until the request's context
// ends; a later request, with a connection free, is answered.
func TestHeldFileProofWaitsForAConnectionOnlyUntilItsContextEnds(t *testing.T) {
	defer SetMaxConns(1)()
	p, _ := heldState(t)
	f := OpenFile(p, Options{Verify: true, BusyTimeout: time.Second})
	t.Cleanup(func() { f.Close() })
	release, err := f.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	release()
	waited := whileThePoolIsHeld(t, f.Store().DB(), func(ctx context.Context) {
		if release, err := f.Acquire(ctx); err == nil {
			release()
		}
	})
	if waited > time.Second {
		t.Fatalf("the proof waited %s for a connection, past its 100ms deadline", waited)
	}
	release, err = f.Acquire(context.Background())
	if err != nil {
		t.Fatalf("a request once a connection is free: %v", err)
	}
	release()
}

// A driver that panics in the middle of an append's statement, prepared
// or not, a write or a read under the write lock, leaves the decision
// answered (refused, the gate recovering) and no lock held: the next
// decision, in another run, is allowed. Unwatched, nothing but the append
// would roll the transaction back, and SQLite's write lock would refuse
// every later decision, of every run and every process, as locked; ended
// through database/sql after a prepared statement's panic, it waited
// forever for a lock the statement took.
func TestPanickingStatementsLeaveNoLockAndNoHang(t *testing.T) {
	for _, c := range []struct {
		name   string
		fault  faultdb.Fault
		warmup int
	}{
		{"a write, unprepared (the store's first append)", faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_observations"}, 0},
		{"a write, prepared", faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_observations"}, 4},
		{"the run's row, read under the lock", faultdb.Fault{Op: faultdb.Query, Match: "FROM veto_runs r LEFT JOIN"}, 4},
		{"the commit", faultdb.Fault{Op: faultdb.Commit}, 4},
		{"the commit, and the rollback after it", faultdb.Fault{Op: faultdb.Commit}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, fs, _ := faulty(t)
			g := gateOn(t, s)
			decide := func(id, run string) veto.Verdict {
				t.Helper()
				done := make(chan veto.Verdict, 1)
				go func() { done <- g.Decide(fctx, &veto.Call{ID: id, Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}}) }()
				select {
				case v := <-done:
					return v
				case <-time.After(10 * time.Second):
					t.Fatalf("the decision of %s did not return in 10 s", id)
				}
				return veto.Verdict{}
			}
			for i := range c.warmup { // the statements prepared
				if v := decide(fmt.Sprint("w", i), "warm"); !v.Allowed {
					t.Fatalf("warm-up %d: %+v", i, v)
				}
			}
			f := c.fault
			f.N, f.Panic = 1, "a driver's bug"
			fs.Add(f)
			again := strings.Contains(c.name, "rollback")
			if again { // the rollback on the connection itself panics too
				fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "ROLLBACK", N: 1, Panic: "the same bug again"})
			}
			if v := decide("c1", "a"); v.Allowed || v.Reason != veto.ReasonInternal {
				t.Fatalf("the call whose append panicked: %+v, want refused %s", v, veto.ReasonInternal)
			}
			if again {
				// The write lock stays held: refused, never allowed, and
				// answered.
				if v := decide("c2", "b"); v.Allowed {
					t.Fatalf("a call after a rollback that failed: %+v, want refused", v)
				}
				return
			}
			if v := decide("c2", "b"); !v.Allowed {
				t.Fatalf("a call in another run after it: %+v, want allowed", v)
			}
			if st, err := s.Load(fctx, "a"); err != nil || st.Next != 1 {
				t.Fatalf("the run whose append panicked: next %d (%v), want nothing stored", st.Next, err)
			}
		})
	}
}
