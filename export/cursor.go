package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/vetohq/veto"
)

// Cursors keeps the sinks' cursors in the table veto_export_cursors of
// the state's database, made at its first use (as veto_tokens is), so
// that they survive a restart and every instance on one PostgreSQL
// database reads the same ones.
type Cursors struct {
	db func() *sql.DB            // the database now (an SQLite state is reopened when it moves)
	q  func(query string) string // the dialect's ? markers (state.Markers)

	mu   sync.Mutex
	made *sql.DB
}

var _ CursorStore = (*Cursors)(nil)

// NewCursors keeps cursors in the database db returns (nil while there is
// none: every use fails); q writes a query's ? markers in its dialect.
func NewCursors(db func() *sql.DB, q func(query string) string) *Cursors {
	return &Cursors{db: db, q: q}
}

func (c *Cursors) use(ctx context.Context) (*sql.DB, error) {
	db := c.db()
	if db == nil {
		return nil, fmt.Errorf("%w: the state's database cannot be reached", veto.ErrStateUnavailable)
	}
	// Held while the table is made: two CREATE TABLE IF NOT EXISTS at
	// once collide in PostgreSQL's catalogue (another instance's is
	// retried, as every failed use is).
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.made == db {
		return db, nil
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS veto_export_cursors (
		sink TEXT PRIMARY KEY,
		at_ns BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("export: the cursor table: %w", err)
	}
	c.made = db
	return db, nil
}

// Load returns the sink's cursor, 0 for a sink with none: from the
// start of the log.
func (c *Cursors) Load(ctx context.Context, name string) (int64, error) {
	db, err := c.use(ctx)
	if err != nil {
		return 0, err
	}
	var at int64
	err = db.QueryRowContext(ctx, c.q(`SELECT at_ns FROM veto_export_cursors WHERE sink = ?`), name).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("export: read the cursor: %w", err)
	}
	return at, nil
}

// Save moves the sink's cursor to at, never back: two writers of one
// name keep the later.
func (c *Cursors) Save(ctx context.Context, name string, at int64) error {
	db, err := c.use(ctx)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, c.q(`INSERT INTO veto_export_cursors (sink, at_ns) VALUES (?, ?)
		ON CONFLICT (sink) DO UPDATE SET at_ns = excluded.at_ns WHERE veto_export_cursors.at_ns < excluded.at_ns`), name, at)
	if err != nil {
		return fmt.Errorf("export: store the cursor: %w", err)
	}
	return nil
}

// since is the condition on veto_events (sqlstore's table, read here
// on its index by time, veto_events_at) of the events of kinds at or
// after at.
func since(at int64, kinds []veto.EventKind) (string, []any) {
	cond, args := ` WHERE at_ns >= ?`, []any{at}
	if len(kinds) > 0 {
		marks := make([]string, len(kinds))
		for i, k := range kinds {
			marks[i] = "?"
			args = append(args, string(k))
		}
		cond += ` AND kind IN (` + strings.Join(marks, ", ") + `)`
	}
	return cond, args
}

// Count implements CursorStore.
func (c *Cursors) Count(ctx context.Context, at int64, kinds []veto.EventKind) (int, error) {
	db, err := c.use(ctx)
	if err != nil {
		return 0, err
	}
	cond, args := since(at, kinds)
	var n int
	if err := db.QueryRowContext(ctx, c.q(`SELECT COUNT(*) FROM veto_events`+cond), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("export: count the backlog: %w", err)
	}
	return n, nil
}

// Keys implements CursorStore.
func (c *Cursors) Keys(ctx context.Context, at int64, kinds []veto.EventKind, fn func(run string, seq uint64, at int64) error) error {
	db, err := c.use(ctx)
	if err != nil {
		return err
	}
	cond, args := since(at, kinds)
	rows, err := db.QueryContext(ctx, c.q(`SELECT run, seq, at_ns FROM veto_events`+cond+` ORDER BY at_ns, run, seq`), args...)
	if err != nil {
		return fmt.Errorf("export: read the log's index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var run string
		var seq, at int64
		if err := rows.Scan(&run, &seq, &at); err != nil {
			return fmt.Errorf("export: read the log's index: %w", err)
		}
		if err := fn(run, uint64(seq), at); err != nil {
			return err
		}
	}
	return rows.Err()
}
