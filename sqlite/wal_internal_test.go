package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// gateOn is a gate on s with the rules given.
func gateOn(t *testing.T, s veto.Store, rules ...veto.Rule) *veto.Gate {
	t.Helper()
	g, err := veto.NewGate(veto.Config{Store: s, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// decideIn has g allow the Read call id in a fresh run, with f's state
// proved first as a long-lived process proves it (f nil: nothing to
// prove); it returns how long that took.
func decideIn(t *testing.T, f *File, g *veto.Gate, id, run string) time.Duration {
	t.Helper()
	t0 := time.Now()
	release := func() {}
	if f != nil {
		var err error
		if release, err = f.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	v := g.Decide(context.Background(), &veto.Call{ID: id, Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}})
	release()
	if !v.Allowed {
		t.Fatalf("decision %s: %+v", id, v)
	}
	return time.Since(t0)
}

func walSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// otherStore opens the state at p as another process does.
func otherStore(t *testing.T, p string) *sqlstore.Store {
	t.Helper()
	s, err := Open(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// unlimitedStore opens the state at p as a process whose connections set
// no journal_size_limit does (a veto from before it, another program):
// starting the WAL again, it leaves it its size.
func unlimitedStore(t *testing.T, p string) *sqlstore.Store {
	t.Helper()
	limit := fmt.Sprintf("&_pragma=journal_size_limit(%d)", checkpointAt)
	d := dsn(p, Options{BusyTimeout: time.Second}, true)
	if !strings.Contains(d, limit) {
		t.Fatalf("the DSN %q sets no size limit to leave out", d)
	}
	db, err := sql.Open("sqlite", strings.Replace(d, limit, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlstore.New(context.Background(), db, dialect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pinReader opens a read transaction on s that holds the WAL as it is
// now, until it is rolled back.
func pinReader(t *testing.T, s *sqlstore.Store) *sql.Tx {
	t.Helper()
	tx, err := s.DB().BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(`SELECT COUNT(*) FROM veto_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return tx
}

// walDecisions is more decisions than fill a WAL to checkpointAt: each
// writes nine frames (a 4 KiB page and its 24-byte header), counted here
// as eight.
var walDecisions = int(checkpointAt/(8*(4096+24)) + 1)

// A held file's checkpoints start its WAL again from the beginning and
// keep its blocks (journal_size_limit): after each checkpoint the next
// decision's frames overwrite the WAL where a truncated WAL would grow
// the file again page by page; and the WAL stays within one decision's
// frames of checkpointAt, however many checkpoints there are, and the
// checkpoints come a WAL's worth of decisions apart, not at every
// decision once the WAL is past checkpointAt.
func TestHeldFileWALKeepsItsBlocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true})
	defer f.Close()
	g := gateOn(t, f)
	checkpoints, last, since := 0, fingerprint{}, 0
	for i := 0; checkpoints < 3; i++ {
		if i > 5000 {
			t.Fatalf("%d checkpoints in %d decisions", checkpoints, i)
		}
		decideIn(t, f, g, fmt.Sprint("c", i), "r")
		fp := f.walFP // as this decision's Acquire left it
		if n := walSize(t, p); n > checkpointAt+1<<20 {
			t.Fatalf("after %d checkpoints the WAL is %d bytes", checkpoints, n)
		}
		since++
		if fp != last {
			// A checkpoint at this Acquire; this decision started the WAL
			// again.
			if checkpoints > 0 && since < 50 {
				t.Fatalf("checkpoint %d came %d decisions after the one before", checkpoints+1, since)
			}
			checkpoints, last, since = checkpoints+1, fp, 0
			if n := walSize(t, p); n < checkpointAt {
				t.Fatalf("the WAL is %d bytes after checkpoint %d and one decision: cut back, not kept", n, checkpoints)
			}
		}
	}
	if n := f.Verifications(); n != 1 {
		t.Fatalf("verified %d times", n)
	}
}

// A held file that only reads while another process writes does not
// checkpoint at each request: after its checkpoint the other's writes
// start the WAL again within its blocks (a process that sets no size
// limit leaves it its size), and the WAL, written again, has the size it
// had.
func TestHeldFileDoesNotCheckpointAnotherWritersWAL(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true})
	defer f.Close()
	g := gateOn(t, f)
	// The held file's own decisions, to its first checkpoint.
	var first fingerprint
	for i := 0; first == (fingerprint{}); i++ {
		if i > 2000 {
			t.Fatal("no checkpoint in 2000 decisions")
		}
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if first = f.walFP; first != (fingerprint{}) {
			release() // checkpointed: the next write is the other's
			break
		}
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "mine", Fresh: true}})
		release()
		if !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
	if first.size <= checkpointAt {
		t.Fatalf("the WAL was %d bytes at the checkpoint", first.size)
	}
	// Another process's store, then the held file only proving the
	// state (as a page's request does) between its writes.
	og := gateOn(t, unlimitedStore(t, p))
	checkpoints := 0
	for i := 0; i < 200; i++ {
		decideIn(t, nil, og, fmt.Sprint("o", i), "other")
		before := f.walFP
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if f.walFP != before {
			checkpoints++
		}
		release()
	}
	if checkpoints > 4 {
		t.Fatalf("%d checkpoints in 200 requests between another's writes", checkpoints)
	}
	if n := walSize(t, p); n > 2*checkpointAt {
		t.Fatalf("the WAL is %d bytes", n)
	}
}

// While another process reads the WAL (a transaction open on an older
// view), a held file's checkpoint cannot copy all of it: it does not wait
// for that reader (every request would wait with it), and it does not try
// again at every request, each try syncing the file, but after a pause.
func TestHeldFileCheckpointWaitsForNoReader(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true, BusyTimeout: 2 * time.Second})
	defer f.Close()
	g := gateOn(t, f)
	decideIn(t, f, g, "c0", "r")
	tx := pinReader(t, otherStore(t, p))
	// Decisions until the first try, and 100 after it: well within the
	// pause, even under the race detector.
	tries, slowest, i := 0, time.Duration(0), 1
	for after := 0; after < 100; i++ {
		if i > 3*walDecisions {
			t.Fatalf("no checkpoint tried in %d decisions", i)
		}
		before := f.walFP
		slowest = max(slowest, decideIn(t, f, g, fmt.Sprint("c", i), "r"))
		if f.walFP != before {
			tries++
		}
		if tries > 0 {
			after++
		}
	}
	tx.Rollback()
	if tries > 2 {
		t.Fatalf("%d checkpoints tried in the 100 decisions after the first, with the WAL past %d bytes and held by a reader", tries, checkpointAt)
	}
	if slowest > time.Second {
		t.Fatalf("a decision waited %s for the reader", slowest)
	}
	// The reader gone, the next checkpoint (after the pause) copies it all.
	f.ckptAfter = time.Time{}
	for last := i + 400; i < last; i++ {
		decideIn(t, f, g, fmt.Sprint("c", i), "r")
		if walSize(t, p) <= checkpointAt {
			return // cut back: checkpointed whole, started again
		}
	}
	t.Fatal("the WAL was never checkpointed whole once the reader was gone")
}

// Every process's store cuts the WAL back when it starts it again: one
// that grew while a reader held it (no checkpoint could copy it all) is
// not left at that size for good.
func TestEveryStoreCutsTheWALBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	g := gateOn(t, otherStore(t, p))
	decideIn(t, nil, g, "c0", "r")
	tx := pinReader(t, otherStore(t, p))
	i := 1
	for ; walSize(t, p) < 2*checkpointAt; i++ {
		decideIn(t, nil, g, fmt.Sprint("c", i), "r")
	}
	tx.Rollback()
	for start := i; walSize(t, p) > checkpointAt; i++ {
		if i-start > 2000 {
			t.Fatalf("the WAL is still %d bytes, %d decisions after its reader left", walSize(t, p), i-start)
		}
		decideIn(t, nil, g, fmt.Sprint("c", i), "r")
	}
}
