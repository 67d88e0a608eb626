package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
)

// The process's appends take turns before SQLite's write lock, each
// waiting until its own context ends: none is refused because the
// database's busy timeout ran out while another append of the same
// process held the lock. Without the turn, 16 appends at once on a
// timeout of 1 ms each waited in SQLite's busy handler, which sleeps
// 1 ms and gives up, and most were refused as locked.
func TestConcurrentAppendsTakeTurnsNotTheBusyTimeout(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "veto.db"), Options{BusyTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const runs, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, runs*each)
	for r := range runs {
		wg.Go(func() {
			run := fmt.Sprint("r", r)
			for i := range each {
				actx, cancel := context.WithTimeout(ctx, 10*time.Second)
				next, evs := uint64(1), runEvents(run)
				if i > 0 {
					e := fev(uint64(i+2), veto.EventAllowed, fmt.Sprint("c", i))
					e.Run = run
					next, evs = e.Seq, []veto.Event{e}
				}
				if err := s.Append(actx, run, next, evs); err != nil {
					errs <- fmt.Errorf("%s, append %d: %w", run, i, err)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d appends refused", n, runs*each)
	}
}

// The connection the appends keep between their turns is closed with the
// store: a long-lived server that closes a state and opens it again (its
// checks found it moved) holds no descriptor of the old one.
func TestClosedStoreKeepsNoWriter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	before := openFDs(t)
	for i := range 3 {
		s, err := Open(ctx, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := fmt.Sprint("r", i)
		if err := s.Append(ctx, run, 1, runEvents(run)); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if n := openFDs(t); n != before {
		t.Fatalf("three stores, each appended to and closed, left %d descriptors open", n-before)
	}
}

// A held file's proof before a request reads the schema marker on the
// connection the appends keep when no append is writing, and on one of
// the pool's while one is: it never queues behind an append, here one
// held in the middle of its transaction.
func TestProofDoesNotWaitForAnAppend(t *testing.T) {
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, prefix()); err != nil { // the kept connection
		t.Fatal(err)
	}
	if _, err := s.MigrationsUnwatched(fctx); err != nil { // read, and prepared, on it
		t.Fatal(err)
	}
	hold := make(chan struct{})
	held := fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: "INSERT INTO veto_events", Hold: hold})
	done := make(chan error)
	go func() { done <- s.Append(fctx, "r", 3, batch()) }()
	for fs.Fired(held) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(fctx, 2*time.Second)
	defer cancel()
	began := time.Now()
	n, err := s.MigrationsUnwatched(ctx)
	waited := time.Since(began)
	close(hold)
	if err != nil || n == 0 {
		t.Fatalf("the proof while an append writes: %d migrations, %v", n, err)
	}
	if waited > time.Second {
		t.Fatalf("the proof waited %s for the append", waited)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A driver that panics reading the marker on the kept connection leaves
// the appends' turn free and the connection let go: the next append and
// the next proof are answered, on a connection of the pool.
func TestProofPanickingOnTheWriterLeavesTheTurn(t *testing.T) {
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, prefix()); err != nil {
		t.Fatal(err)
	}
	boom := fs.Add(faultdb.Fault{Op: faultdb.Query, Match: "FROM veto_meta WHERE key", N: 1, Panic: "driver bug"})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the proof did not panic")
			}
		}()
		s.MigrationsUnwatched(fctx)
	}()
	if fs.Fired(boom) != 1 {
		t.Fatal("the fault never fired")
	}
	ctx, cancel := context.WithTimeout(fctx, 2*time.Second)
	defer cancel()
	if err := s.Append(ctx, "r", 3, batch()); err != nil {
		t.Fatalf("the append after the proof's panic: %v", err)
	}
	if _, err := s.MigrationsUnwatched(ctx); err != nil {
		t.Fatalf("the proof after it: %v", err)
	}
	if st, err := s.Load(ctx, "r"); err != nil || st.Next != 8 {
		t.Fatalf("the run after it: next %d (%v), want 8", st.Next, err)
	}
}

