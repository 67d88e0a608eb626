package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/storetest"
)

var ctx = context.Background()

// testOptions wait long for the lock: the suite's writers contend hard,
// and under the race detector a commit takes many times longer.
var testOptions = sqlite.Options{BusyTimeout: 60 * time.Second}

func TestMain(m *testing.M) {
	storetest.ChildMain(func() (veto.Store, error) {
		return sqlite.Open(ctx, os.Getenv("VETO_STORETEST_PATH"), testOptions)
	})
	os.Exit(m.Run())
}

func open(t testing.TB, path string) *sqlstore.Store {
	t.Helper()
	s, err := sqlite.Open(ctx, path, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }

// TestConformanceOnOneConnection runs the conformance suite with stores
// that open one connection each: a path that held a connection while it
// waited for another (rows left open while it queries, a query outside
// its transaction) would wait forever here, where the store's bound
// (16) would only make it wait under load, and deadlock.
func TestConformanceOnOneConnection(t *testing.T) {
	defer sqlite.SetMaxConns(1)()
	h := harness()
	h.ChildEnv = nil // the processes' tests open stores in children, with the bound they have
	storetest.Run(t, h)
}

// harness is the conformance suite's view of this package's stores.
func harness() storetest.Harness {
	paths := map[storetest.Store]string{}
	return storetest.Harness{
		Open: func(t testing.TB) storetest.Store {
			p := filepath.Join(t.TempDir(), "state", "veto.db")
			s := open(t, p)
			paths[s] = p
			return s
		},
		Reopen: func(t testing.TB, s storetest.Store) storetest.Store {
			r := open(t, paths[s])
			paths[r] = paths[s]
			return r
		},
		Raw: func(t testing.TB, s storetest.Store, run string, seq uint64, b []byte) {
			if err := s.(*sqlstore.Store).InsertRaw(ctx, run, seq, b); err != nil {
				t.Fatal(err)
			}
		},
		Overwrite: func(t testing.TB, s storetest.Store, run string, seq uint64, b []byte) {
			db := s.(*sqlstore.Store).DB()
			var err error
			if b == nil {
				_, err = db.ExecContext(ctx, `DELETE FROM veto_events WHERE run = ? AND seq = ?`, run, int64(seq))
			} else {
				_, err = db.ExecContext(ctx, `UPDATE veto_events SET body = ? WHERE run = ? AND seq = ?`, b, run, int64(seq))
			}
			if err != nil {
				t.Fatal(err)
			}
		},
		ChildEnv: func(t testing.TB, s storetest.Store) []string {
			return []string{"VETO_STORETEST_PATH=" + paths[s]}
		},
	}
}

func TestFileIsPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", "veto.db")
	open(t, p)
	for path, want := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	// A state found readable by others is made private again when opened.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	open(t, p)
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a state found 0644 is %v after it was opened (%v), want 0600", fi.Mode().Perm(), err)
	}
}

// A corrupt database file denies every call: state_unavailable.
func TestCorruptFileDenies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(p, []byte(strings.Repeat("not a database ", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(ctx, p, sqlite.Options{})
	if err == nil {
		g, gerr := veto.NewGate(veto.Config{Store: s})
		if gerr != nil {
			t.Fatal(gerr)
		}
		v := g.Decide(ctx, &veto.Call{Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
		if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
			t.Fatalf("a corrupt store decided %+v", v)
		}
		return
	}
	if !strings.Contains(err.Error(), "state unavailable") {
		t.Fatalf("error %v", err)
	}
}

// A writer that waits for the lock past the busy timeout gets an error,
// and the gate denies: state_unavailable.
func TestLockedPastTimeoutDenies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	holder := open(t, p)
	tx, err := holder.DB().BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO veto_meta (key, value) VALUES ('held', '1')`); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(ctx, p, sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	v := g.Decide(ctx, &veto.Call{Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
	if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
		t.Fatalf("decided %+v while the store was locked", v)
	}
}

// The decision recorded for a call is found by its id.
func TestDecided(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "veto.db"))
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	c := veto.Call{ID: "c1", Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}}
	if v := g.Decide(ctx, &c); !v.Allowed {
		t.Fatalf("first: %+v", v)
	}
	e, ok, err := s.Decided(ctx, "r", "c1")
	if err != nil || !ok || e.Kind != veto.EventAllowed || e.CallID != "c1" || e.Tool != "Read" {
		t.Fatalf("Decided = %+v %v %v", e, ok, err)
	}
	if _, ok, _ := s.Decided(ctx, "r", "c2"); ok {
		t.Fatal("a decision for a call never decided")
	}
}
