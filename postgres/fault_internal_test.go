package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlstore"
)

// These tests make the pgx driver fail one chosen call (internal/faultdb)
// on the real server, and check that an append that fails at its run's
// lock, a statement or its commit stores nothing and says so.

func faulty(t *testing.T) (*sqlstore.Store, *faultdb.Faults) {
	t.Helper()
	fs := &faultdb.Faults{}
	s, err := sqlstore.New(context.Background(), faultdb.OpenDB(stdlib.GetDefaultDriver(), pgtest.Fresh(t), fs), dialect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fs
}

func pev(seq uint64, kind veto.EventKind, call string) veto.Event {
	e := veto.Event{V: veto.EventVersion, Run: "r", Seq: seq, Kind: kind, CallID: call, Tool: "Read", Time: time.Unix(1_800_000_000+int64(seq), 0).UTC()}
	if kind == veto.EventRunStarted {
		yes := true
		e.Complete = &yes
	}
	return e
}

// An append whose run's lock, statement or commit fails stores nothing:
// the run answers as before it, and the same append succeeds after.
func TestAppendFailingAtTheLockStoresNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		op    faultdb.Op
		match string
	}{
		{faultdb.Exec, "ON CONFLICT (run) DO NOTHING"}, // the run's row made sure of
		{faultdb.Query, "FOR UPDATE"},                  // the run's row locked
		{faultdb.Exec, "INSERT INTO veto_events"},
		{faultdb.Exec, "UPDATE veto_runs"},
		{faultdb.Commit, ""},
	} {
		t.Run(string(tc.op)+" "+tc.match, func(t *testing.T) {
			s, fs := faulty(t)
			if err := s.Append(ctx, "r", 1, []veto.Event{pev(1, veto.EventRunStarted, ""), pev(2, veto.EventAllowed, "a")}); err != nil {
				t.Fatal(err)
			}
			f := fs.Fail(tc.op, tc.match, 1)
			err := s.Append(ctx, "r", 3, []veto.Event{pev(3, veto.EventAllowed, "b")})
			if fs.Fired(f) != 1 {
				t.Fatal("the fault never fired")
			}
			fs.Clear()
			if !errors.Is(err, veto.ErrStateUnavailable) || !errors.Is(err, faultdb.ErrInjected) || errors.Is(err, veto.ErrConflict) {
				t.Fatalf("Append = %v, want the state unavailable because of the fault", err)
			}
			st, err := s.Load(ctx, "r")
			if err != nil || st.Next != 3 || st.History.Len() != 1 {
				t.Fatalf("after a failed append: next %d, %d observations, %v; want 3 and 1", st.Next, st.History.Len(), err)
			}
			if err := s.Append(ctx, "r", 3, []veto.Event{pev(3, veto.EventAllowed, "b")}); err != nil {
				t.Fatalf("the append after the fault: %v", err)
			}
		})
	}
}

// An append whose statement panics in the driver (a bug) under the run's
// row lock, prepared or not, leaves the row unlocked: the panic goes on
// to the caller (the gate recovers it and refuses the call), the
// transaction is rolled back on its connection, and the same append
// succeeds after. Ended through database/sql, the transaction waited
// forever for a lock the statement took, the row locked all along.
func TestAppendPanickingUnderTheLockLeavesTheRowFree(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		op    faultdb.Op
		match string
	}{
		{faultdb.Query, "FOR UPDATE"},
		{faultdb.Exec, "INSERT INTO veto_events"},
		{faultdb.Commit, ""},
	} {
		t.Run(string(tc.op)+" "+tc.match, func(t *testing.T) {
			s, fs := faulty(t)
			for i, e := range []veto.Event{pev(1, veto.EventRunStarted, ""), pev(2, veto.EventAllowed, "a"), pev(3, veto.EventAllowed, "b")} {
				if err := s.Append(ctx, "r", uint64(i)+1, []veto.Event{e}); err != nil { // the statements prepared
					t.Fatal(err)
				}
			}
			fs.Add(faultdb.Fault{Op: tc.op, Match: tc.match, N: 1, Panic: "a driver's bug"})
			panicked := make(chan any, 1)
			go func() {
				defer func() { panicked <- recover() }()
				s.Append(ctx, "r", 4, []veto.Event{pev(4, veto.EventAllowed, "c")})
			}()
			select {
			case p := <-panicked:
				if p == nil {
					t.Fatal("the append did not panic")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the append whose statement panicked did not return in 10 s")
			}
			fs.Clear()
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := s.Append(actx, "r", 4, []veto.Event{pev(4, veto.EventAllowed, "c")}); err != nil {
				t.Fatalf("the append after the panic: %v", err)
			}
		})
	}
}
