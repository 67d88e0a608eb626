package postgres_test

import (
	"database/sql"
	"testing"

	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/storetest"
)

// TestGroupCommit: a batch whose commit PostgreSQL refuses (a deferred
// constraint trigger that raises at COMMIT) refuses every decision in it
// and records none; an append refused at its statement (a trigger that
// raises) or on a moved run fails alone.
func TestGroupCommit(t *testing.T) {
	storetest.RunGroup(t, storetest.GroupHarness{
		Open: func(t testing.TB) *sqlstore.Store { return open(t, fresh(t)) },
		Doom: func(t testing.TB, s *sqlstore.Store, run string) {
			mustExec(t, s.DB(), `CREATE FUNCTION doom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'doomed at commit'; END $$`,
				`CREATE CONSTRAINT TRIGGER doom AFTER INSERT ON veto_events DEFERRABLE INITIALLY DEFERRED
					FOR EACH ROW WHEN (NEW.run = '`+run+`') EXECUTE FUNCTION doom()`)
		},
		Refuse: func(t testing.TB, s *sqlstore.Store, run string) {
			mustExec(t, s.DB(), `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
				`CREATE TRIGGER refuse BEFORE INSERT ON veto_events FOR EACH ROW WHEN (NEW.run = '`+run+`' AND NEW.seq > 1) EXECUTE FUNCTION refuse()`)
		},
		Block: func(t testing.TB, s *sqlstore.Store) func() {
			// Another instance's writer: a transaction that keeps every
			// run's row from being written, not from being read.
			c, err := s.DB().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, `BEGIN; LOCK TABLE veto_runs IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			return func() {
				c.ExecContext(ctx, `ROLLBACK`)
				c.Close()
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
