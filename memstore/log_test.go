package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/memstore"
)

var ctx = context.Background()

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func started(run string, at time.Time) veto.Event {
	yes := true
	return veto.Event{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Time: at, Complete: &yes}
}

func decided(run string, seq uint64, kind veto.EventKind, at time.Time) veto.Event {
	return veto.Event{V: veto.EventVersion, Run: run, Seq: seq, Kind: kind, Time: at, CallID: fmt.Sprint("c", seq), Tool: "Read"}
}

// fill stores two runs whose events interleave in time.
func fill(t *testing.T) *memstore.Store {
	t.Helper()
	s := memstore.New()
	for _, b := range []struct {
		run string
		evs []veto.Event
	}{
		{"a", []veto.Event{started("a", t0), decided("a", 2, veto.EventAllowed, t0.Add(2*time.Second)), decided("a", 3, veto.EventDenied, t0.Add(4*time.Second))}},
		{"b", []veto.Event{started("b", t0.Add(time.Second)), decided("b", 2, veto.EventDenied, t0.Add(2*time.Second)), decided("b", 3, veto.EventAllowed, t0.Add(3*time.Second))}},
	} {
		if err := s.Append(ctx, b.run, 1, b.evs); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func scan(t *testing.T, s *memstore.Store, q veto.LogQuery) []string {
	t.Helper()
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

// Scan hands on stored events in time, run and sequence order, filtered
// by run, kind, time and cursor, skipping bytes it cannot decode.
func TestScanOrdersAndFilters(t *testing.T) {
	s := fill(t)
	s.AppendRaw("a", []byte("not json"))
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	for name, tc := range map[string]struct {
		q    veto.LogQuery
		want []string
	}{
		"all":            {veto.LogQuery{}, []string{"a1", "b1", "a2", "b2", "b3", "a3"}},
		"one-run":        {veto.LogQuery{Run: "b"}, []string{"b1", "b2", "b3"}},
		"no-run":         {veto.LogQuery{Run: "c"}, nil},
		"denials":        {veto.LogQuery{Kinds: []veto.EventKind{veto.EventDenied}}, []string{"b2", "a3"}},
		"two-kinds":      {veto.LogQuery{Kinds: []veto.EventKind{veto.EventDenied, veto.EventRunStarted}}, []string{"a1", "b1", "b2", "a3"}},
		"since":          {veto.LogQuery{Since: t0.Add(2 * time.Second)}, []string{"a2", "b2", "b3", "a3"}},
		"after-time":     {veto.LogQuery{AfterTime: at(2 * time.Second)}, []string{"a2", "b2", "b3", "a3"}},
		"after-run":      {veto.LogQuery{AfterTime: at(2 * time.Second), AfterRun: "b"}, []string{"b2", "b3", "a3"}},
		"after-later":    {veto.LogQuery{AfterTime: at(3 * time.Second), AfterRun: "b", AfterSeq: 3}, []string{"a3"}},
		"after-seq":      {veto.LogQuery{AfterTime: at(2 * time.Second), AfterRun: "a", AfterSeq: 1}, []string{"a2", "b2", "b3", "a3"}},
		"after-exact":    {veto.LogQuery{AfterTime: at(2 * time.Second), AfterRun: "a", AfterSeq: 2}, []string{"b2", "b3", "a3"}},
		"after-only-run": {veto.LogQuery{AfterRun: "a"}, []string{"a1", "b1", "a2", "b2", "b3", "a3"}},
	} {
		if got := scan(t, s, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Scan(ctx, veto.LogQuery{}, func(string, uint64, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("a callback's error: %v after %d events, want it back after 1", err, n)
	}
}

// Events, Raw, Runs and Chain read a run as stored; a failing store
// refuses every read and write until it heals.
func TestReadsAndFailure(t *testing.T) {
	s := fill(t)
	evs, err := s.Events(ctx, "a", 1)
	if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Seq != 3 {
		t.Fatalf("events after 1: %+v %v", evs, err)
	}
	if evs, _ := s.Events(ctx, "a", 3); len(evs) != 0 {
		t.Fatalf("events after the last: %+v", evs)
	}
	if evs, _ := s.Events(ctx, "none", 0); len(evs) != 0 {
		t.Fatalf("events of no run: %+v", evs)
	}
	raw := s.Raw("a")
	raw[0] = nil
	if s.Raw("a")[0] == nil || len(s.Raw("a")) != 3 || s.Raw("none") != nil {
		t.Fatal("Raw handed out the store's own log")
	}
	if first, prev, log, err := s.Chain(ctx, "a"); err != nil || first != 1 || prev != "" || len(log) != 3 ||
		eventlog.VerifyChain(log, first, prev) != nil {
		t.Fatalf("chain: %d %q %d %v", first, prev, len(log), err)
	}
	if first, _, log, err := s.Chain(ctx, "none"); err != nil || first != 1 || log != nil {
		t.Fatalf("chain of no run: %d %v %v", first, log, err)
	}
	s.Load(ctx, "loaded-only") // a run only looked at is not a run of the log
	if runs, err := s.Runs(ctx); err != nil || !slices.Equal(runs, []string{"a", "b"}) {
		t.Fatalf("runs %v %v", runs, err)
	}

	st, err := s.Load(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	s.Fail(boom)
	if _, err := s.Load(ctx, "a"); err != boom {
		t.Errorf("load: %v", err)
	}
	if err := s.Append(ctx, "a", 4, []veto.Event{decided("a", 4, veto.EventAllowed, t0)}); err != boom {
		t.Errorf("append: %v", err)
	}
	if _, err := s.Events(ctx, "a", 0); err != boom {
		t.Errorf("events: %v", err)
	}
	if _, err := s.Runs(ctx); err != boom {
		t.Errorf("runs: %v", err)
	}
	if err := s.Scan(ctx, veto.LogQuery{}, func(string, uint64, []byte) error { return nil }); err != boom {
		t.Errorf("scan: %v", err)
	}
	if _, _, _, err := s.Chain(ctx, "a"); err != boom {
		t.Errorf("chain: %v", err)
	}
	if _, err := s.Prune(ctx, t0.Add(time.Hour)); err != boom {
		t.Errorf("prune: %v", err)
	}
	if _, err := st.Knowledge.Files(ctx); err != boom {
		t.Errorf("knowledge: %v", err)
	}
	if _, err := st.Knowledge.Egress(ctx); err != boom {
		t.Errorf("egress: %v", err)
	}
	if _, _, err := st.Knowledge.File(ctx, "/x"); err != boom {
		t.Errorf("knowledge file: %v", err)
	}
	if _, err := st.Tally.Calls(ctx); err != boom {
		t.Errorf("tally calls: %v", err)
	}
	if _, err := st.Tally.Failed(ctx, veto.Target{}); err != boom {
		t.Errorf("tally failed: %v", err)
	}
	if _, err := st.Tally.Files(ctx); err != boom {
		t.Errorf("tally files: %v", err)
	}
	s.Fail(nil)
	if err := s.Append(ctx, "a", 4, []veto.Event{decided("a", 4, veto.EventAllowed, t0.Add(5*time.Second))}); err != nil {
		t.Fatalf("after healing: %v", err)
	}
	if calls, err := st.Tally.Calls(ctx); err != nil || calls["Read"] != 2 {
		t.Fatalf("the tally after healing: %v %v", calls, err)
	}
}

// Prune drops each run's events older than the cut, up to its first newer
// or undecodable one, and anchors the chain at what it dropped.
func TestPruneAnchorsTheChain(t *testing.T) {
	s := fill(t)
	full := s.Raw("a")
	n, err := s.Prune(ctx, t0.Add(2*time.Second))
	if err != nil || n != 2 { // a1 and b1: an event at the cut is kept
		t.Fatalf("pruned %d %v, want 2 (a1 and b1)", n, err)
	}
	first, prev, log, err := s.Chain(ctx, "a")
	if err != nil || first != 2 || prev != eventlog.ChainHash(full[0]) || len(log) != 2 || eventlog.VerifyChain(log, first, prev) != nil {
		t.Fatalf("chain after prune: first %d prev %q, %d events, %v", first, prev, len(log), err)
	}
	if n, err := s.Prune(ctx, t0); err != nil || n != 0 {
		t.Fatalf("pruning again before the first kept: %d %v", n, err)
	}
	s.AppendRaw("c", []byte("garbage"))
	if err := s.Append(ctx, "c", 2, []veto.Event{decided("c", 2, veto.EventAllowed, t0)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, t0.Add(time.Hour)); err != nil || n != 4 || len(s.Raw("c")) != 2 {
		t.Fatalf("prune stopped at undecodable bytes? pruned %d %v, c keeps %d", n, err, len(s.Raw("c")))
	}
}

// A batch that cannot be stored leaves nothing behind, and a batch for a
// place already taken is a conflict.
func TestAppendAllOrNothing(t *testing.T) {
	s := fill(t)
	before := len(s.Raw("a"))
	bad := decided("a", 5, veto.EventDenied, t0)
	bad.Risk = veto.Risk(99)
	if err := s.Append(ctx, "a", 4, []veto.Event{decided("a", 4, veto.EventAllowed, t0), bad}); err == nil {
		t.Fatal("an unencodable batch was stored")
	}
	if len(s.Raw("a")) != before {
		t.Fatalf("a failed batch left %d events", len(s.Raw("a"))-before)
	}
	if err := s.Append(ctx, "a", 3, []veto.Event{decided("a", 3, veto.EventAllowed, t0)}); !errors.Is(err, veto.ErrConflict) {
		t.Fatalf("append at a taken place: %v", err)
	}
	if err := s.Append(ctx, "a", 4, []veto.Event{decided("a", 4, veto.EventAllowed, t0)}); err != nil {
		t.Fatal(err)
	}
	first, prev, log, _ := s.Chain(ctx, "a")
	if b := eventlog.VerifyChain(log, first, prev); b != nil {
		t.Fatalf("the chain broke after a failed batch: %v", b)
	}
}

// Events at the same time are scanned by run, then sequence number; a run
// whose events were all pruned is still a run; AppendRaw keeps its own
// copy of the bytes.
func TestScanTiesRunsAndRaw(t *testing.T) {
	s := memstore.New()
	at := t0.Add(time.Minute)
	if err := s.Append(ctx, "b", 1, []veto.Event{started("b", t0), decided("b", 2, veto.EventAllowed, at)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "a", 1, []veto.Event{started("a", t0), decided("a", 2, veto.EventAllowed, t0), decided("a", 3, veto.EventAllowed, at)}); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, s, veto.LogQuery{Since: at}); !slices.Equal(got, []string{"a3", "b2"}) {
		t.Errorf("same-time events %v, want by run first", got)
	}
	if n, err := s.Prune(ctx, at.Add(time.Hour)); err != nil || n != 5 {
		t.Fatalf("pruned %d %v", n, err)
	}
	if runs, err := s.Runs(ctx); err != nil || !slices.Equal(runs, []string{"a", "b"}) {
		t.Errorf("runs after pruning everything: %v %v", runs, err)
	}
	b := []byte(`{"v":1,"run":"c","seq":1,"kind":"run_started","time":"2026-01-01T00:00:00Z","complete":true}`)
	s.AppendRaw("c", b)
	b[0] = 'X'
	if got := s.Raw("c")[0]; got[0] != '{' {
		t.Errorf("AppendRaw kept the caller's bytes: %s", got)
	}
}
