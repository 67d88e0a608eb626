package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/storetest"
)

// TestGroupCommit: a batch whose commit SQLite refuses (a deferred
// foreign key, checked at COMMIT) refuses every decision in it and
// records none; an append refused at its statement (a trigger's RAISE)
// or on a moved run fails alone.
func TestGroupCommit(t *testing.T) {
	paths := map[*sqlstore.Store]string{}
	storetest.RunGroup(t, storetest.GroupHarness{
		Open: func(t testing.TB) *sqlstore.Store {
			p := filepath.Join(t.TempDir(), "veto.db")
			// The blocked batch waits for the lock past the default timeout.
			s, err := sqlite.Open(ctx, p, sqlite.Options{BusyTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			paths[s] = p
			return s
		},
		Doom: func(t testing.TB, s *sqlstore.Store, run string) {
			mustExec(t, s.DB(), `CREATE TABLE doom_parent (id INTEGER PRIMARY KEY)`,
				`CREATE TABLE doom_child (parent INTEGER REFERENCES doom_parent (id) DEFERRABLE INITIALLY DEFERRED)`,
				`CREATE TRIGGER doom AFTER INSERT ON veto_events WHEN NEW.run = '`+run+`' BEGIN INSERT INTO doom_child (parent) VALUES (1); END`)
		},
		Refuse: func(t testing.TB, s *sqlstore.Store, run string) {
			mustExec(t, s.DB(), `CREATE TRIGGER refuse BEFORE INSERT ON veto_events WHEN NEW.run = '`+run+`' AND NEW.seq > 1 BEGIN SELECT RAISE(ABORT, 'refused'); END`)
		},
		Block: func(t testing.TB, s *sqlstore.Store) func() {
			// Another process's writer: a connection of its own holding the
			// database's write lock.
			db, err := sql.Open("sqlite", "file:"+paths[s]+"?mode=rw")
			if err != nil {
				t.Fatal(err)
			}
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
				t.Fatal(err)
			}
			return func() {
				c.ExecContext(ctx, `ROLLBACK`)
				c.Close()
				db.Close()
			}
		},
	})
}

func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
