// Package sqlite is veto's embedded store: one SQLite file (by default
// $XDG_STATE_HOME/veto/veto.db), through the pure-Go modernc.org/sqlite
// driver so builds stay CGO_ENABLED=0. Writers from many processes take
// the database's write lock for one transaction each (BEGIN IMMEDIATE),
// wait for it up to the busy timeout, and fail closed past it.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/vetohq/veto/sqlstore"
)

// Options tune the store.
type Options struct {
	// BusyTimeout is how long a writer waits for another's lock before the
	// store reports itself unavailable; zero means 2 seconds.
	BusyTimeout time.Duration
}

var dialect = sqlstore.Dialect{
	Name:       "sqlite",
	Migrations: []string{sqlstore.Schema("BLOB", "INTEGER", "INTEGER"), sqlstore.EgressSchema("INTEGER"), sqlstore.TallySchema("INTEGER")},
	Conflict: func(err error) bool {
		// Another writer stored the key first: the events' primary key
		// (run, seq) or a unique column. Busy is not a conflict: past the
		// busy timeout the store is unavailable.
		var se *sqlite.Error
		if !errors.As(err, &se) {
			return false
		}
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return true
		}
		return false
	},
}

// DefaultPath is where the embedded store lives: $XDG_STATE_HOME/veto/veto.db,
// else ~/.local/state/veto/veto.db.
func DefaultPath() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "veto", "veto.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("sqlite: no home directory for the state: %w", err)
	}
	return filepath.Join(home, ".local", "state", "veto", "veto.db"), nil
}

// Open opens (creating when missing, with its schema) the store at path.
// The directory is created readable by its user only.
func Open(ctx context.Context, path string, o Options) (*sqlstore.Store, error) {
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 2 * time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", sqlstore.ErrUnavailable, err)
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate",
		path, o.BusyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", sqlstore.ErrUnavailable, err)
	}
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.Close()
		return nil, fmt.Errorf("%w: %w", sqlstore.ErrUnavailable, err)
	}
	return s, nil
}
