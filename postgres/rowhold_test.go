package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/rule"
)

// A try that holds the run's row locks it at its load and keeps it until
// its append has committed: another instance's append waits for it, then
// finds the row moved (told to decide again); the held try is two round
// trips, the load's batch and the append's, the commit in the second.
func TestHeldRowMakesOtherWritersWait(t *testing.T) {
	dsn := fresh(t)
	a, ab := traced(t, dsn)
	o := open(t, dsn)
	started(t, a, "r")
	po, err := o.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}

	ab.batch.Store(0)
	ab.single.Store(0)
	hctx := loaded.Holding(ctx)
	p, err := a.Load(hctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	go func() { other <- o.Append(ctx, "r", po.Next, []veto.Event{pe("r", po.Next, veto.EventAllowed, "o1")}) }()
	select {
	case err := <-other:
		t.Fatalf("the other instance's append returned (%v) while the row was held", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Append(hctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "h1")}); err != nil {
		t.Fatalf("the held try's append: %v", err)
	}
	loaded.From(hctx).Release()
	if err := <-other; !errors.Is(err, veto.ErrConflict) {
		t.Fatalf("the other instance's append after the held one: %v, want ErrConflict", err)
	}
	if b, s := ab.batch.Load(), ab.single.Load(); b != 2 || s != 0 {
		t.Fatalf("the held try sent %d batches and %d lone statements, want 2 and 0", b, s)
	}
	q, err := o.Load(ctx, "r")
	if err != nil || q.Next != p.Next+1 || q.History.Len() != 2 || q.History.At(1).CallID != "h1" {
		t.Fatalf("after: next %d, %d observations, %v", q.Next, q.History.Len(), err)
	}
}

// A try that holds the row and appends nothing (its context ended, its
// store refused) lets it go when the gate releases its note: nothing of
// it is stored (a new run's row, made for the lock, included), and the
// other writer goes on.
func TestHeldRowLetGoWithoutAnAppend(t *testing.T) {
	dsn := fresh(t)
	a := open(t, dsn)
	o := open(t, dsn)
	for _, run := range []string{"old", "new"} {
		if run == "old" {
			started(t, a, run)
		}
		hctx := loaded.Holding(ctx)
		if _, err := a.Load(hctx, run); err != nil {
			t.Fatal(err)
		}
		loaded.From(hctx).Release()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		p, err := o.Load(c, run)
		evs := []veto.Event{pe(run, p.Next, veto.EventAllowed, "o1")}
		if !p.Exists() {
			evs = []veto.Event{pe(run, 1, veto.EventRunStarted, ""), pe(run, 2, veto.EventAllowed, "o1")}
		}
		if err == nil {
			err = o.Append(c, run, p.Next, evs)
		}
		cancel()
		if err != nil {
			t.Fatalf("%s: the other writer after the held row was let go: %v", run, err)
		}
	}
	var n int
	if err := a.DB().QueryRowContext(ctx, `SELECT count(*) FROM veto_runs`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d runs' rows, %v", n, err)
	}
	if err := a.DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d connections left in a transaction, %v", n, err)
	}
}

// While it holds the row, a try's reads of the run (the rules' history,
// knowledge and tallies) run on the held connection: on a store of one
// connection they are answered, where the pool would have none to give
// until the try ended.
func TestHeldTryReadsOnItsConnection(t *testing.T) {
	dsn := fresh(t)
	seed := open(t, dsn)
	started(t, seed, "r")
	defer postgres.SetMaxConns(1)()
	a := open(t, dsn)
	c, cancel := context.WithTimeout(loaded.Holding(ctx), 10*time.Second)
	defer cancel()
	p, err := a.Load(c, "r")
	if err != nil {
		t.Fatal(err)
	}
	// The history's read does not end with the decision's context: one
	// waiting for the pool would wait for good.
	returns(t, "the held try's reads wait for a connection of the pool, which has none to give", func() error {
		if p.History.Len() != 1 || p.History.At(0).CallID != "a" {
			return errors.New("the history is not the run's")
		}
		if _, _, err := p.Knowledge.File(c, "/w/a"); err != nil {
			return err
		}
		if calls, err := p.Tally.Calls(c); err != nil || calls["Read"] != 1 {
			return errors.Join(errors.New("the tally is not the run's"), err)
		}
		return a.Append(c, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "h1")})
	})
	loaded.From(c).Release()
	if q, err := a.Load(ctx, "r"); err != nil || q.Next != p.Next+1 {
		t.Fatalf("after: %+v, %v", q, err)
	}
}

