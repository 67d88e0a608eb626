// Package storetest is the conformance suite every veto.Store passes: the
// in-memory one, SQLite and PostgreSQL. A store package calls Run from a
// test, and ChildMain from its TestMain so the suite can start writers in
// other processes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// Store is what the suite tests: a store with its decision log.
type Store interface {
	veto.Store
	veto.Log
}

// Harness opens stores for the suite.
type Harness struct {
	// Open returns a fresh, empty store.
	Open func(t testing.TB) Store
	// Reopen opens the same store again, as a new process would; nil for a
	// store that lives in memory.
	Reopen func(t testing.TB, s Store) Store
	// Raw stores bytes as a run's event at seq, unchecked, as a damaged
	// store would hold them.
	Raw func(t testing.TB, s Store, run string, seq uint64, b []byte)
	// Overwrite replaces the stored bytes of a run's event at seq in place,
	// with SQL of the store's own, as damage would (nil deletes the
	// event); nil skips the test of damage in place.
	Overwrite func(t testing.TB, s Store, run string, seq uint64, b []byte)
	// ChildEnv returns the environment a child process needs to open the
	// same store with the opener given to ChildMain; nil skips the tests
	// with several processes.
	ChildEnv func(t testing.TB, s Store) []string
}

var ctx = context.Background()

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("AppendAndLoad", func(t *testing.T) { appendAndLoad(t, h) })
	t.Run("ConflictStoresNothing", func(t *testing.T) { conflict(t, h) })
	t.Run("BatchIsAtomic", func(t *testing.T) { atomic(t, h) })
	t.Run("DamagedLoadsIncomplete", func(t *testing.T) { damaged(t, h) })
	if h.Overwrite != nil {
		t.Run("DamagedInPlaceLoadsIncomplete", func(t *testing.T) { damagedInPlace(t, h) })
		t.Run("DamagedEarlierMarkedWhenRead", func(t *testing.T) { damagedReadLater(t, h) })
	}
	t.Run("HashChain", func(t *testing.T) { chain(t, h) })
	t.Run("PruneKeepsChain", func(t *testing.T) { prune(t, h) })
	t.Run("ScanFiltersAndOrders", func(t *testing.T) { scanQueries(t, h) })
	t.Run("ConcurrentWriters", func(t *testing.T) { concurrent(t, h) })
	t.Run("EgressAllowListIsAProjection", func(t *testing.T) { egressList(t, h) })
	t.Run("TallyAddsUpTheHistory", func(t *testing.T) { tallyUp(t, h) })
	t.Run("ApprovalsAreAProjection", func(t *testing.T) { approvalsFold(t, h) })
	t.Run("DamagedRunHasNoGrant", func(t *testing.T) { approvalsDamaged(t, h) })
	t.Run("ShownArgumentsKeptApartAndBounded", func(t *testing.T) { shownKept(t, h) })
	if h.ChildEnv != nil {
		t.Run("ProcessesAppendWithoutGapOrDuplicate", func(t *testing.T) { processes(t, h) })
		t.Run("KilledWriterLeavesNoPartialBatch", func(t *testing.T) { killed(t, h) })
	}
}

