package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/sqlstore"
)

// RunsIn takes the run ids the stored events' bytes name: one at the
// very start of a file, ids up to the bound and not past it, never an
// empty id or one that is not a JSON string; a missing file is skipped.
func TestRunsInReadsTheIdsTheBytesName(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("l", maxRunID-1) // its closing quote is maxRunID bytes past the opening one
	tooLong := strings.Repeat("m", maxRunID)
	a := filepath.Join(dir, "a")
	b := filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(`"run":"first" junk {"v":1,"run":"r\u00e9"} {"run":""} {"run":"bad\x"} {"run":"`+long+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("\x00\x01{\"run\":\"second\",\"seq\":2}{\"run\":\""+tooLong+"\"}{\"run\":\"first\"}"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := RunsIn(a, filepath.Join(dir, "missing"), b)
	want := []string{"first", long, "ré", "second"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("RunsIn = %q, %v; want %q", got, err, want)
	}
	if _, err := RunsIn(dir); err == nil {
		t.Fatal("RunsIn of a directory answered")
	}
}

// MoveAside moves the file, its WAL and its mark aside, each private; a
// file that is not there is an error, and nothing is named moved.
func TestMoveAsideMovesTheFileOrFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, "veto.db")
	if name, err := MoveAside(p, time.Unix(0, 0)); err == nil || name != "" {
		t.Fatalf("MoveAside of no file = %q, %v; want an error", name, err)
	}
	s, err := Open(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.WriteFile(markPath(p), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 8e6, time.UTC)
	name, err := MoveAside(p, now)
	if want := p + ".damaged-20260304T050607.008Z"; err != nil || name != want {
		t.Fatalf("MoveAside = %q, %v; want %q", name, err, want)
	}
	for _, f := range []string{name, name + ".mark"} {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want a 0600 file", f, fi, err)
		}
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file is still at its path: %v", err)
	}
}

// Probe passes a store that can take a write and refuses one whose write
// lock another holds, as locked.
func TestProbeTakesTheWriteLock(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "veto.db")
	s, err := Open(ctx, p, Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := Probe(ctx, s, p); err != nil {
		t.Fatalf("Probe of a sound store on a disk with room: %v", err)
	}
	other, err := Open(ctx, p, Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var se *veto.StateError
	if err := Probe(ctx, s, p); !errors.As(err, &se) || se.Cause != veto.CauseLocked || se.Path != p {
		t.Fatalf("Probe with the lock held elsewhere: %v, want locked", err)
	}
}

// A mark's detail is cut to 200 bytes in the refusal: the mark is a file
// anyone who can write the directory may have written.
func TestMarkDetailIsBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := identity(fi)
	if err := os.WriteFile(markPath(p), []byte(id+"\n"+strings.Repeat("d", 1000)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var se *veto.StateError
	if err := marked(p, fi); !errors.As(err, &se) || !strings.Contains(se.Detail, ": "+strings.Repeat("d", 200)+"; marked in ") {
		t.Fatalf("marked: %v, want the detail cut to 200 bytes", err)
	}
}

// CheckRuns reports every run: one whose chain holds, one whose first
// stored event is not the anchor's, one whose event does not decode, one
// whose last event was lost, one recorded damaged.
func TestCheckRunsReportsEachRun(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	t0 := time.Unix(1_800_000_000, 0).UTC()
	evs := func(run string, n int) []veto.Event {
		yes := true
		out := []veto.Event{{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes}}
		for i := 2; i <= n; i++ {
			out = append(out, veto.Event{V: veto.EventVersion, Run: run, Seq: uint64(i), Kind: veto.EventAllowed, CallID: run + string(rune('0'+i)), Tool: "Read", Time: t0})
		}
		return out
	}
	for _, run := range []string{"a", "d", "e"} {
		if err := s.Append(ctx, run, 1, evs(run, 3)); err != nil {
			t.Fatal(err)
		}
	}
	second, err := eventlog.EncodeEvent(evs("b", 2)[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRaw(ctx, "b", 2, second); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRaw(ctx, "c", 1, []byte("not an event")); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkIncomplete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `DELETE FROM veto_events WHERE run = 'e' AND seq = 3`); err != nil {
		t.Fatal(err)
	}
	got, err := s.CheckRuns(ctx)
	want := []sqlstore.RunCheck{
		{Run: "a", Events: 3},
		{Run: "b", Events: 1, Marked: true, Broken: 2, Why: "breaks the chain"},
		{Run: "c", Events: 1, Marked: true, Broken: 1, Why: "does not decode"},
		{Run: "d", Events: 3, Marked: true},
		{Run: "e", Events: 2, Broken: 3, Why: "is not the last event the run recorded"},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("CheckRuns = %+v, %v\nwant %+v", got, err, want)
	}
}

// InsertRaw at a sequence number already stored fails and changes
// nothing: the run's history and next number stay.
func TestInsertRawRefusesATakenSequence(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	yes := true
	t0 := time.Unix(1_800_000_000, 0).UTC()
	if err := s.Append(ctx, "r", 1, []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, CallID: "c", Tool: "Read", Time: t0},
	}); err != nil {
		t.Fatal(err)
	}
	other, err := eventlog.EncodeEvent(veto.Event{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventDenied, CallID: "d", Tool: "Bash", Time: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRaw(ctx, "r", 2, other); err == nil {
		t.Fatal("InsertRaw over a stored event succeeded")
	}
	st, err := s.Load(ctx, "r")
	if err != nil || st.Next != 3 || st.History.Len() != 1 || !st.History.Complete() || st.History.At(0).CallID != "c" {
		t.Fatalf("after a refused InsertRaw: next %d, %d observations, %v", st.Next, st.History.Len(), err)
	}
}

// MarkIncomplete gives a run with no events (its row made by an empty
// append) a start that claims no complete history, as it does a run not
// seen at all; a run with events keeps them and is recorded damaged.
func TestMarkIncompleteStartsARunWithNoEvents(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	if err := s.Append(ctx, "empty", 1, nil); err != nil {
		t.Fatal(err)
	}
	yes := true
	if err := s.Append(ctx, "full", 1, []veto.Event{{V: veto.EventVersion, Run: "full", Seq: 1, Kind: veto.EventRunStarted, Time: time.Now().UTC(), Complete: &yes}}); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"empty", "unseen", "full"} {
		if err := s.MarkIncomplete(ctx, run); err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		evs, err := s.Events(ctx, run, 0)
		if err != nil || len(evs) != 1 || evs[0].Kind != veto.EventRunStarted || evs[0].Complete == nil {
			t.Fatalf("%s: events %+v %v, want its one start", run, evs, err)
		}
		if want := run == "full"; *evs[0].Complete != want {
			t.Errorf("%s: its start claims a complete history: %v, want %v", run, *evs[0].Complete, want)
		}
		st, err := s.Load(ctx, run)
		if err != nil || st.Next != 2 || st.History.Complete() {
			t.Errorf("%s: next %d, complete %v, %v; want 2 and incomplete", run, st.Next, st.History.Complete(), err)
		}
	}
}

// A call whose stored decision is damaged has no decision (Decided says
// so, without an error) and its run is damaged from then on; a fact of
// knowledge that does not decode is an error, never a fact.
func TestDamagedDecisionAndKnowledge(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	yes := true
	t0 := time.Unix(1_800_000_000, 0).UTC()
	if err := s.Append(ctx, "r", 1, []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, CallID: "c", Tool: "Read", Time: t0},
		{V: veto.EventVersion, Run: "r", Seq: 3, Kind: veto.EventObserved, CallID: "c", Tool: "Read", Time: t0, Outcome: veto.Succeeded,
			Files: []veto.FileFact{{Path: "/w/a", Exists: true}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE veto_events SET body = 'damaged' WHERE run = 'r' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := s.Decided(ctx, "r", "c"); ok || err != nil || e.Kind != "" {
		t.Fatalf("Decided of a damaged decision = %v %v %v, want none and no error", e.Kind, ok, err)
	}
	st, err := s.Load(ctx, "r")
	if err != nil || st.History.Complete() {
		t.Fatalf("after a damaged decision was read: complete %v, %v; want the run damaged", st.History.Complete(), err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE veto_knowledge SET fact = '{not json' WHERE run = 'r'`); err != nil {
		t.Fatal(err)
	}
	if f, ok, err := st.Knowledge.File(ctx, "/w/a"); ok || err == nil || f.Path != "" {
		t.Fatalf("a fact that does not decode: %+v %v %v, want an error and no fact", f, ok, err)
	}
	if _, ok, err := st.Knowledge.File(ctx, "/w/none"); ok || err != nil {
		t.Fatalf("a file never read: %v %v", ok, err)
	}
}

// A prune that takes every event of a run anchors the chain on the last
// one's hash: the run goes on from there, its projections kept.
func TestPruneOfEveryEventAnchorsOnTheLast(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	yes := true
	t0 := time.Unix(1_800_000_000, 0).UTC()
	evs := []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: t0, Complete: &yes},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, CallID: "c", Tool: "Read", Time: t0},
	}
	if err := s.Append(ctx, "r", 1, evs); err != nil {
		t.Fatal(err)
	}
	_, _, stored, err := s.Chain(ctx, "r")
	if err != nil || len(stored) != 2 {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, t0.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want both events deleted", n, err)
	}
	first, prev, after, err := s.Chain(ctx, "r")
	if err != nil || first != 3 || prev != eventlog.ChainHash(stored[1]) || len(after) != 0 {
		t.Fatalf("after pruning every event: first %d, prev %q, %d events, %v", first, prev, len(after), err)
	}
	st, err := s.Load(ctx, "r")
	if err != nil || st.Next != 3 || st.History.Len() != 1 || !st.History.Complete() {
		t.Fatalf("the projections after the prune: next %d, %d observations, %v", st.Next, st.History.Len(), err)
	}
	next := veto.Event{V: veto.EventVersion, Run: "r", Seq: 3, Kind: veto.EventAllowed, CallID: "d", Tool: "Read", Time: t0.Add(2 * time.Hour)}
	if err := s.Append(ctx, "r", 3, []veto.Event{next}); err != nil {
		t.Fatal(err)
	}
	first, prev, after, _ = s.Chain(ctx, "r")
	if b := eventlog.VerifyChain(after, first, prev); b != nil || len(after) != 1 {
		t.Fatalf("the chain after the prune: %+v (%d events)", b, len(after))
	}
}

// tempStore is a new SQLite state in the test's directory, closed after.
func tempStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "veto.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