// A held try whose append observes a call observed before cannot be
// pipelined (its guard says so): the batch leaves the transaction as it
// was, and the append is made there statement by statement, the call's
// one observation changed, and committed in a batch of its own that
// checks the commit committed.
func TestHeldAppendOfACallObservedBefore(t *testing.T) {
	dsn := fresh(t)
	a, ab := traced(t, dsn)
	started(t, a, "r")
	hctx := loaded.Holding(ctx)
	p, err := a.Load(hctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	ab.batch.Store(0)
	ab.single.Store(0)
	if err := a.Append(hctx, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventDenied, "a")}); err != nil {
		t.Fatal(err)
	}
	loaded.From(hctx).Release()
	if ab.batch.Load() != 2 || ab.single.Load() == 0 {
		t.Fatalf("%d batches, %d lone statements: want the refused batch, statements, and the commit's batch", ab.batch.Load(), ab.single.Load())
	}
	q, err := a.Load(ctx, "r")
	if err != nil || q.Next != p.Next+1 || q.History.Len() != 1 || q.History.At(0).Outcome != veto.Denied {
		t.Fatalf("after: next %d, %d observations, %v", q.Next, q.History.Len(), err)
	}
	if calls, _ := q.Tally.Calls(ctx); calls["Read"] != 0 {
		t.Fatalf("tally: %v; a denied call counts for nothing", calls)
	}
}

