package eventlog_test

import (
	"context"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

var ctx = context.Background()

func ev(seq uint64, kind veto.EventKind, call string) veto.Event {
	e := veto.Event{V: veto.EventVersion, Run: "r", Seq: seq, Kind: kind, CallID: call, Tool: "Write", Time: time.Unix(1700000000, 0).UTC()}
	if kind == veto.EventRunStarted {
		yes := true
		e.Complete, e.CallID, e.Tool = &yes, "", ""
	}
	return e
}

func stored(t *testing.T, evs []veto.Event) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for _, e := range evs {
		e.Prev = prev
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		prev = eventlog.ChainHash(b)
	}
	return out
}

// The chain holds for events as a store writes them, and names the first
// event whose link is broken otherwise.
func TestVerifyChain(t *testing.T) {
	evs := []veto.Event{ev(1, veto.EventRunStarted, ""), ev(2, veto.EventAllowed, "a"), ev(3, veto.EventAllowed, "b")}
	good := stored(t, evs)
	if b := eventlog.VerifyChain(good, 1, ""); b != nil {
		t.Fatalf("a whole chain broke: %v", b)
	}
	if b := eventlog.VerifyChain(good[1:], 2, eventlog.ChainHash(good[0])); b != nil {
		t.Fatalf("a pruned chain from its anchor broke: %v", b)
	}
	swapped := [][]byte{good[0], good[2], good[1]}
	if b := eventlog.VerifyChain(swapped, 1, ""); b == nil || b.Seq != 3 {
		t.Fatalf("events out of order: %v, want a break at 3", b)
	}
	relinked := stored(t, evs[1:]) // the first event's predecessor forgotten
	if b := eventlog.VerifyChain(append([][]byte{good[0]}, relinked...), 1, ""); b == nil || b.Seq != 2 {
		t.Fatalf("a link to the wrong predecessor: %v, want a break at 2", b)
	}
	// A well-linked event whose sequence number skips one.
	skipped := stored(t, []veto.Event{evs[0], ev(3, veto.EventAllowed, "a")})
	if b := eventlog.VerifyChain(skipped, 1, ""); b == nil || b.Seq != 3 || !strings.Contains(b.Reason, "sequence number 3 where 2") {
		t.Fatalf("a gap in a linked chain: %v, want a break at 3", b)
	}
	if b := eventlog.VerifyChain([][]byte{good[0], []byte("{")}, 1, ""); b == nil || b.Seq != 2 {
		t.Fatalf("undecodable bytes: %v, want a break at 2", b)
	}
}

// A projection's tally is its history added up (veto.HistoryTally), after
// every event of a run whose calls change outcome and target.
func TestProjectionTallyIsTheHistoryAddedUp(t *testing.T) {
	file := func(p string) veto.Target { return veto.Target{Kind: veto.TargetFile, ID: p} }
	obs := func(seq uint64, call string, o veto.Outcome, target veto.Target) veto.Event {
		e := ev(seq, veto.EventObserved, call)
		e.Outcome, e.Target = o, target
		return e
	}
	allowed := func(seq uint64, call string, target veto.Target) veto.Event {
		e := ev(seq, veto.EventAllowed, call)
		e.Target = target
		return e
	}
	evs := []veto.Event{
		ev(1, veto.EventRunStarted, ""),
		allowed(2, "a", file("/w/a")),
		allowed(3, "b", file("/w/a")),
		ev(4, veto.EventDenied, "c"),
		obs(5, "a", veto.Failed, file("/w/a")),
		obs(6, "b", veto.Succeeded, file("/w/b")), // b's target moves
		obs(7, "a", veto.Cancelled, veto.Target{}),
		allowed(8, "d", veto.Target{Kind: "url", ID: "x.example"}),
		obs(9, "d", veto.Failed, veto.Target{}),
		// The first call on a file moves away while a later one stays: the
		// later one becomes the first; then it stops counting too.
		allowed(10, "e", file("/w/q")),
		allowed(11, "f", file("/w/q")),
		allowed(12, "g", file("/w/q")),
		obs(13, "e", veto.Succeeded, file("/w/r")),
		obs(14, "f", veto.Denied, veto.Target{}),
		obs(15, "g", veto.Denied, veto.Target{}),
	}
	p := eventlog.NewProjection("r")
	for _, e := range evs {
		p.Apply(e)
		st := p.State()
		want := veto.HistoryTally(&st.History)
		calls, _ := want.Calls(ctx)
		if got := p.TallyCalls(); !maps.Equal(got, calls) {
			t.Fatalf("after %d: calls %v, want %v", e.Seq, got, calls)
		}
		for _, target := range []veto.Target{file("/w/a"), file("/w/b"), {Kind: "url", ID: "x.example"}} {
			failed, _ := want.Failed(ctx, target)
			if got := p.TallyFailed(target); !maps.Equal(got, failed) {
				t.Fatalf("after %d: failed on %v %v, want %v", e.Seq, target, got, failed)
			}
		}
		files, _ := want.Files(ctx)
		if got := p.TallyFiles(); !reflect.DeepEqual(got, files) && (len(got) != 0 || len(files) != 0) {
			t.Fatalf("after %d: files %v, want %v", e.Seq, got, files)
		}
	}
	if st := p.State(); !st.History.Complete() || st.Next != 16 || st.History.Len() != 7 {
		t.Fatalf("state complete=%v next=%d len=%d; want complete, 16, 7", st.History.Complete(), st.Next, st.History.Len())
	}
	if b := (&eventlog.ChainBreak{Seq: 4, Reason: "broken"}); b.Error() != "event 4: broken" {
		t.Fatalf("chain break reads %q", b.Error())
	}
}

// Damage is never undone: a gap, an event that does not decode (Skip) or
// a run that never started leaves the history incomplete for good.
func TestProjectionDamageStays(t *testing.T) {
	for name, apply := range map[string]func(p *eventlog.Projection){
		"gap": func(p *eventlog.Projection) {
			p.Apply(ev(1, veto.EventRunStarted, ""))
			p.Apply(ev(3, veto.EventAllowed, "a"))
		},
		"undecodable": func(p *eventlog.Projection) {
			p.Apply(ev(1, veto.EventRunStarted, ""))
			p.Skip()
		},
		"never started": func(p *eventlog.Projection) {
			p.Apply(ev(1, veto.EventAllowed, "a"))
		},
		"another shape": func(p *eventlog.Projection) {
			p.Apply(ev(1, veto.EventRunStarted, ""))
			e := ev(2, veto.EventAllowed, "a")
			e.V = veto.EventVersion + 1
			p.Apply(e)
		},
	} {
		p := eventlog.NewProjection("r")
		apply(p)
		next := p.Next()
		p.Apply(ev(next, veto.EventAllowed, "later"))
		if st := p.State(); st.History.Complete() {
			t.Errorf("%s: the history is complete again after an append", name)
		}
	}
}
