package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/internal/faultdb"
)

// completeOnly allows a call on a complete history: the gate denies it
// history_incomplete on a damaged run.
type completeOnly struct{}

func (completeOnly) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "complete-only", Needs: veto.Needs{CompleteHistory: true}}
}
func (completeOnly) Check(context.Context, *veto.Input) (veto.Decision, error) {
	return veto.Allow(), nil
}

// rowReads counts the reads of a run's row (header).
func rowReads(fs *faultdb.Faults) *faultdb.Fault {
	open := make(chan struct{})
	close(open)
	return fs.Add(faultdb.Fault{Op: faultdb.Query, Match: "FROM veto_runs r LEFT JOIN veto_events e", Hold: open})
}

// A decision in a run this store appended to a moment ago reads the run's
// row neither at its load nor under its append's write lock, where no
// other connection has written since (sqlstore's unmoved.go): the row is
// the one the store's last append left. Each read it once, under the
// write lock, before.
func TestDecisionAfterOwnAppendReadsNoRow(t *testing.T) {
	s, fs, _ := faulty(t)
	g := gateOn(t, s)
	reads := rowReads(fs)
	decide := func(i int) veto.Verdict {
		return g.Decide(fctx, &veto.Call{ID: fmt.Sprint("c", i), Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
	}
	if v := decide(0); !v.Allowed {
		t.Fatal(v)
	}
	first := fs.Fired(reads)
	for i := 1; i <= 10; i++ {
		if v := decide(i); !v.Allowed || v.Seq != uint64(i)+2 {
			t.Fatalf("decision %d: %+v", i, v)
		}
	}
	if n := fs.Fired(reads) - first; n != 0 {
		t.Fatalf("10 decisions read the run's row %d times, want none", n)
	}
	// A load outside a decision (the page, veto log) reads it.
	before := fs.Fired(reads)
	if _, err := s.Load(fctx, "r"); err != nil {
		t.Fatal(err)
	}
	if fs.Fired(reads) != before+1 {
		t.Fatal("a load outside a decision did not read the row")
	}
}

// Another process appends to the run between two of this store's
// decisions: the row this store kept is stale, and the decision made on it
// is not recorded but made again on a fresh load, at the sequence number
// after the other's.
func TestOwnRowMovedByAnotherWriterIsDecidedAgain(t *testing.T) {
	s, _, p := faulty(t)
	g := gateOn(t, s)
	if v := g.Decide(fctx, &veto.Call{ID: "mine-1", Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed || v.Seq != 2 {
		t.Fatal(v)
	}
	og := gateOn(t, otherStore(t, p))
	for i := range 3 {
		if v := og.Decide(fctx, &veto.Call{ID: fmt.Sprint("theirs-", i), Tool: "Read", Run: veto.Run{Ref: "r"}}); !v.Allowed {
			t.Fatal(v)
		}
	}
	if v := g.Decide(fctx, &veto.Call{ID: "mine-2", Tool: "Read", Run: veto.Run{Ref: "r"}}); !v.Allowed || v.Seq != 6 {
		t.Fatalf("after another's three: %+v, want allowed at 6", v)
	}
	_, _, bodies, err := s.Chain(fctx, "r")
	if err != nil || len(bodies) != 6 {
		t.Fatalf("the chain: %d events, %v", len(bodies), err)
	}
	for i := 1; i < len(bodies); i++ {
		e, err := eventlog.DecodeEvent(bodies[i])
		if err != nil || e.Seq != uint64(i+1) || e.Prev != eventlog.ChainHash(bodies[i-1]) {
			t.Fatalf("event %d: %+v %v: not chained to the one before", i+1, e, err)
		}
	}
}

// The run's last event changed in place (damage another process made)
// after this store's append: the decision made on the row it kept, which
// does not know, is not recorded; made again on a fresh load, it finds the
// run damaged and its history incomplete, as a decision that read the row
// would have.
func TestOwnRowDamagedInPlaceIsFound(t *testing.T) {
	s, _, p := faulty(t)
	g := gateOn(t, s, completeOnly{})
	if v := g.Decide(fctx, &veto.Call{ID: "c1", Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed || v.Seq != 2 {
		t.Fatal(v)
	}
	if _, err := otherStore(t, p).DB().ExecContext(fctx, `UPDATE veto_events SET body = CAST(REPLACE(CAST(body AS TEXT), '"c1"', '"cX"') AS BLOB) WHERE run = 'r' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	// A dry run (a shadow policy's) proves nothing at an append: it reads
	// the row, and finds the damage.
	if v := g.DryRun(fctx, &veto.Call{ID: "c2", Tool: "Read", Run: veto.Run{Ref: "r"}}); v.Allowed || v.Reason != veto.ReasonHistoryIncomplete {
		t.Fatalf("a dry run on a run damaged in place: %+v, want denied %s", v, veto.ReasonHistoryIncomplete)
	}
	v := g.Decide(fctx, &veto.Call{ID: "c2", Tool: "Read", Run: veto.Run{Ref: "r"}})
	if v.Allowed || v.Reason != veto.ReasonHistoryIncomplete {
		t.Fatalf("on a run damaged in place: %+v, want denied %s", v, veto.ReasonHistoryIncomplete)
	}
}
