package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
