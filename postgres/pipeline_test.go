package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/sqlstore"
)

// batches counts the pipelined batches a store's connections send, and
// the statements sent one at a time (begin and commit among them).
type batches struct{ batch, single atomic.Int64 }

func (b *batches) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	b.batch.Add(1)
	return ctx
}
func (b *batches) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (b *batches) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (b *batches) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	b.single.Add(1)
	return ctx
}
func (b *batches) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// traced opens dsn with its batches counted.
func traced(t *testing.T, dsn string) (*sqlstore.Store, *batches) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	b := &batches{}
	cfg.Tracer = b
	name := stdlib.RegisterConnConfig(cfg)
	t.Cleanup(func() { stdlib.UnregisterConnConfig(name) })
	return open(t, name), b
}

func pe(run string, seq uint64, kind veto.EventKind, call string) veto.Event {
	e := veto.Event{V: veto.EventVersion, Run: run, Seq: seq, Kind: kind, CallID: call, Tool: "Read", Time: time.Now().UTC(),
		Target: veto.Target{Kind: veto.TargetFile, ID: "/w/" + call}}
	if kind == veto.EventRunStarted {
		yes := true
		e.Complete, e.Target = &yes, veto.Target{}
	}
	return e
}

// started is a run of two decisions, appended and loaded by s: its next
// append is pipelined.
func started(t *testing.T, s *sqlstore.Store, run string) veto.RunState {
	t.Helper()
	if err := s.Append(ctx, run, 1, []veto.Event{pe(run, 1, veto.EventRunStarted, ""), pe(run, 2, veto.EventAllowed, "a")}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Load(ctx, run)
	if err != nil || p.Next != 3 || !p.History.Complete() {
		t.Fatalf("load: next %d, complete %v, %v", p.Next, p.History.Complete(), err)
	}
	return p
}

// A decision loaded and appended by one store is one pipelined batch:
// no statement goes alone, begin and commit included; the run's events,
// chain and projections are what a transaction would have left.
func TestPipelinedAppendIsOneBatch(t *testing.T) {
	s, b := traced(t, fresh(t))
	p := started(t, s, "r")
	b.batch.Store(0)
	b.single.Store(0)
	if err := s.Append(ctx, "r", p.Next, []veto.Event{pe("r", 3, veto.EventAllowed, "b")}); err != nil {
		t.Fatal(err)
	}
	if b.batch.Load() != 1 || b.single.Load() != 0 {
		t.Fatalf("the append sent %d batches and %d lone statements, want 1 and 0", b.batch.Load(), b.single.Load())
	}
	q, err := s.Load(ctx, "r")
	if err != nil || q.Next != 4 || q.History.Len() != 2 || !q.History.Complete() {
		t.Fatalf("after: next %d, %d observations, complete %v, %v", q.Next, q.History.Len(), q.History.Complete(), err)
	}
	calls, err := q.Tally.Calls(ctx)
	if err != nil || calls["Read"] != 2 {
		t.Fatalf("tally: %v, %v; want Read 2", calls, err)
	}
	first, prev, stored, err := s.Chain(ctx, "r")
	if err != nil || len(stored) != 3 {
		t.Fatalf("chain: %d events, %v", len(stored), err)
	}
	if brk := eventlog.VerifyChain(stored, first, prev); brk != nil {
		t.Fatalf("the chain breaks at %d", brk.Seq)
	}
}

// The guard refuses a row that moved since the load: another instance
// appended, the run was marked damaged, its last event changed in place.
// Nothing is stored; the writer is told to decide again, and deciding
// again on a fresh load finds the damage.
func TestPipelinedAppendRefusesARowThatMoved(t *testing.T) {
	for _, tc := range []struct {
		name    string
		move    func(t *testing.T, dsn string, s *sqlstore.Store)
		damaged bool
	}{
		{"another-instance-appended", func(t *testing.T, dsn string, _ *sqlstore.Store) {
			o := open(t, dsn)
			if err := o.Append(ctx, "r", 3, []veto.Event{pe("r", 3, veto.EventAllowed, "other")}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"marked-damaged", func(t *testing.T, _ string, s *sqlstore.Store) {
			if _, err := s.DB().ExecContext(ctx, `UPDATE veto_runs SET damaged = true WHERE run = 'r'`); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"last-event-changed-in-place", func(t *testing.T, _ string, s *sqlstore.Store) {
			if _, err := s.DB().ExecContext(ctx, `UPDATE veto_events SET body = $1 WHERE run = 'r' AND seq = 2`, []byte(`{"garbage":1}`)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"last-event-gone", func(t *testing.T, _ string, s *sqlstore.Store) {
			if _, err := s.DB().ExecContext(ctx, `DELETE FROM veto_events WHERE run = 'r' AND seq = 2`); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := fresh(t)
			s, b := traced(t, dsn)
			p := started(t, s, "r")
			_, _, before, _ := s.Chain(ctx, "r")
			tc.move(t, dsn, s)
			b.batch.Store(0)
			err := s.Append(ctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "b")})
			if !errors.Is(err, veto.ErrConflict) || b.batch.Load() != 1 {
				t.Fatalf("Append = %v after %d batches, want a conflict from the pipelined guard", err, b.batch.Load())
			}
			if _, _, after, _ := s.Chain(ctx, "r"); len(after) != len(before)+btoi(tc.name == "another-instance-appended")-btoi(tc.name == "last-event-gone") {
				t.Fatalf("%d events before, %d after the refused append", len(before), len(after))
			}
			q, err := s.Load(ctx, "r")
			if err != nil || q.History.Complete() == tc.damaged {
				t.Fatalf("the fresh load: complete %v, %v; damaged %v", q.History.Complete(), err, tc.damaged)
			}
			if err := s.Append(ctx, "r", q.Next, []veto.Event{pe("r", q.Next, veto.EventAllowed, "b")}); err != nil {
				t.Fatalf("deciding again: %v", err)
			}
			if r, _ := open(t, dsn).Load(ctx, "r"); r.History.Complete() == tc.damaged {
				t.Fatalf("after deciding again the run's completeness is %v; damaged %v", r.History.Complete(), tc.damaged)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A batch that observes a call observed before (a call decided again)
// is refused by the guard before anything is stored, and appended as a
// transaction, which reads the call's observation: one observation, its
// outcome the new decision's.
func TestPipelinedAppendOfACallObservedBefore(t *testing.T) {
	s, b := traced(t, fresh(t))
	p := started(t, s, "r")
	b.batch.Store(0)
	b.single.Store(0)
	if err := s.Append(ctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventDenied, "a")}); err != nil {
		t.Fatal(err)
	}
	if b.batch.Load() != 1 || b.single.Load() == 0 {
		t.Fatalf("%d batches, %d lone statements: want the guard's batch, then a transaction", b.batch.Load(), b.single.Load())
	}
	q, err := s.Load(ctx, "r")
	if err != nil || q.History.Len() != 1 || q.History.At(0).Outcome != veto.Denied {
		t.Fatalf("after: %d observations, %v", q.History.Len(), err)
	}
	if calls, _ := q.Tally.Calls(ctx); calls["Read"] != 0 {
		t.Fatalf("tally: %v; a denied call counts for nothing", calls)
	}
}

// A batch whose statement fails after others ran stores none of them:
// the server runs it as one transaction. The failure is the state's
// (here a constraint the test adds), not a conflict.
func TestPipelinedAppendFailingMidwayStoresNothing(t *testing.T) {
	s, b := traced(t, fresh(t))
	p := started(t, s, "r")
	if _, err := s.DB().ExecContext(ctx, `ALTER TABLE veto_runs ADD CONSTRAINT test_fault CHECK (next < 4)`); err != nil {
		t.Fatal(err)
	}
	b.batch.Store(0)
	err := s.Append(ctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "b")})
	if !errors.Is(err, veto.ErrStateUnavailable) || errors.Is(err, veto.ErrConflict) || b.batch.Load() != 1 {
		t.Fatalf("Append = %v after %d batches, want the state unavailable from the batch", err, b.batch.Load())
	}
	var events, obs, files int
	s.DB().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM veto_events), (SELECT COUNT(*) FROM veto_observations), (SELECT COUNT(*) FROM veto_tally_files)`).
		Scan(&events, &obs, &files)
	if events != 2 || obs != 1 || files != 1 {
		t.Fatalf("after the failed batch: %d events, %d observations, %d file tallies; want 2, 1, 1", events, obs, files)
	}
	if _, err := s.DB().ExecContext(ctx, `ALTER TABLE veto_runs DROP CONSTRAINT test_fault`); err != nil {
		t.Fatal(err)
	}
	q, err := s.Load(ctx, "r")
	if err != nil || q.Next != 3 {
		t.Fatalf("load: next %d, %v", q.Next, err)
	}
	if err := s.Append(ctx, "r", q.Next, []veto.Event{pe("r", q.Next, veto.EventAllowed, "b")}); err != nil {
		t.Fatal(err)
	}
}

// A load within a second of the store's own append trusts the row that
// append left and reads nothing; damage in place since is found by the
// next append's guard, which refuses it (decide again), and the fresh
// load then finds the run incomplete.
func TestOwnRowDamagedInPlaceFoundAtTheAppend(t *testing.T) {
	dsn := fresh(t)
	s, b := traced(t, dsn)
	p := started(t, s, "r")
	if err := s.Append(ctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE veto_events SET body = $1 WHERE run = 'r' AND seq = 3`, []byte(`{"garbage":1}`)); err != nil {
		t.Fatal(err)
	}
	b.batch.Store(0)
	b.single.Store(0)
	q, err := s.Load(ctx, "r")
	if err != nil || q.Next != 4 || b.single.Load() != 0 || b.batch.Load() != 0 {
		t.Fatalf("the load after the store's own append: next %d, %v, %d statements; want 4 and none", q.Next, err, b.single.Load())
	}
	if err := s.Append(ctx, "r", q.Next, []veto.Event{pe("r", q.Next, veto.EventAllowed, "c")}); !errors.Is(err, veto.ErrConflict) {
		t.Fatalf("Append on the trusted row after damage in place = %v, want a conflict", err)
	}
	q, err = s.Load(ctx, "r")
	if err != nil || q.History.Complete() {
		t.Fatalf("the fresh load: complete %v, %v; want incomplete", q.History.Complete(), err)
	}
	if err := s.Append(ctx, "r", q.Next, []veto.Event{pe("r", q.Next, veto.EventAllowed, "c")}); err != nil {
		t.Fatal(err)
	}
	if r, _ := open(t, dsn).Load(ctx, "r"); r.History.Complete() {
		t.Fatal("the run is complete again after the append")
	}
}

// A run two instances append to in turn is read by each load once the
// guard found it moved: one refused batch, then a read and a batch per
// decision, never a refused batch each time.
func TestRunSharedWithAnotherInstanceIsRead(t *testing.T) {
	dsn := fresh(t)
	a, ab := traced(t, dsn)
	o, _ := traced(t, dsn)
	started(t, a, "r")
	decide := func(s *sqlstore.Store, call string) {
		t.Helper()
		for range 3 {
			p, err := s.Load(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			err = s.Append(ctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, call)})
			if err == nil {
				return
			}
			if !errors.Is(err, veto.ErrConflict) {
				t.Fatal(err)
			}
		}
		t.Fatal("three conflicts in a row")
	}
	decide(a, "a1")
	decide(o, "o1")
	ab.batch.Store(0)
	decide(a, "a2") // its own row is stale: refused once, then read
	if n := ab.batch.Load(); n != 2 {
		t.Fatalf("the first decision after the other instance's sent %d batches, want 2", n)
	}
	for i := range 3 {
		decide(o, fmt.Sprintf("o%d", i+2))
		ab.batch.Store(0)
		ab.single.Store(0)
		decide(a, fmt.Sprintf("a%d", i+3))
		if ab.batch.Load() != 1 || ab.single.Load() != 1 {
			t.Fatalf("decision %d in the shared run: %d batches, %d lone statements; want 1 and 1 (its load)", i, ab.batch.Load(), ab.single.Load())
		}
	}
}

// Appends that wait while others commit share one pipelined batch; one
// whose run another instance moved is refused alone (told to decide
// again), and the others of its batch are stored, each whole.
func TestGroupedPipelineRefusesOnlyTheMovedRun(t *testing.T) {
	dsn := fresh(t)
	s := open(t, dsn)
	other := open(t, dsn)
	leads := []string{"l1", "l2", "l3", "l4"}
	runs := []string{"r1", "r2", "r3", "r4", "r5"}
	next := map[string]uint64{}
	for _, r := range append(append([]string{}, leads...), runs...) {
		next[r] = started(t, s, r).Next
	}
	// Another instance appends to r3 after s loaded it.
	if err := other.Append(ctx, "r3", 3, []veto.Event{pe("r3", 3, veto.EventAllowed, "other")}); err != nil {
		t.Fatal(err)
	}
	got := queueBehindLeads(t, s, other, leads, runs, next, nil)
	for _, r := range runs {
		err := <-got[r]
		evs, lerr := s.Events(ctx, r, 0)
		if lerr != nil || len(evs) != 3 {
			t.Fatalf("%s: %d events (%v), want 3", r, len(evs), lerr)
		}
		switch {
		case r == "r3" && !errors.Is(err, veto.ErrConflict):
			t.Errorf("r3, moved by another instance: %v, want a conflict", err)
		case r == "r3" && evs[2].CallID != "other":
			t.Errorf("r3's third event is %s's, want the other instance's", evs[2].CallID)
		case r != "r3" && (err != nil || evs[2].CallID != "late"):
			t.Errorf("%s: %v, third event %s; want it stored", r, err, evs[2].CallID)
		}
	}
}

// queueBehindLeads makes s's appends of runs share one grouped batch: the
// leads' rows are held by other, so the appends that commit them (as
// many as commit at once) wait in their guards, and the runs' appends
// (at seq 3) queue behind them. Once they have, released runs (when
// set), then the hold; the leads' appends must succeed. It returns each
// run's append's answer.
func queueBehindLeads(t *testing.T, s, other *sqlstore.Store, leads, runs []string, next map[string]uint64, released func()) map[string]chan error {
	t.Helper()
	hold, err := other.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `SELECT 1 FROM veto_runs WHERE run = ANY($1) FOR UPDATE`, leads); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, len(leads))
	for _, r := range leads {
		go func() { errs <- s.Append(ctx, r, next[r], []veto.Event{pe(r, next[r], veto.EventAllowed, "lead")}) }()
	}
	waitFor(t, "the leads' appends to wait on their rows", func() bool {
		var n int
		other.DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%veto_claim%'`).Scan(&n)
		return n == len(leads)
	})
	got := make(map[string]chan error, len(runs))
	for _, r := range runs {
		c := make(chan error, 1)
		got[r] = c
		go func() { c <- s.Append(ctx, r, 3, []veto.Event{pe(r, 3, veto.EventAllowed, "late")}) }()
	}
	waitFor(t, "the runs' appends to queue", func() bool { return s.Queued() == len(runs) })
	if released != nil {
		released()
	}
	hold.Rollback()
	for range leads {
		if err := <-errs; err != nil {
			t.Fatalf("a lead's append: %v", err)
		}
	}
	return got
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// Under group commit an append returns only once its batch committed,
// whichever append led it: what it stored is there for another instance
// at once, every time, with 32 writers and up to four batches in flight.
func TestGroupedAppendReturnsOnlyOnceCommitted(t *testing.T) {
	dsn := fresh(t)
	s, other := open(t, dsn), open(t, dsn)
	const writers, each = 32, 15
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for w := range writers {
		wg.Go(func() {
			run := fmt.Sprintf("w%d", w)
			started(t, s, run)
			for i := range each {
				seq := uint64(3 + i)
				if err := s.Append(ctx, run, seq, []veto.Event{pe(run, seq, veto.EventAllowed, fmt.Sprintf("c%d", i))}); err != nil {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s append %d: %v", run, seq, err))
					mu.Unlock()
					return
				}
				st, err := other.Load(ctx, run)
				if err != nil || st.Next != seq+1 {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: after append %d another instance loads next %d (%v)", run, seq, st.Next, err))
					mu.Unlock()
					return
				}
				s.Load(ctx, run) // keep the row for the next pipelined append
			}
		})
	}
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
}

// TestClaimCostDoesNotGrowWithTheRun: the guard of a pipelined append
// looks each call of its batch up by the unique (run, call_id), so it
// reads about one index entry whatever the run's length, on the generic
// plan a long-lived connection ends up with. The sixth migration's
// "call_id = ANY (calls)" was planned there as a scan of every
// observation of the run: 8000 entries read for a run of 8000.
func TestClaimCostDoesNotGrowWithTheRun(t *testing.T) {
	s := open(t, fresh(t))
	started(t, s, "r")
	db := s.DB()
	if _, err := db.ExecContext(ctx, `INSERT INTO veto_observations (run, idx, seq, call_id, tool, outcome, target_kind, target_id)
		SELECT 'r', 100 + g, 100 + g, 'x-' || g, 'Read', 'allowed', 'file', '/w' FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var next int64
	var last string
	if err := tx.QueryRowContext(ctx, `SELECT next, last_hash FROM veto_runs WHERE run = 'r'`).Scan(&next, &last); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := tx.QueryRowContext(ctx, `SELECT veto_claim($1, $2, $3, false, ARRAY['new-call', 'x-0'])`, "r", next, last).Scan(&ok); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	var read int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index WHERE indrelid = 'veto_observations'::regclass`).Scan(&read); err != nil {
		t.Fatal(err)
	}
	if read > 4 {
		t.Fatalf("the guard of a batch of two new calls read %d index entries of a run's 5002 observations, want at most 4", read)
	}
}

// A grouped batch whose commit fails refuses every append in it and
// stores none of them: here a deferred constraint trigger the test adds
// fails the commit of the queued runs' batch, after every statement of it
// ran. The leads, committed before, are untouched.
func TestGroupedPipelineCommitFailureRefusesEveryAppend(t *testing.T) {
	dsn := fresh(t)
	s, b := traced(t, dsn)
	other := open(t, dsn)
	leads := []string{"l1", "l2", "l3", "l4"}
	runs := []string{"r1", "r2", "r3", "r4", "r5"}
	next := map[string]uint64{}
	for _, r := range append(append([]string{}, leads...), runs...) {
		next[r] = started(t, s, r).Next
	}
	if _, err := other.DB().ExecContext(ctx, `CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'the test refuses this commit'; END $$;
		CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON veto_events DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW WHEN (NEW.run LIKE 'r%' AND NEW.seq = 3) EXECUTE FUNCTION refuse_commit()`); err != nil {
		t.Fatal(err)
	}
	got := queueBehindLeads(t, s, other, leads, runs, next, func() { b.batch.Store(0) })
	for _, r := range runs {
		err := <-got[r]
		if err == nil || errors.Is(err, veto.ErrConflict) {
			t.Errorf("%s: the append of a batch whose commit failed returned %v, want a failure of the state", r, err)
		}
		evs, lerr := s.Events(ctx, r, 0)
		if lerr != nil || len(evs) != 2 {
			t.Errorf("%s: %d events (%v) after its batch's commit failed, want the 2 before it", r, len(evs), lerr)
		}
		if st, err := other.Load(ctx, r); err != nil || st.Next != 3 || st.History.Len() != 1 {
			t.Errorf("%s: another instance loads next %d, %d observations (%v): want the run as it was", r, st.Next, st.History.Len(), err)
		}
	}
	if n := b.batch.Load(); n != 1 {
		t.Errorf("the five queued appends were sent in %d batches, want one", n)
	}
	for _, r := range leads {
		if evs, err := s.Events(ctx, r, 0); err != nil || len(evs) != 3 {
			t.Errorf("lead %s: %d events (%v), want 3", r, len(evs), err)
		}
	}
}

// Concurrent appends keep the store's connections: none is closed for
// want of an idle slot and opened again for the next append. With
// database/sql's default of two idle connections, sixteen writers
// closed and opened a connection (a PostgreSQL backend forked, its
// statements prepared again) for most appends: servebench measured 1020
// decisions/s at concurrency 16 with that, 1622 without.
func TestConcurrentAppendsKeepTheirConnections(t *testing.T) {
	s := open(t, fresh(t))
	const writers, each = 16, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			run := fmt.Sprintf("w%d", w)
			started(t, s, run)
			for i := range each {
				seq := uint64(3 + i)
				if err := s.Append(ctx, run, seq, []veto.Event{pe(run, seq, veto.EventAllowed, fmt.Sprintf("c%d", i))}); err != nil {
					t.Errorf("%s append %d: %v", run, seq, err)
					return
				}
				s.Load(ctx, run)
			}
		})
	}
	wg.Wait()
	st := s.DB().Stats()
	if st.MaxIdleClosed != 0 || st.OpenConnections > 8 {
		t.Fatalf("%d connections closed for want of an idle slot, %d open (of at most 8): the store churns its connections", st.MaxIdleClosed, st.OpenConnections)
	}
}