// The marker read of every proof is prepared once, on the connection the
// appends keep, while no append has the turn: SQLite parsed it at every
// request.
func TestProofIsPreparedOnceOnTheKeptConnection(t *testing.T) {
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, prefix()); err != nil {
		t.Fatal(err)
	}
	passed := make(chan struct{})
	close(passed)
	prepared := fs.Add(faultdb.Fault{Op: faultdb.Prepare, Match: "FROM veto_meta WHERE key", Hold: passed})
	read := fs.Add(faultdb.Fault{Op: faultdb.Query, Match: "FROM veto_meta WHERE key", Hold: passed})
	for i := range 20 {
		if _, err := s.MigrationsUnwatched(fctx); err != nil {
			t.Fatal(err)
		}
		if i == 10 {
			if err := s.Append(fctx, "r", 3, batch()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, m := fs.Fired(prepared), fs.Fired(read); n != 1 || m != 20 {
		t.Fatalf("20 proofs prepared the marker's read %d times and ran it %d times, want once and 20", n, m)
	}
}

// A kept connection that database/sql closed (the driver answered
// driver.ErrBadConn) is let go, its prepared statement with it, not
// finalized a second time: the next proof and the next append are
// answered on one of the pool's. Kept, the proof failed as "connection
// is already closed" (the file verified again for nothing) and the next
// append's BEGIN failed, then crashed closing the statement.
func TestKeptConnectionClosedByTheDriverIsLetGo(t *testing.T) {
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, prefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MigrationsUnwatched(fctx); err != nil { // prepared on the kept connection
		t.Fatal(err)
	}
	fs.Add(faultdb.Fault{Op: faultdb.Commit, N: 1, Err: driver.ErrBadConn})
	if err := s.Append(fctx, "r", 3, batch()); !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("the append whose commit lost its connection: %v, want the state unavailable", err)
	}
	if _, err := s.MigrationsUnwatched(fctx); err != nil {
		t.Fatalf("the proof after it: %v", err)
	}
	if err := s.Append(fctx, "r", 3, batch()); err != nil {
		t.Fatalf("the append after it: %v", err)
	}
	if _, err := s.MigrationsUnwatched(fctx); err != nil {
		t.Fatalf("the proof after that: %v", err)
	}
}

// An append whose context has ended when its turn comes begins nothing:
// with another process holding the write lock, its BEGIN would have
// waited up to the busy timeout (every append of the process behind it)
// before its first statement refused it. The turn and the context's end
// both ready, the turn was taken half of the time.
func TestEndedAppendBeginsNothingOnItsTurn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(fctx, p, Options{BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Append(fctx, "r", 1, prefix()); err != nil { // the kept connection
		t.Fatal(err)
	}
	release := holdWriteLock(t, p)
	defer release()
	ended, cancel := context.WithCancel(fctx)
	cancel()
	for i := range 20 {
		began := time.Now()
		err := s.Append(ended, "r", 3, batch())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("append %d with its context ended: %v, want context.Canceled", i, err)
		}
		if took := time.Since(began); took > 500*time.Millisecond {
			t.Fatalf("append %d with its context ended took %s: it began, and waited for the lock", i, took)
		}
	}
}

// A driver that panics while a held file is proved before a request
// gives the file's lock back: the panic goes on to the caller (the gate
// refuses the call), and the file can still be closed, reopened and
// used. Held, the read lock kept Close, and every reopen and checkpoint,
// waiting for good.
func TestHeldFileProofPanickingGivesTheLockBack(t *testing.T) {
	fs := &faultdb.Faults{}
	withFaults(t, fs)
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true})
	g := gateOn(t, f)
	decideIn(t, f, g, "c0", "r")
	fs.Add(faultdb.Fault{Op: faultdb.Query, Match: "FROM veto_meta WHERE key", N: 1, Panic: "a driver's bug"})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the proof did not panic")
			}
		}()
		f.Acquire(fctx)
	}()
	decideIn(t, f, g, "c1", "r")
	closed := make(chan struct{})
	go func() {
		f.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited past 5 s for the lock the panicking proof took")
	}
}
