package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// A held file's checkpoints start its WAL again from the beginning and
// keep its blocks (RESTART, journal_size_limit): after each checkpoint
// the next decision's frames overwrite the WAL where a truncated WAL
// would grow the file again page by page; and the WAL stays within one
// decision's frames of checkpointAt, however many checkpoints there are,
// and the checkpoints come a WAL's worth of decisions apart, not at every
// decision once the WAL is past checkpointAt.
func TestHeldFileWALKeepsItsBlocks(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true})
	defer f.Close()
	g, err := veto.NewGate(veto.Config{Store: f})
	if err != nil {
		t.Fatal(err)
	}
	walSize := func() int64 {
		fi, err := os.Stat(p + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	checkpoints, last, since := 0, fingerprint{}, 0
	for i := 0; checkpoints < 3; i++ {
		if i > 5000 {
			t.Fatalf("%d checkpoints in %d decisions", checkpoints, i)
		}
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fp := f.walFP
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
		release()
		if !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
		if n := walSize(); n > checkpointAt+1<<20 {
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
			if n := walSize(); n < checkpointAt {
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
// start the WAL again within its blocks (no size limit of this store's
// cuts it back), and the WAL, written again, has the size it had.
func TestHeldFileDoesNotCheckpointAnotherWritersWAL(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true})
	defer f.Close()
	g, err := veto.NewGate(veto.Config{Store: f})
	if err != nil {
		t.Fatal(err)
	}
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
	other, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	og, err := veto.NewGate(veto.Config{Store: other})
	if err != nil {
		t.Fatal(err)
	}
	checkpoints := 0
	for i := 0; i < 200; i++ {
		if v := og.Decide(ctx, &veto.Call{ID: fmt.Sprint("o", i), Tool: "Read", Run: veto.Run{Ref: "other", Fresh: true}}); !v.Allowed {
			t.Fatalf("the other's decision %d: %+v", i, v)
		}
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
	if fi, err := os.Stat(p + "-wal"); err != nil || fi.Size() > 2*checkpointAt {
		t.Fatalf("the WAL: %v, %v", fi, err)
	}
}

// While another process reads the WAL (a transaction open on an older
// view), a held file's checkpoint cannot copy all of it: it does not wait
// for that reader (every request would wait with it), and it does not try
// again at every request, each try syncing the file, but after a pause.
func TestHeldFileCheckpointWaitsForNoReader(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	f := OpenFile(p, Options{Verify: true, BusyTimeout: 2 * time.Second})
	defer f.Close()
	g, err := veto.NewGate(veto.Config{Store: f})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(i int) time.Duration {
		t0 := time.Now()
		release, err := f.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
		release()
		if !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
		return time.Since(t0)
	}
	decide(0)
	// The other process's reader, on the WAL as it is now.
	other, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.DB().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM veto_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	tries, slowest := 0, time.Duration(0)
	for i := 1; i < 400; i++ {
		before := f.walFP
		slowest = max(slowest, decide(i))
		if f.walFP != before {
			tries++
		}
	}
	tx.Rollback()
	if tries == 0 || tries > 2 {
		t.Fatalf("%d checkpoints tried in 400 decisions with the WAL past %d bytes and held by a reader", tries, checkpointAt)
	}
	if slowest > time.Second {
		t.Fatalf("a decision waited %s for the reader", slowest)
	}
	// The reader gone, the next checkpoint (after the pause) copies it all.
	f.ckptAfter = time.Time{}
	for i := 400; i < 800; i++ {
		decide(i)
		if fi, err := os.Stat(p + "-wal"); err == nil && fi.Size() <= checkpointAt {
			return // cut back: checkpointed whole, started again
		}
	}
	t.Fatal("the WAL was never checkpointed whole once the reader was gone")
}

// Every process's store cuts the WAL back when it starts it again: one
// that grew while a reader held it (no checkpoint could copy it all) is
// not left at that size for good.
func TestEveryStoreCutsTheWALBack(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(i int) {
		if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
	walSize := func() int64 {
		fi, err := os.Stat(p + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	decide(0)
	reader, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.DB().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM veto_events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	i := 1
	for ; walSize() < 2*checkpointAt; i++ {
		decide(i)
	}
	tx.Rollback()
	for start := i; walSize() > checkpointAt; i++ {
		if i-start > 2000 {
			t.Fatalf("the WAL is still %d bytes, %d decisions after its reader left", walSize(), i-start)
		}
		decide(i)
	}
}
