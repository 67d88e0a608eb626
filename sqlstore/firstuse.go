package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/vetohq/veto"
)

// firstUse makes a store's tables at their first use in each database
// (the tokens', the revisions', the checkpoints'), beside the migrated
// schema: every instance on one PostgreSQL database finds them made by
// whichever came first. make must be idempotent.
type firstUse struct {
	db   func() *sql.DB // the database now (an SQLite state is reopened when it moves)
	what string         // the tables, for an error: "the token table"
	make func(ctx context.Context, db *sql.DB) error

	mu   sync.Mutex
	made *sql.DB // the database the tables are known to exist in
}

// errNoDatabase is a use while the state has no database.
var errNoDatabase = fmt.Errorf("%w: the state's database cannot be reached", veto.ErrStateUnavailable)

// use returns the database, with the tables made in it. Two instances may
// make them at once, and PostgreSQL's IF NOT EXISTS can still lose that
// race (a duplicate type): it is tried again.
func (f *firstUse) use(ctx context.Context) (*sql.DB, error) {
	db := f.db()
	if db == nil {
		return nil, errNoDatabase
	}
	f.mu.Lock()
	made := f.made == db
	f.mu.Unlock()
	if made {
		return db, nil
	}
	var err error
	for range 5 {
		if err = f.make(ctx, db); err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %s: %w", f.what, err)
	}
	f.mu.Lock()
	f.made = db
	f.mu.Unlock()
	return db, nil
}

// execAll runs each statement on db, in order.
func execAll(ctx context.Context, db *sql.DB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