func gate(t testing.TB, s veto.Store) *veto.Gate {
	t.Helper()
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func appendAndLoad(t *testing.T, h Harness) {
	s := h.Open(t)
	g := gate(t, s)
	run := veto.Run{Ref: "r1", Fresh: true}
	tool := func(id string) *veto.Call { return &veto.Call{ID: id, Tool: "Read", Run: run} }
	for _, id := range []string{"ok", "bad", "stop", "wait"} {
		if v := g.Decide(ctx, tool(id)); !v.Allowed {
			t.Fatalf("decide %s: %+v", id, v)
		}
	}
	fact := veto.FileFact{Path: "/w/a.go", Exists: true, Size: 3, Hash: "abc", ModTime: time.Unix(1700000000, 0).UTC(),
		Stamp: veto.FileStamp{Dev: 1<<63 + 5, Ino: 1<<64 - 1, Change: 1700000000123456789}}
	for id, o := range map[string]veto.Outcome{"ok": veto.Succeeded, "bad": veto.Failed, "stop": veto.Cancelled} {
		if err := g.Observe(ctx, "r1", veto.Observation{CallID: id, Tool: "Read", Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Load(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	// Knowledge through a successful observation with a fact.
	if err := s.Append(ctx, "r1", p.Next, []veto.Event{{V: veto.EventVersion, Run: "r1", Seq: p.Next, Kind: veto.EventObserved,
		CallID: "learn", Tool: "Read", Outcome: veto.Succeeded, Files: []veto.FileFact{fact}, Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if h.Reopen != nil {
		s = h.Reopen(t, s)
	}
	p, err = s.Load(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]veto.Outcome{"ok": veto.Succeeded, "bad": veto.Failed, "stop": veto.Cancelled, "wait": veto.Pending, "learn": veto.Succeeded}
	if !p.History.Complete() || p.History.Len() != len(want) || p.Next != 10 {
		t.Fatalf("loaded complete=%v len=%d next=%d", p.History.Complete(), p.History.Len(), p.Next)
	}
	order := []string{"ok", "bad", "stop", "wait", "learn"}
	for i, o := range p.History.All() {
		if o.CallID != order[i] || o.Outcome != want[o.CallID] {
			t.Errorf("observation %d: %s %s, want %s %s", i, o.CallID, o.Outcome, order[i], want[order[i]])
		}
	}
	got, ok, err := p.Knowledge.File(ctx, "/w/a.go")
	if err != nil || !ok || !got.Same(fact) || !got.ModTime.Equal(fact.ModTime) || got.Stamp != fact.Stamp {
		t.Fatalf("knowledge %+v %v %v", got, ok, err)
	}
	if _, ok, _ := p.Knowledge.File(ctx, "/w/other"); ok {
		t.Fatal("knowledge of a file never read")
	}
	evs, err := s.Events(ctx, "r1", 0)
	if err != nil || len(evs) != 9 || evs[0].Kind != veto.EventRunStarted || evs[8].Files[0].Path != "/w/a.go" || evs[8].Files[0].Stamp != fact.Stamp {
		t.Fatalf("events %d %v", len(evs), err)
	}
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 1 || runs[0] != "r1" {
		t.Fatalf("runs %v %v", runs, err)
	}
}

func ev(run string, seq uint64, kind veto.EventKind, call string) veto.Event {
	e := veto.Event{V: veto.EventVersion, Run: run, Seq: seq, Kind: kind, CallID: call, Tool: "Bash", Time: time.Now().UTC()}
	if kind == veto.EventRunStarted {
		ok := true
		e.Complete = &ok
	}
	return e
}

// tallyUp: the store's tally equals the history added up (the reference,
// veto.HistoryTally) after every batch of a run whose calls change
// outcome and target in every way events allow, and after a reopen.
func tallyUp(t *testing.T, h Harness) {
	s := h.Open(t)
	rng := rand.New(rand.NewPCG(7, 9))
	tools := []string{"Read", "Write", "Bash", "WebFetch"}
	targets := []veto.Target{{}, {Kind: "file", ID: "/w/a"}, {Kind: "file", ID: "/w/b"}, {Kind: "file", ID: "/w/c"}, {Kind: "url", ID: "x.example"}}
	outcomes := []veto.Outcome{veto.Succeeded, veto.Failed, veto.Failed, veto.Cancelled, veto.Denied, veto.Pending}
	if err := s.Append(ctx, "t", 1, []veto.Event{ev("t", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	next, calls := uint64(2), 0
	check := func(s Store) {
		t.Helper()
		st, err := s.Load(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if st.Tally == nil {
			t.Fatal("the store keeps no tally")
		}
		want := veto.HistoryTally(&st.History)
		gc, err1 := st.Tally.Calls(ctx)
		wc, _ := want.Calls(ctx)
		if err1 != nil || !maps.Equal(gc, wc) {
			t.Fatalf("Calls = %v, %v; the history adds up to %v", gc, err1, wc)
		}
		for _, tg := range targets {
			gf, err := st.Tally.Failed(ctx, tg)
			wf, _ := want.Failed(ctx, tg)
			if err != nil || !maps.Equal(gf, wf) && len(gf)+len(wf) > 0 {
				t.Fatalf("Failed(%v) = %v, %v; the history adds up to %v", tg, gf, err, wf)
			}
		}
		gt, err := st.Tally.Files(ctx)
		wt, _ := want.Files(ctx)
		if err != nil || !slices.Equal(gt, wt) {
			t.Fatalf("Files = %v, %v;\nthe history adds up to %v", gt, err, wt)
		}
	}
	for batch := 0; batch < 12; batch++ {
		var evs []veto.Event
		for i := 0; i < 20; i++ {
			var e veto.Event
			if calls == 0 || rng.IntN(2) == 0 {
				calls++
				kind := veto.EventAllowed
				if rng.IntN(4) == 0 {
					kind = veto.EventDenied
				}
				e = ev("t", next, kind, fmt.Sprint("c", calls))
				e.Tool, e.Target = tools[rng.IntN(len(tools))], targets[rng.IntN(len(targets))]
			} else {
				e = ev("t", next, veto.EventObserved, fmt.Sprint("c", 1+rng.IntN(calls)))
				e.Tool, e.Outcome = "", outcomes[rng.IntN(len(outcomes))]
				if rng.IntN(3) == 0 {
					e.Target = targets[rng.IntN(len(targets))]
				}
			}
			evs = append(evs, e)
			next++
		}
		if err := s.Append(ctx, "t", next-uint64(len(evs)), evs); err != nil {
			t.Fatal(err)
		}
		check(s)
	}
	if h.Reopen != nil {
		check(h.Reopen(t, s))
	}
}

// egressList: egress_allowed events build the run's allow-list, in order,
// and it survives a reopen; another run's list is its own.
func egressList(t *testing.T, h Harness) {
	s := h.Open(t)
	allow := func(run string, seq uint64, host string) veto.Event {
		e := ev(run, seq, veto.EventEgressAllowed, "")
		e.Tool, e.Host = "", host
		return e
	}
	if err := s.Append(ctx, "r", 1, []veto.Event{ev("r", 1, veto.EventRunStarted, ""), allow("r", 2, "api.example.com"),
		ev("r", 3, veto.EventAllowed, "c1"), allow("r", 4, "*.docs.example")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "other", 1, []veto.Event{ev("other", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	check := func(s Store) {
		t.Helper()
		st, err := s.Load(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		ek, ok := st.Knowledge, st.Knowledge != nil
		if !ok {
			t.Fatalf("knowledge %T holds no egress allow-list", st.Knowledge)
		}
		got, err := ek.Egress(ctx)
		if err != nil || len(got) != 2 || got[0] != "api.example.com" || got[1] != "*.docs.example" {
			t.Fatalf("Egress = %q, %v; want [api.example.com *.docs.example]", got, err)
		}
		if st.History.Len() != 1 || !st.History.Complete() || st.Next != 5 {
			t.Fatalf("allow events disturbed the history: len=%d complete=%v next=%d", st.History.Len(), st.History.Complete(), st.Next)
		}
		o, _ := s.Load(ctx, "other")
		if got, _ := o.Knowledge.Egress(ctx); len(got) != 0 {
			t.Fatalf("another run's list = %q", got)
		}
	}
	check(s)
	if h.Reopen != nil {
		check(h.Reopen(t, s))
	}
}

func conflict(t *testing.T, h Harness) {
	s := h.Open(t)
	if err := s.Append(ctx, "r", 1, []veto.Event{ev("r", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	err := s.Append(ctx, "r", 1, []veto.Event{ev("r", 1, veto.EventAllowed, "x")})
	if !errors.Is(err, veto.ErrConflict) {
		t.Fatalf("stale next: %v, want ErrConflict", err)
	}
	if p, _ := s.Load(ctx, "r"); p.Next != 2 || p.History.Len() != 0 {
		t.Fatalf("a refused append left next=%d len=%d", p.Next, p.History.Len())
	}
}

func atomic(t *testing.T, h Harness) {
	s := h.Open(t)
	if err := s.Append(ctx, "r", 1, []veto.Event{ev("r", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	// The batch's second event repeats the first's sequence number: the
	// store must refuse the whole batch.
	err := s.Append(ctx, "r", 2, []veto.Event{ev("r", 2, veto.EventAllowed, "a"), ev("r", 2, veto.EventAllowed, "b")})
	if err == nil {
		// A store that takes the batch must at least know it is damaged.
		p, _ := s.Load(ctx, "r")
		if p.History.Complete() {
			t.Fatal("a batch with a repeated sequence number left a complete history")
		}
		return
	}
	p, _ := s.Load(ctx, "r")
	evs, _ := s.Events(ctx, "r", 0)
	if p.Next != 2 || p.History.Len() != 0 || len(evs) != 1 {
		t.Fatalf("a failed batch left part of itself: next=%d len=%d events=%d", p.Next, p.History.Len(), len(evs))
	}
}

func damaged(t *testing.T, h Harness) {
	start := `{"v":1,"run":"R","seq":1,"kind":"run_started","time":"2026-01-01T00:00:00Z","complete":true}`
	good := `{"v":1,"run":"R","seq":2,"kind":"invocation_allowed","time":"2026-01-01T00:00:00Z","call_id":"a","tool":"Read"}`
	for _, tc := range []struct {
		name string
		raw  []string
	}{
		{"not-json", []string{start, "\x00garbage"}},
		{"older-shape", []string{start, strings.Replace(good, `"v":1,`, "", 1)}},
		{"unknown-kind", []string{start, strings.Replace(good, "invocation_allowed", "teleported", 1)}},
		{"unknown-outcome", []string{start, `{"v":1,"run":"R","seq":2,"kind":"observation","call_id":"a","tool":"Read","outcome":"maybe"}`}},
		{"sequence-gap", []string{start, strings.Replace(good, `"seq":2`, `"seq":5`, 1)}},
		{"never-started", []string{strings.Replace(good, `"seq":2`, `"seq":1`, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.Open(t)
			for i, r := range tc.raw {
				seq := uint64(i + 1)
				if tc.name == "sequence-gap" && i == 1 {
					seq = 5
				}
				h.Raw(t, s, "R", seq, []byte(r))
			}
			if h.Reopen != nil {
				s = h.Reopen(t, s)
			}
			p, err := s.Load(ctx, "R")
			if err != nil {
				t.Fatal(err)
			}
			if p.History.Complete() {
				t.Fatal("a damaged run loaded as complete")
			}
			if err := s.Append(ctx, "R", p.Next, []veto.Event{ev("R", p.Next, veto.EventAllowed, "later")}); err != nil {
				t.Fatal(err)
			}
			if p, _ := s.Load(ctx, "R"); p.History.Complete() {
				t.Fatal("appending made a damaged run complete")
			}
		})
	}
}

// damagedInPlace: a run whose stored events were appended whole and then
// changed in place (bytes that do not decode, bytes that decode to
// another event, the last event gone) loads incomplete, on every store
// that stores bytes, and stays incomplete after an append and a reopen.
func damagedInPlace(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name string
		b    func(good []byte) []byte
	}{
		{"not-json", func([]byte) []byte { return []byte("\x00garbage") }},
		{"truncated", func(good []byte) []byte { return good[:len(good)/2] }},
		{"another-event", func(good []byte) []byte {
			return []byte(strings.Replace(string(good), `"call_id":"b"`, `"call_id":"z"`, 1))
		}},
		{"gone", func([]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.Open(t)
			run := "R"
			evs := []veto.Event{ev(run, 1, veto.EventRunStarted, ""), ev(run, 2, veto.EventAllowed, "a"), ev(run, 3, veto.EventAllowed, "b")}
			if err := s.Append(ctx, run, 1, evs); err != nil {
				t.Fatal(err)
			}
			if p, err := s.Load(ctx, run); err != nil || !p.History.Complete() {
				t.Fatalf("a sound run: complete=%v err=%v", p.History.Complete(), err)
			}
			_, _, stored, err := s.Chain(ctx, run)
			if err != nil || len(stored) != 3 {
				t.Fatalf("chain: %d events, %v", len(stored), err)
			}
			h.Overwrite(t, s, run, 3, tc.b(stored[2]))
			p, err := s.Load(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if p.History.Complete() {
				t.Fatal("a run whose last event was damaged in place loaded as complete")
			}
			if err := s.Append(ctx, run, p.Next, []veto.Event{ev(run, p.Next, veto.EventAllowed, "later")}); err != nil {
				t.Fatal(err)
			}
			if h.Reopen != nil {
				s = h.Reopen(t, s)
			}
			if p, _ := s.Load(ctx, run); p.History.Complete() {
				t.Fatal("appending after the damage made the run complete")
			}
		})
	}
}

// damagedReadLater: an earlier event damaged in place is not read by a
// load, but the first path that reads it (Events: replay, the log) makes
// its run incomplete for good.
func damagedReadLater(t *testing.T, h Harness) {
	s := h.Open(t)
	run := "R"
	evs := []veto.Event{ev(run, 1, veto.EventRunStarted, ""), ev(run, 2, veto.EventAllowed, "a"), ev(run, 3, veto.EventAllowed, "b")}
	if err := s.Append(ctx, run, 1, evs); err != nil {
		t.Fatal(err)
	}
	h.Overwrite(t, s, run, 2, []byte("\x00garbage"))
	got, err := s.Events(ctx, run, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("events: %d, %v", len(got), err)
	}
	if h.Reopen != nil {
		s = h.Reopen(t, s)
	}
	if p, _ := s.Load(ctx, run); p.History.Complete() {
		t.Fatal("a run with an event that does not decode loads complete after it was read")
	}
}

func verify(t testing.TB, s Store, run string) *eventlog.ChainBreak {
	t.Helper()
	first, prev, stored, err := s.Chain(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	return eventlog.VerifyChain(stored, first, prev)
}

func chain(t *testing.T, h Harness) {
	s := h.Open(t)
	g := gate(t, s)
	for i := range 20 {
		g.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Read", Run: veto.Run{Ref: "c", Fresh: true}})
	}
	if b := verify(t, s, "c"); b != nil {
		t.Fatalf("an intact chain: %v", b)
	}
	// An event whose predecessor hash is wrong is named.
	p, _ := s.Load(ctx, "c")
	forged := fmt.Sprintf(`{"v":1,"run":"c","seq":%d,"kind":"invocation_allowed","time":"2026-01-01T00:00:00Z","call_id":"f","tool":"Read","prev":"%s"}`,
		p.Next, strings.Repeat("0", 64))
	h.Raw(t, s, "c", p.Next, []byte(forged))
	if b := verify(t, s, "c"); b == nil || b.Seq != p.Next {
		t.Fatalf("a forged link: %v, want event %d named", b, p.Next)
	}
}

func prune(t *testing.T, h Harness) {
	s := h.Open(t)
	old := time.Now().Add(-48 * time.Hour)
	g, err := veto.NewGate(veto.Config{Store: s, Now: func() time.Time { return old }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		g.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Read", Run: veto.Run{Ref: "p", Fresh: true}})
	}
	recent := gate(t, s)
	for i := 10; i < 15; i++ {
		recent.Decide(ctx, &veto.Call{ID: fmt.Sprint(i), Tool: "Read", Run: veto.Run{Ref: "p", Fresh: true}})
	}
	n, err := s.Prune(ctx, time.Now().Add(-24*time.Hour))
	if err != nil || n != 11 {
		t.Fatalf("pruned %d, %v; want the 11 old events", n, err)
	}
	first, _, stored, _ := s.Chain(ctx, "p")
	if first != 12 || len(stored) != 5 {
		t.Fatalf("after pruning: first %d, %d events", first, len(stored))
	}
	if b := verify(t, s, "p"); b != nil {
		t.Fatalf("pruning broke the chain: %v", b)
	}
	if p, _ := s.Load(ctx, "p"); p.History.Len() != 15 || !p.History.Complete() {
		t.Fatalf("pruning changed the projection: len %d", p.History.Len())
	}
	// The run goes on, chained to what remains.
	recent.Decide(ctx, &veto.Call{ID: "after", Tool: "Read", Run: veto.Run{Ref: "p", Fresh: true}})
	if b := verify(t, s, "p"); b != nil {
		t.Fatalf("appending after pruning: %v", b)
	}
}

// scanQueries: Scan hands on stored events in time, run and sequence
// order, filtered by run, kind, time and cursor (a cursor of a time alone
// is every event from that time on, of any run), and stops at the
// callback's error.
func scanQueries(t *testing.T, h Harness) {
	s := h.Open(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	mk := func(run string, seq uint64, kind veto.EventKind, d time.Duration) veto.Event {
		e := ev(run, seq, kind, fmt.Sprint("c", seq))
		e.Time = at(d)
		return e
	}
	for run, evs := range map[string][]veto.Event{
		"a": {mk("a", 1, veto.EventRunStarted, 0), mk("a", 2, veto.EventAllowed, 2*time.Second), mk("a", 3, veto.EventDenied, 4*time.Second)},
		"b": {mk("b", 1, veto.EventRunStarted, time.Second), mk("b", 2, veto.EventDenied, 2*time.Second), mk("b", 3, veto.EventAllowed, 3*time.Second)},
	} {
		if err := s.Append(ctx, run, 1, evs); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(q veto.LogQuery) []string {
		var out []string
		err := s.Scan(ctx, q, func(run string, seq uint64, stored []byte) error {
			e, err := eventlog.DecodeEvent(stored)
			if err != nil || e.Run != run || e.Seq != seq {
				t.Fatalf("scan handed %s %d with %s (%v)", run, seq, stored, err)
			}
			out = append(out, fmt.Sprint(run, seq))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ns := func(d time.Duration) int64 { return at(d).UnixNano() }
	for name, tc := range map[string]struct {
		q    veto.LogQuery
		want []string
	}{
		"all":            {veto.LogQuery{}, []string{"a1", "b1", "a2", "b2", "b3", "a3"}},
		"one-run":        {veto.LogQuery{Run: "b"}, []string{"b1", "b2", "b3"}},
		"no-run":         {veto.LogQuery{Run: "c"}, nil},
		"denials":        {veto.LogQuery{Kinds: []veto.EventKind{veto.EventDenied}}, []string{"b2", "a3"}},
		"run-and-kind":   {veto.LogQuery{Run: "a", Kinds: []veto.EventKind{veto.EventDenied}}, []string{"a3"}},
		"two-kinds":      {veto.LogQuery{Kinds: []veto.EventKind{veto.EventDenied, veto.EventRunStarted}}, []string{"a1", "b1", "b2", "a3"}},
		"since":          {veto.LogQuery{Since: at(2 * time.Second)}, []string{"a2", "b2", "b3", "a3"}},
		"run-since":      {veto.LogQuery{Run: "b", Since: at(2 * time.Second)}, []string{"b2", "b3"}},
		"after-time":     {veto.LogQuery{AfterTime: ns(2 * time.Second)}, []string{"a2", "b2", "b3", "a3"}},
		"after-run":      {veto.LogQuery{AfterTime: ns(2 * time.Second), AfterRun: "b"}, []string{"b2", "b3", "a3"}},
		"after-later":    {veto.LogQuery{AfterTime: ns(3 * time.Second), AfterRun: "b", AfterSeq: 3}, []string{"a3"}},
		"after-seq":      {veto.LogQuery{AfterTime: ns(2 * time.Second), AfterRun: "a", AfterSeq: 1}, []string{"a2", "b2", "b3", "a3"}},
		"after-exact":    {veto.LogQuery{AfterTime: ns(2 * time.Second), AfterRun: "a", AfterSeq: 2}, []string{"b2", "b3", "a3"}},
		"after-only-run": {veto.LogQuery{AfterRun: "a"}, []string{"a1", "b1", "a2", "b2", "b3", "a3"}},
		"run-after":      {veto.LogQuery{Run: "a", AfterTime: ns(0), AfterRun: "a", AfterSeq: 1}, []string{"a2", "a3"}},
	} {
		if got := scan(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Scan(ctx, veto.LogQuery{}, func(string, uint64, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("a callback's error: %v after %d events, want it back after 1", err, n)
	}
}

// appendOne appends one event to run, retrying lost races.
func appendOne(s veto.Store, run, call string) error {
	for {
		p, err := s.Load(ctx, run)
		if err != nil {
			return err
		}
		err = s.Append(ctx, run, p.Next, []veto.Event{ev(run, p.Next, veto.EventAllowed, call)})
		if errors.Is(err, veto.ErrConflict) {
			continue
		}
		return err
	}
}

func checkSequence(t testing.TB, s Store, run string, want int) {
	t.Helper()
	evs, err := s.Events(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != want+1 {
		t.Fatalf("%d events, want %d", len(evs), want+1)
	}
	calls := map[string]bool{}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has sequence number %d", i+1, e.Seq)
		}
		if i > 0 {
			if calls[e.CallID] {
				t.Fatalf("call %s stored twice", e.CallID)
			}
			calls[e.CallID] = true
		}
	}
	if b := verify(t, s, run); b != nil {
		t.Fatalf("chain: %v", b)
	}
}

func concurrent(t *testing.T, h Harness) {
	s := h.Open(t)
	if err := s.Append(ctx, "race", 1, []veto.Event{ev("race", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := appendOne(s, "race", fmt.Sprintf("g%d-%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkSequence(t, s, "race", 400)
}

const childEnv = "VETO_STORETEST_CHILD"

// ChildMain is called first in a store package's TestMain: in a child
// process the suite started, it opens the store with open and does the
// child's work, and never returns.
func ChildMain(open func() (veto.Store, error)) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	s, err := open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		os.Exit(3)
	}
	id := os.Getpid()
	switch mode {
	case "append":
		n, _ := strconv.Atoi(os.Getenv("VETO_STORETEST_N"))
		for i := range n {
			if err := appendOne(s, "procs", fmt.Sprintf("p%d-%d", id, i)); err != nil {
				fmt.Fprintln(os.Stderr, "child: append:", err)
				os.Exit(4)
			}
		}
		os.Exit(0)
	case "batches":
		for i := 0; ; i++ {
			for {
				p, err := s.Load(ctx, "killed")
				if err != nil {
					os.Exit(4)
				}
				batch := make([]veto.Event, 5)
				for j := range batch {
					batch[j] = ev("killed", p.Next+uint64(j), veto.EventAllowed, fmt.Sprintf("k%d-%d-%d", id, i, j))
				}
				err = s.Append(ctx, "killed", p.Next, batch)
				if errors.Is(err, veto.ErrConflict) {
					continue
				}
				if err != nil {
					os.Exit(4)
				}
				break
			}
		}
	}
	os.Exit(5)
}

func child(t testing.TB, h Harness, s Store, mode string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), append(h.ChildEnv(t, s), extra...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func processes(t *testing.T, h Harness) {
	s := h.Open(t)
	if err := s.Append(ctx, "procs", 1, []veto.Event{ev("procs", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range 8 {
		c := child(t, h, s, "append", "VETO_STORETEST_N=500")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("a writer failed: %v", err)
		}
	}
	checkSequence(t, s, "procs", 4000)
}

func killed(t *testing.T, h Harness) {
	s := h.Open(t)
	if err := s.Append(ctx, "killed", 1, []veto.Event{ev("killed", 1, veto.EventRunStarted, "")}); err != nil {
		t.Fatal(err)
	}
	c := child(t, h, s, "batches")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := s.Load(ctx, "killed")
		if err != nil {
			t.Fatal(err)
		}
		if p.Next > 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if h.Reopen != nil {
		s = h.Reopen(t, s)
	}
	// A batch the writer sent whole before it died may still commit (a
	// pipelined one, as a commit sent before a crash): the run is read
	// once it stopped moving.
	for last, still := uint64(0), 0; still < 3 && time.Now().Before(deadline.Add(5*time.Second)); time.Sleep(30 * time.Millisecond) {
		p, err := s.Load(ctx, "killed")
		if err != nil {
			t.Fatal(err)
		}
		if p.Next == last {
			still++
		} else {
			last, still = p.Next, 0
		}
	}
	evs, err := s.Events(ctx, "killed", 0)
	if err != nil {
		t.Fatal(err)
	}
	if (len(evs)-1)%5 != 0 || len(evs) < 200 {
		t.Fatalf("%d events after the kill: a partial batch, or too few written", len(evs))
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has sequence number %d", i+1, e.Seq)
		}
	}
	if b := verify(t, s, "killed"); b != nil {
		t.Fatalf("chain after the kill: %v", b)
	}
	if p, _ := s.Load(ctx, "killed"); p.History.Len() != len(evs)-1 || p.Next != uint64(len(evs)+1) {
		t.Fatalf("projection after the kill: len %d next %d, events %d", p.History.Len(), p.Next, len(evs))
	}
}