// Callers deciding in one run at once starve none of them, on two
// instances or on one. The one whose append lost reads the run again
// before each try, where the instance that won builds on the row its own
// append left and never reads: unheld, the loser could lose every one of
// its 32 tries and refuse the call as contended (two instances, four
// callers each: 1 to 4 calls of 480 in each of 9 runs; one instance,
// sixteen callers: 3 to 5 of 640 in each of 3, in 2.0–2.3 s). A try
// after two lost, and every try in a run moved under an append within
// the second, holds the run's row from its load to its append, and
// cannot lose: no call is refused, every call has its one decision, and
// the chain holds.
func TestCallersInOneRunStarveNone(t *testing.T) {
	for _, c := range []struct{ instances, callers, each int }{{2, 4, 60}, {1, 16, 40}} {
		t.Run(fmt.Sprintf("%d instances, %d callers each", c.instances, c.callers), func(t *testing.T) {
			sharedRun(t, c.instances, c.callers, c.each)
		})
	}
}

func sharedRun(t *testing.T, instances, callers, each int) {
	dsn := fresh(t)
	gates := make([]*veto.Gate, instances)
	for i := range gates {
		g, err := veto.NewGate(veto.Config{Store: open(t, dsn), Logger: slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelError}))})
		if err != nil {
			t.Fatal(err)
		}
		gates[i] = g
	}
	total := instances * callers * each
	var wg sync.WaitGroup
	var refused atomic.Int64
	for i, g := range gates {
		for c := range callers {
			wg.Go(func() {
				for k := range each {
					v := g.Decide(ctx, &veto.Call{ID: fmt.Sprintf("g%d-c%d-%d", i, c, k), Tool: "Read",
						Run: veto.Run{Ref: "shared", Fresh: true}})
					if !v.Allowed {
						if refused.Add(1) <= 3 {
							t.Errorf("%s refused: %s (%s)", v.CallID, v.Reason, v.Message)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	if n := refused.Load(); n != 0 {
		t.Fatalf("%d of %d calls refused", n, total)
	}
	s := open(t, dsn)
	evs, err := s.Events(ctx, "shared", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range evs {
		if e.Kind == veto.EventAllowed {
			seen[e.CallID]++
		}
	}
	if len(seen) != total {
		t.Fatalf("%d calls have a decision recorded, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s has %d decisions recorded", id, n)
		}
	}
	first, prev, stored, err := s.Chain(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if b := eventlog.VerifyChain(stored, first, prev); b != nil {
		t.Fatalf("the run's chain breaks: %+v", b)
	}
}

// tlog writes a gate's log lines to the test's.
type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }
