package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/internal/faultdb"
	"github.com/vetohq/veto/sqlstore"
)

// These tests make the real SQLite driver fail one chosen call (through
// internal/faultdb) and check what the store does with the failure: an
// append that fails anywhere stores nothing and says the state is
// unavailable; a read that fails answers an error, never a partial answer.

var fctx = context.Background()

// faulty opens a new store at a file of its own on the real driver, with
// the faults of the returned set.
func faulty(t *testing.T) (*sqlstore.Store, *faultdb.Faults, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "veto.db")
	o := Options{BusyTimeout: 2 * time.Second}
	if err := create(fctx, p, o); err != nil {
		t.Fatal(err)
	}
	fs := &faultdb.Faults{}
	s, err := sqlstore.New(fctx, faultdb.OpenDB(&sqlite.Driver{}, dsn(p, o, true), fs), dialect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fs, p
}

var t0 = time.Unix(1_800_000_000, 0).UTC()

func fev(seq uint64, kind veto.EventKind, call string) veto.Event {
	e := veto.Event{V: veto.EventVersion, Run: "r", Seq: seq, Kind: kind, CallID: call, Tool: "Read", Time: t0.Add(time.Duration(seq) * time.Second)}
	if kind == veto.EventRunStarted {
		yes := true
		e.Complete = &yes
	}
	return e
}

func fileTarget(p string) veto.Target { return veto.Target{Kind: veto.TargetFile, ID: p} }

// prefix is a run's first two events: its start, and a call allowed on
// /w/z.
func prefix() []veto.Event {
	a := fev(2, veto.EventAllowed, "c0")
	a.Target = fileTarget("/w/z")
	return []veto.Event{fev(1, veto.EventRunStarted, ""), a}
}

// batch touches every table an append writes: a new observation, a call
// that fails on another file than the one it was allowed on (its
// observation, the tallies of calls, failures and files), a call that
// succeeds reading a file (knowledge), and an egress allowance.
func batch() []veto.Event {
	a := fev(3, veto.EventAllowed, "c1")
	a.Target = fileTarget("/w/a")
	o := fev(4, veto.EventObserved, "c1")
	o.Outcome, o.Target = veto.Failed, fileTarget("/w/b")
	r := fev(5, veto.EventAllowed, "c2")
	r.Target = fileTarget("/w/c")
	k := fev(6, veto.EventObserved, "c2")
	k.Outcome = veto.Succeeded
	k.Files = []veto.FileFact{{Path: "/w/c", Exists: true, Size: 3}}
	g := fev(7, veto.EventEgressAllowed, "")
	g.Host = "x.example"
	return []veto.Event{a, o, r, k, g}
}

// snapshot is what the store answers about run r.
type snapshot struct {
	Next      uint64
	Events    []string
	History   []veto.Observation
	Complete  bool
	Calls     map[string]int
	Failed    map[string]int
	Files     []veto.Observation
	Knowledge []string
	Egress    []string
}

func snap(t *testing.T, s *sqlstore.Store) snapshot {
	t.Helper()
	st, err := s.Load(fctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var sn snapshot
	sn.Next = st.Next
	evs, err := s.Events(fctx, "r", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		sn.Events = append(sn.Events, fmt.Sprintf("%d %s %s", e.Seq, e.Kind, e.CallID))
	}
	if st.Tally == nil {
		return sn // no run yet
	}
	sn.History, sn.Complete = st.History.Observations(), st.History.Complete()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	sn.Calls, err = st.Tally.Calls(fctx)
	must(err)
	sn.Failed, err = st.Tally.Failed(fctx, fileTarget("/w/b"))
	must(err)
	sn.Files, err = st.Tally.Files(fctx)
	must(err)
	sn.Knowledge, err = st.Knowledge.Files(fctx)
	must(err)
	sn.Egress, err = st.Knowledge.Egress(fctx)
	must(err)
	return sn
}

// unavailableBy fails the test unless err is the store's unavailable
// error wrapping the injected fault (a scan's fault is database/sql's
// error: the row has a column more than the Scan asks for).
func unavailableBy(t *testing.T, what string, op faultdb.Op, err error) {
	t.Helper()
	if !errors.Is(err, veto.ErrStateUnavailable) || (op != faultdb.Scan && !errors.Is(err, faultdb.ErrInjected)) || errors.Is(err, veto.ErrConflict) {
		t.Fatalf("%s: error %v, want the state unavailable because of the injected fault", what, err)
	}
}

// An append whose transaction fails at any statement, or whose commit
// fails, stores nothing of its batch: every answer about the run is the
// one before it, and the same batch appends afterwards.
func TestAppendFailingAnywhereStoresNothing(t *testing.T) {
	for _, tc := range []struct {
		op    faultdb.Op
		match string
		fresh bool // the batch starts the run
		moved bool // another connection wrote after the run's first events: the append proves the schema and reads the row
	}{
		{faultdb.Begin, "", false, false},
		{faultdb.Query, "PRAGMA data_version", false, false},
		{faultdb.Scan, "PRAGMA data_version", false, false},
		// Another connection having written since the store's last
		// append, an append proves the schema's marker and reads the
		// run's row; with nothing written since, it reads neither
		// (TestDecisionAfterOwnAppendReadsNoRow).
		{faultdb.Query, "FROM veto_meta WHERE key", false, true},
		{faultdb.Scan, "FROM veto_meta WHERE key", false, true},
		{faultdb.Query, "FROM veto_runs r LEFT JOIN", false, true},
		{faultdb.Scan, "FROM veto_runs r LEFT JOIN", false, true},
		{faultdb.Exec, "INSERT INTO veto_events", false, false},
		{faultdb.Query, "FROM veto_observations WHERE run = ? AND call_id", false, false},
		{faultdb.Exec, "INSERT INTO veto_observations", false, false},
		{faultdb.Exec, "UPDATE veto_observations", false, false},
		{faultdb.Exec, "INSERT INTO veto_tally_calls", false, false},
		{faultdb.Exec, "INSERT INTO veto_tally_failed", false, false},
		{faultdb.Exec, "UPDATE veto_tally_files SET n = n - 1", false, false},
		{faultdb.Exec, "UPDATE veto_tally_files SET first_idx", false, false},
		{faultdb.Exec, "INSERT INTO veto_tally_files", false, false},
		{faultdb.Exec, "INSERT INTO veto_knowledge", false, false},
		{faultdb.Exec, "INSERT INTO veto_egress", false, false},
		{faultdb.Exec, "UPDATE veto_runs", false, false},
		{faultdb.Exec, "INSERT INTO veto_runs", true, false},
		{faultdb.Commit, "", false, false},
		{faultdb.Commit, "", true, false},
	} {
		name := fmt.Sprintf("%s %s fresh=%v moved=%v", tc.op, tc.match, tc.fresh, tc.moved)
		t.Run(name, func(t *testing.T) {
			s, fs, p := faulty(t)
			events, next := append(prefix(), batch()...), uint64(1)
			if !tc.fresh {
				if err := s.Append(fctx, "r", 1, prefix()); err != nil {
					t.Fatal(err)
				}
				events, next = batch(), 3
			}
			if tc.moved {
				if err := otherStore(t, p).Append(fctx, "other", 1, prefix()); err != nil {
					t.Fatal(err)
				}
			}
			before := snap(t, s)
			f := fs.Fail(tc.op, tc.match, 1)
			err := s.Append(fctx, "r", next, events)
			if fs.Fired(f) != 1 {
				t.Fatalf("the fault never fired: the batch does not reach %s %q", tc.op, tc.match)
			}
			unavailableBy(t, "Append", tc.op, err)
			fs.Clear()
			if after := snap(t, s); !reflect.DeepEqual(after, before) {
				t.Fatalf("a failed append changed the run:\nbefore %+v\nafter  %+v", before, after)
			}
			if err := s.Append(fctx, "r", next, events); err != nil {
				t.Fatalf("the batch after the fault: %v", err)
			}
			if got := snap(t, s); got.Next != 8 || len(got.Events) != 7 {
				t.Fatalf("after the batch: %+v", got)
			}
		})
	}
}

// A driver error that says another writer stored the key first is a
// conflict, whether the statement or the commit reports it: the gate
// decides again, never refuses the state.
func TestDriverConflictIsAConflict(t *testing.T) {
	s, fs, p := faulty(t)
	// A real duplicate key, from the driver itself.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(filepath.Dir(p), "dup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE k (a INTEGER PRIMARY KEY); INSERT INTO k VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, dup := db.Exec(`INSERT INTO k VALUES (1)`)
	if !dialect.Conflict(dup) {
		t.Fatalf("no duplicate key: %v", dup)
	}
	for _, op := range []faultdb.Op{faultdb.Exec, faultdb.Commit} {
		match := ""
		if op == faultdb.Exec {
			match = "INSERT INTO veto_events"
		}
		fs.Add(faultdb.Fault{Op: op, Match: match, N: 1, Err: dup})
		err := s.Append(fctx, "r", 1, prefix())
		if !errors.Is(err, veto.ErrConflict) || errors.Is(err, veto.ErrStateUnavailable) {
			t.Errorf("%s reporting a duplicate key: Append = %v, want veto.ErrConflict", op, err)
		}
		fs.Clear()
		if sn := snap(t, s); sn.Next != 1 {
			t.Fatalf("a conflicting append stored events: %+v", sn)
		}
	}
}

// Every read that fails answers an error, never what was read before the
// failure or zero values for what was not.
func TestReadFailingAnswersAnError(t *testing.T) {
	s, fs, _ := faulty(t)
	if err := s.Append(fctx, "r", 1, append(prefix(), batch()...)); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(fctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	rows := func(n int, err error) error { return err }
	for _, tc := range []struct {
		name  string
		op    faultdb.Op
		match string
		call  func() error
	}{
		{"Load", faultdb.Scan, "FROM veto_runs r LEFT JOIN", func() error { _, err := s.Load(fctx, "r"); return err }},
		{"Tally.Calls query", faultdb.Query, "FROM veto_tally_calls", func() error { _, err := st.Tally.Calls(fctx); return err }},
		{"Tally.Calls scan", faultdb.Scan, "FROM veto_tally_calls", func() error { _, err := st.Tally.Calls(fctx); return err }},
		{"Tally.Calls fetch", faultdb.Next, "FROM veto_tally_calls", func() error { _, err := st.Tally.Calls(fctx); return err }},
		{"Tally.Failed scan", faultdb.Scan, "FROM veto_tally_failed", func() error {
			_, err := st.Tally.Failed(fctx, fileTarget("/w/b"))
			return err
		}},
		{"Tally.Files query", faultdb.Query, "FROM veto_tally_files", func() error { _, err := st.Tally.Files(fctx); return err }},
		{"Tally.Files scan", faultdb.Scan, "FROM veto_tally_files", func() error { _, err := st.Tally.Files(fctx); return err }},
		{"Knowledge.File", faultdb.Scan, "SELECT fact FROM veto_knowledge", func() error {
			_, _, err := st.Knowledge.File(fctx, "/w/c")
			return err
		}},
		{"Knowledge.Files query", faultdb.Query, "SELECT path FROM veto_knowledge", func() error { _, err := st.Knowledge.Files(fctx); return err }},
		{"Knowledge.Files scan", faultdb.Scan, "SELECT path FROM veto_knowledge", func() error { _, err := st.Knowledge.Files(fctx); return err }},
		{"Knowledge.Egress query", faultdb.Query, "FROM veto_egress", func() error { _, err := st.Knowledge.Egress(fctx); return err }},
		{"Knowledge.Egress scan", faultdb.Scan, "FROM veto_egress", func() error { _, err := st.Knowledge.Egress(fctx); return err }},
		{"Decided", faultdb.Scan, "SELECT e.body FROM veto_observations", func() error {
			_, _, err := s.Decided(fctx, "r", "c1")
			return err
		}},
		{"Events query", faultdb.Query, "SELECT body FROM veto_events WHERE run = ? AND seq > ?", func() error { _, err := s.Events(fctx, "r", 0); return err }},
		{"Events scan", faultdb.Scan, "SELECT body FROM veto_events WHERE run = ? AND seq > ?", func() error { _, err := s.Events(fctx, "r", 0); return err }},
		{"Runs scan", faultdb.Scan, "SELECT run FROM veto_runs", func() error { _, err := s.Runs(fctx); return err }},
		{"Scan scan", faultdb.Scan, "SELECT run, seq, at_ns, body", func() error {
			return s.Scan(fctx, veto.LogQuery{}, func(string, uint64, []byte) error { return nil })
		}},
		{"Chain anchor", faultdb.Scan, "SELECT anchor_seq", func() error { _, _, _, err := s.Chain(fctx, "r"); return err }},
		{"Chain query", faultdb.Query, "SELECT body FROM veto_events WHERE run = ? ORDER BY seq", func() error { _, _, _, err := s.Chain(fctx, "r"); return err }},
		{"Chain scan", faultdb.Scan, "SELECT body FROM veto_events WHERE run = ? ORDER BY seq", func() error { _, _, _, err := s.Chain(fctx, "r"); return err }},
		{"Migrations", faultdb.Scan, "FROM veto_meta", func() error { _, err := s.Migrations(fctx); return err }},
		{"CheckRuns runs", faultdb.Query, "SELECT run FROM veto_runs", func() error { _, err := s.CheckRuns(fctx); return err }},
		{"CheckRuns header", faultdb.Query, "FROM veto_runs r LEFT JOIN", func() error { _, err := s.CheckRuns(fctx); return err }},
		{"CheckRuns chain", faultdb.Scan, "SELECT anchor_seq", func() error { _, err := s.CheckRuns(fctx); return err }},
		{"MarkIncomplete header", faultdb.Query, "FROM veto_runs r LEFT JOIN", func() error { return s.MarkIncomplete(fctx, "r") }},
		{"MarkIncomplete mark", faultdb.Exec, "UPDATE veto_runs SET damaged", func() error { return s.MarkIncomplete(fctx, "r") }},
		{"MarkIncomplete start", faultdb.Exec, "INSERT INTO veto_events", func() error { return s.MarkIncomplete(fctx, "unseen") }},
		{"Prune runs", faultdb.Query, "SELECT run FROM veto_runs", func() error { return rows(s.Prune(fctx, t0.Add(time.Hour))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fs.Fail(tc.op, tc.match, 1)
			err := tc.call()
			if fs.Fired(f) != 1 {
				t.Fatalf("the fault never fired")
			}
			fs.Clear()
			unavailableBy(t, tc.name, tc.op, err)
		})
	}
	// InsertRaw (for tests of damage) fails as its header's read or its
	// insert does, storing nothing.
	for _, match := range []string{"FROM veto_runs r LEFT JOIN", "INSERT INTO veto_events"} {
		f := fs.Fail(faultdb.Exec, match, 1)
		if strings.HasPrefix(match, "FROM") {
			f = fs.Fail(faultdb.Query, match, 1)
		}
		err := s.InsertRaw(fctx, "r", 9, []byte("not an event"))
		if fs.Fired(f) != 1 {
			t.Fatalf("InsertRaw %s: the fault never fired", match)
		}
		fs.Clear()
		if !errors.Is(err, faultdb.ErrInjected) {
			t.Errorf("InsertRaw failing at %s: %v, want the fault", match, err)
		}
	}
	// The lazy history: a failed read of the observations is the history
	// unavailable, never a history of zero observations.
	for _, op := range []faultdb.Op{faultdb.Query, faultdb.Scan, faultdb.Next} {
		st, err := s.Load(fctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		f := fs.Fail(op, "AND idx < ?", 1)
		got := func() (r any) {
			defer func() { r = recover() }()
			return st.History.At(0)
		}()
		if fs.Fired(f) != 1 {
			t.Fatalf("history %s: the fault never fired", op)
		}
		fs.Clear()
		if err, ok := got.(error); !ok || !errors.Is(err, veto.ErrHistoryUnavailable) {
			t.Errorf("history %s failing: At(0) = %v, want a panic with veto.ErrHistoryUnavailable", op, got)
		}
	}
	// Nothing above changed the run.
	if sn := snap(t, s); sn.Next != 8 || len(sn.History) != 3 || !sn.Complete {
		t.Fatalf("after the failed reads: %+v", sn)
	}
}

// A prune that fails at any step deletes nothing and moves no anchor:
// the chain still verifies from the first event.
func TestPruneFailingAnywhereDeletesNothing(t *testing.T) {
	for _, tc := range []struct {
		op    faultdb.Op
		match string
	}{
		{faultdb.Begin, ""},
		{faultdb.Scan, "SELECT MAX(seq)"},
		{faultdb.Scan, "SELECT body FROM veto_events WHERE run = ? AND seq = ?"},
		{faultdb.Exec, "DELETE FROM veto_events"},
		{faultdb.Exec, "UPDATE veto_runs SET anchor_seq"},
		{faultdb.Commit, ""},
	} {
		t.Run(string(tc.op)+" "+tc.match, func(t *testing.T) {
			s, fs, _ := faulty(t)
			if err := s.Append(fctx, "r", 1, append(prefix(), batch()...)); err != nil {
				t.Fatal(err)
			}
			f := fs.Fail(tc.op, tc.match, 1)
			n, err := s.Prune(fctx, t0.Add(3500*time.Millisecond)) // events 1 to 3 are older
			if fs.Fired(f) != 1 {
				t.Fatal("the fault never fired")
			}
			fs.Clear()
			unavailableBy(t, "Prune", tc.op, err)
			if n != 0 {
				t.Errorf("a failed prune reports %d events deleted", n)
			}
			first, prev, stored, err := s.Chain(fctx, "r")
			if err != nil || first != 1 || prev != "" || len(stored) != 7 {
				t.Fatalf("after a failed prune: first %d, prev %q, %d events, %v; want all 7 from 1", first, prev, len(stored), err)
			}
			if b := eventlog.VerifyChain(stored, first, prev); b != nil {
				t.Fatalf("the chain breaks after a failed prune: %+v", b)
			}
			// And the prune succeeds afterwards.
			if n, err := s.Prune(fctx, t0.Add(3500*time.Millisecond)); err != nil || n != 3 {
				t.Fatalf("the prune after the fault: %d, %v; want 3 deleted", n, err)
			}
		})
	}
}

// A migration that fails leaves the database as it was: nothing of it
// recorded, no transaction left holding the file's write lock, and the
// next open applies it.
func TestMigrationFailingLeavesTheFileUsable(t *testing.T) {
	for _, match := range []string{"CREATE TABLE veto_runs", "CREATE TABLE veto_egress", "DELETE FROM veto_meta", "INSERT INTO veto_meta", "commit"} {
		t.Run(match, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "veto.db")
			o := Options{BusyTimeout: 300 * time.Millisecond}
			fs := &faultdb.Faults{}
			f := fs.Fail(faultdb.Exec, match, 1)
			if match == "commit" {
				fs.Clear()
				f = fs.Fail(faultdb.Commit, "", 1)
			}
			db := faultdb.OpenDB(&sqlite.Driver{}, "file:"+escape(p)+"?_pragma=busy_timeout(300)&_pragma=journal_mode(WAL)&_txlock=immediate", fs)
			_, err := sqlstore.New(fctx, db, dialect)
			if fs.Fired(f) != 1 {
				t.Fatal("the fault never fired")
			}
			if !errors.Is(err, veto.ErrStateUnavailable) || !errors.Is(err, faultdb.ErrInjected) {
				t.Fatalf("New = %v, want the state unavailable because of the fault", err)
			}
			// Another connection to the file migrates it: no lock is held.
			db2, err := sql.Open("sqlite", dsn(p, o, true))
			if err != nil {
				t.Fatal(err)
			}
			s, err := sqlstore.New(fctx, db2, dialect)
			if err != nil {
				t.Fatalf("the next open: %v", err)
			}
			defer s.Close()
			if n, err := s.Migrations(fctx); err != nil || n != len(dialect.Migrations) {
				t.Fatalf("Migrations = %d, %v; want %d", n, err, len(dialect.Migrations))
			}
			db.Close()
		})
	}
}

// A Named store returns a failure as a StateError naming its cause and
// the store's name, through the error chain, and passes every success
// through as it is.
func TestNamedStoreNamesTheFailure(t *testing.T) {
	s, fs, _ := faulty(t)
	n := &sqlstore.Named{Store: s, Name: "the test state", Classify: classify}
	c := fctx
	if err := n.Append(c, "r", 1, prefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Load(c, "r"); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := n.Decided(c, "r", "c0"); err != nil || !ok || e.Kind != veto.EventAllowed {
		t.Fatalf("Decided = %v %v %v", e.Kind, ok, err)
	}
	if evs, err := n.Events(c, "r", 0); err != nil || len(evs) != 2 {
		t.Fatalf("Events = %d %v", len(evs), err)
	}
	for _, tc := range []struct {
		name  string
		op    faultdb.Op
		match string
		call  func(context.Context) error
	}{
		{"Load", faultdb.Query, "FROM veto_runs r LEFT JOIN", func(c context.Context) error { _, err := n.Load(c, "r"); return err }},
		{"Append", faultdb.Exec, "INSERT INTO veto_events", func(c context.Context) error { return n.Append(c, "r", 3, batch()) }},
		{"Events", faultdb.Query, "SELECT body FROM veto_events", func(c context.Context) error { _, err := n.Events(c, "r", 0); return err }},
		{"Decided", faultdb.Query, "SELECT e.body", func(c context.Context) error { _, _, err := n.Decided(c, "r", "c0"); return err }},
	} {
		fs.Fail(tc.op, tc.match, 1)
		err := tc.call(fctx)
		fs.Clear()
		se := veto.StateErrorOf(err)
		if se == nil || se.Path != "the test state" || se.Cause != veto.CauseUnreachable || !errors.Is(err, faultdb.ErrInjected) ||
			!strings.Contains(se.Reason(), "the test state cannot be reached") {
			t.Errorf("%s: error %v, want a StateError of the test state", tc.name, err)
		}
	}
	// A conflict is still a conflict (the gate decides again), named as
	// contention.
	err := n.Append(c, "r", 1, prefix())
	if se := veto.StateErrorOf(err); !errors.Is(err, veto.ErrConflict) || se == nil || se.Path != "the test state" || !strings.Contains(se.Reason(), "is contended") {
		t.Fatalf("a stale append: %v, want veto.ErrConflict named contended", err)
	}
}

// The first migration failing because another process applied it first
// (the driver's duplicate key) is met by reading the schema marker again:
// the open succeeds, on the schema the other process made. A conflict on a
// later migration is an error like any other.
func TestMigrationLostToAnotherProcessIsRetried(t *testing.T) {
	dupDB, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "dup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer dupDB.Close()
	if _, err := dupDB.Exec(`CREATE TABLE k (a INTEGER PRIMARY KEY); INSERT INTO k VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	_, dup := dupDB.Exec(`INSERT INTO k VALUES (1)`)
	for _, tc := range []struct {
		match string
		ok    bool
	}{{"CREATE TABLE veto_runs", true}, {"CREATE TABLE veto_egress", false}} {
		p := filepath.Join(t.TempDir(), "veto.db")
		fs := &faultdb.Faults{}
		f := fs.Add(faultdb.Fault{Op: faultdb.Exec, Match: tc.match, N: 1, Err: dup})
		db := faultdb.OpenDB(&sqlite.Driver{}, "file:"+escape(p)+"?_pragma=busy_timeout(300)&_pragma=journal_mode(WAL)&_txlock=immediate", fs)
		s, err := sqlstore.New(fctx, db, dialect)
		if fs.Fired(f) != 1 {
			t.Fatalf("%s: the fault never fired", tc.match)
		}
		if !tc.ok {
			if err == nil {
				s.Close()
				t.Errorf("%s conflicting: New succeeded, want the error", tc.match)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s conflicting: New = %v, want the migrations read again and applied", tc.match, err)
		}
		if n, err := s.Migrations(fctx); err != nil || n != len(dialect.Migrations) {
			t.Errorf("Migrations = %d, %v", n, err)
		}
		s.Close()
	}
}