// A held try that finds the run damaged (a decision's stored bytes no
// longer decode) marks it in the transaction it holds: on another
// connection the mark would wait for the try's own lock until the
// deadline. The mark is stored with the try's append.
func TestHeldTryMarksDamageInItsTransaction(t *testing.T) {
	dsn := fresh(t)
	a := open(t, dsn)
	started(t, a, "r")
	if err := a.Append(ctx, "r", 3, []veto.Event{pe("r", 3, veto.EventAllowed, "b")}); err != nil {
		t.Fatal(err)
	}
	// Not the last event, which the load proves: the decision of "a".
	if _, err := a.DB().ExecContext(ctx, `UPDATE veto_events SET body = '\x7b'::bytea WHERE run = 'r' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(loaded.Holding(ctx), 10*time.Second)
	defer cancel()
	p, err := a.Load(c, "r")
	if err != nil {
		t.Fatal(err)
	}
	returns(t, "the damage's mark waits for the lock the try holds", func() error {
		if _, found, err := a.Decided(c, "r", "a"); err != nil || found {
			return errors.Join(errors.New("the damaged decision was found, or its mark failed"), err)
		}
		return a.Append(c, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "h1")})
	})
	loaded.From(c).Release()
	var damaged bool
	if err := a.DB().QueryRowContext(ctx, `SELECT damaged FROM veto_runs WHERE run = 'r'`).Scan(&damaged); err != nil || !damaged {
		t.Fatalf("the run's row says damaged=%v (%v), want the mark stored with the append", damaged, err)
	}
}

// returns runs f, and fails the test with f's error, or with stuck when
// f has not returned in 20 s (a wait for good, not a slow machine).
func returns(t *testing.T, stuck string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal(stuck)
	}
}

// One busy run leaves the pool's connections to the others: its tries
// wait their turn to hold its row in memory, one at a time on a
// connection, where each took one of the pool's and blocked on the lock,
// so that a decision in another run waited for a connection until its
// deadline and was refused (2 of 3 runs, sixteen callers in one run whose
// rule took 150 ms, found by review).
func TestOneBusyRunLeavesTheOthersConnections(t *testing.T) {
	slow := &rule.Func{RuleInfo: veto.RuleInfo{ID: "slow", Risk: veto.RiskMapping{Default: veto.RiskHigh}},
		Fn: func(ctx context.Context, in *veto.Input) (veto.Decision, error) {
			if in.Call.Run.Ref == "hot" {
				time.Sleep(150 * time.Millisecond)
			}
			return veto.Allow(), nil
		}}
	g, err := veto.NewGate(veto.Config{Store: open(t, fresh(t)), Rules: []veto.Rule{slow}})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var held atomic.Int64
	for c := range 16 {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprintf("h%d-%d", c, k), Tool: "Read", Run: veto.Run{Ref: "hot", Fresh: true}}); v.Allowed {
					held.Add(1)
				}
			}
		})
	}
	time.Sleep(time.Second) // the hot run's appends race, and its tries hold its row
	for k := range 10 {
		c, cancel := context.WithTimeout(ctx, time.Second)
		v := g.Decide(c, &veto.Call{ID: fmt.Sprintf("c%d", k), Tool: "Read", Run: veto.Run{Ref: "cold", Fresh: true}})
		cancel()
		if !v.Allowed {
			t.Errorf("a decision in another run: %s (%s)", v.Reason, v.Message)
		}
	}
	close(stop)
	wg.Wait()
	if held.Load() == 0 {
		t.Fatal("the busy run decided nothing")
	}
}

// A held try whose context ended before its append sends nothing, and
// takes no connection of the pool for ended: the idle ones stay (pgx
// calls a context's end safe to retry, which was taken for a session the
// server ended, and let every idle connection go).
func TestHeldTryEndedKeepsThePool(t *testing.T) {
	a := open(t, fresh(t))
	started(t, a, "r")
	var wg sync.WaitGroup
	for range 6 { // connections opened, and kept idle
		wg.Go(func() { a.DB().ExecContext(ctx, `SELECT pg_sleep(0.05)`) })
	}
	wg.Wait()
	before := a.DB().Stats()
	c, cancel := context.WithCancel(loaded.Holding(ctx))
	p, err := a.Load(c, "r")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := a.Append(c, "r", p.Next, []veto.Event{pe("r", p.Next, veto.EventAllowed, "h1")}); err == nil {
		t.Fatal("an append whose context ended was stored")
	}
	loaded.From(c).Release()
	if after := a.DB().Stats(); after.MaxIdleClosed != before.MaxIdleClosed || after.OpenConnections < before.OpenConnections {
		t.Fatalf("the pool let connections go: %d open and %d closed for want of a slot before, %d and %d after",
			before.OpenConnections, before.MaxIdleClosed, after.OpenConnections, after.MaxIdleClosed)
	}
}

// A held try reads the row its lock waited for whatever the server's
// default isolation: under REPEATABLE READ a transaction's snapshot would
// be taken before the lock, and the lock, once given, refused (40001),
// the decision refused where it waited its turn.
func TestHeldTryReadsTheRowItWaitedFor(t *testing.T) {
	dsn := fresh(t)
	o := open(t, dsn)
	a := open(t, dsn+"&default_transaction_isolation=repeatable%20read")
	started(t, o, "r")
	octx := loaded.Holding(ctx)
	po, err := o.Load(octx, "r")
	if err != nil {
		t.Fatal(err)
	}
	type loadedRun struct {
		p   veto.RunState
		err error
	}
	got := make(chan loadedRun, 1)
	actx := loaded.Holding(ctx)
	go func() {
		p, err := a.Load(actx, "r") // waits for o's lock
		got <- loadedRun{p, err}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := o.Append(octx, "r", po.Next, []veto.Event{pe("r", po.Next, veto.EventAllowed, "o1")}); err != nil {
		t.Fatal(err)
	}
	loaded.From(octx).Release()
	l := <-got
	if l.err != nil || l.p.Next != po.Next+1 {
		t.Fatalf("the held load after the lock it waited for: next %d, %v; want %d", l.p.Next, l.err, po.Next+1)
	}
	if err := a.Append(actx, "r", l.p.Next, []veto.Event{pe("r", l.p.Next, veto.EventAllowed, "a1")}); err != nil {
		t.Fatal(err)
	}
	loaded.From(actx).Release()
}

// A held load of a run not stored yet sees it so, though the lock made
// its row: no history, no tallies, its start to be appended.
func TestHeldLoadOfANewRun(t *testing.T) {
	a := open(t, fresh(t))
	c := loaded.Holding(ctx)
	p, err := a.Load(c, "n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Exists() || p.Next != 1 || p.Tally != nil || p.Knowledge != nil {
		t.Fatalf("a new run held: exists %v, next %d, tally %v", p.Exists(), p.Next, p.Tally != nil)
	}
	if err := a.Append(c, "n", 1, []veto.Event{pe("n", 1, veto.EventRunStarted, ""), pe("n", 2, veto.EventAllowed, "c1")}); err != nil {
		t.Fatal(err)
	}
	loaded.From(c).Release()
	if q, err := a.Load(ctx, "n"); err != nil || q.Next != 3 || !q.History.Complete() || q.History.Len() != 1 {
		t.Fatalf("after: next %d, %v", q.Next, err)
	}
}
