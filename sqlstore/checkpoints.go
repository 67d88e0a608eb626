package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/evidence"
)

// Checkpoints is the signed checkpoints of the decision log (package
// evidence) in the tables veto_checkpoints and veto_checkpoint_heads of
// the state's database, beside the store's own: every instance on one
// PostgreSQL database adds to the same chain of checkpoints. The tables
// are made at the first use in each database, as the token table is.
//
// veto_checkpoint_heads holds, for each run, the last event a checkpoint
// signed; it is kept in the transaction that adds the checkpoint, so that
// the next checkpoint names only the runs that moved since.
type Checkpoints struct {
	q      func(query string) string
	tables firstUse
}

var _ evidence.Table = (*Checkpoints)(nil)

// NewCheckpoints keeps checkpoints in the database db returns (nil while
// there is none: every use fails, veto.ErrStateUnavailable). dialect is
// "sqlite" or "postgres".
func NewCheckpoints(db func() *sql.DB, dialect string) *Checkpoints {
	c := &Checkpoints{q: Markers(dialect)}
	c.tables = firstUse{db: db, what: "the checkpoint tables", make: c.make}
	return c
}

func (c *Checkpoints) make(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS veto_checkpoints (
		n BIGINT PRIMARY KEY,
		at_ns BIGINT NOT NULL,
		hash TEXT NOT NULL,
		body TEXT NOT NULL,
		sig TEXT NOT NULL)`); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS veto_checkpoint_heads (
		run TEXT PRIMARY KEY,
		seq BIGINT NOT NULL,
		hash TEXT NOT NULL)`)
	return err
}

// Last returns the last checkpoint; N is 0 when there is none.
func (c *Checkpoints) Last(ctx context.Context) (evidence.Stored, error) {
	db, err := c.tables.use(ctx)
	if err != nil {
		return evidence.Stored{}, err
	}
	var cp evidence.Stored
	var n int64
	var body string
	err = db.QueryRowContext(ctx, `SELECT n, at_ns, hash, body, sig FROM veto_checkpoints ORDER BY n DESC LIMIT 1`).
		Scan(&n, &cp.At, &cp.Hash, &body, &cp.Sig)
	if errors.Is(err, sql.ErrNoRows) {
		return evidence.Stored{}, nil
	}
	if err != nil {
		return evidence.Stored{}, fmt.Errorf("sqlstore: the last checkpoint: %w", err)
	}
	cp.N, cp.Body = uint64(n), []byte(body)
	return cp, nil
}

// Moved returns the heads of the runs whose last event is not the one the
// checkpoints last signed, at most limit of them, ordered by run. The
// hash is computed here from the stored bytes, not taken from the run's
// row.
func (c *Checkpoints) Moved(ctx context.Context, limit int) ([]evidence.StoredHead, error) {
	db, err := c.tables.use(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, c.q(`SELECT r.run, e.seq, e.body, COALESCE(h.seq, 0)
		FROM veto_runs r
		JOIN veto_events e ON e.run = r.run AND e.seq = r.next - 1
		LEFT JOIN veto_checkpoint_heads h ON h.run = r.run
		WHERE h.run IS NULL OR h.seq <> e.seq
		ORDER BY r.run LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: the runs' heads: %w", err)
	}
	defer rows.Close()
	var out []evidence.StoredHead
	for rows.Next() {
		var h evidence.StoredHead
		var seq, signed int64
		var body []byte
		if err := rows.Scan(&h.Run, &seq, &body, &signed); err != nil {
			return nil, fmt.Errorf("sqlstore: the runs' heads: %w", err)
		}
		h.Seq, h.Signed, h.Hash = uint64(seq), uint64(signed), eventlog.ChainHash(body)
		out = append(out, h)
	}
	return out, rows.Err()
}

// Pending counts the events stored at or after atNs, up to limit.
func (c *Checkpoints) Pending(ctx context.Context, atNs int64, limit int) (int, error) {
	db, err := c.tables.use(ctx)
	if err != nil {
		return 0, err
	}
	var n int
	err = db.QueryRowContext(ctx, c.q(`SELECT COUNT(*) FROM (SELECT 1 FROM veto_events WHERE at_ns >= ? LIMIT ?) AS recent`), atNs, limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: count the recent events: %w", err)
	}
	return n, nil
}

// Add stores cp and moves the signed heads to heads, in one transaction.
// A number already taken is evidence.ErrTaken and stores nothing.
func (c *Checkpoints) Add(ctx context.Context, cp evidence.Stored, heads []evidence.StoredHead) error {
	db, err := c.tables.use(ctx)
	if err != nil {
		return err
	}
	err = c.add(ctx, db, cp, heads)
	if err == nil {
		return nil
	}
	var one int
	if db.QueryRowContext(ctx, c.q(`SELECT 1 FROM veto_checkpoints WHERE n = ?`), int64(cp.N)).Scan(&one) == nil {
		return evidence.ErrTaken
	}
	return err
}

func (c *Checkpoints) add(ctx context.Context, db *sql.DB, cp evidence.Stored, heads []evidence.StoredHead) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: add a checkpoint: %w", err)
	}
	defer tx.Rollback()
	// The checkpoint's row first: a signer that lost the race for its
	// number fails here, before it moves any head.
	if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO veto_checkpoints (n, at_ns, hash, body, sig) VALUES (?, ?, ?, ?, ?)`),
		int64(cp.N), cp.At, cp.Hash, string(cp.Body), cp.Sig); err != nil {
		return fmt.Errorf("sqlstore: add a checkpoint: %w", err)
	}
	// The heads in statements of up to 200 rows: one round trip each, and
	// a short hold of SQLite's write lock.
	for len(heads) > 0 {
		part := heads[:min(len(heads), 200)]
		heads = heads[len(part):]
		query := make([]byte, 0, 128+len(part)*12)
		query = append(query, `INSERT INTO veto_checkpoint_heads (run, seq, hash) VALUES `...)
		args := make([]any, 0, 3*len(part))
		for i, h := range part {
			if i > 0 {
				query = append(query, ", "...)
			}
			query = append(query, "(?, ?, ?)"...)
			args = append(args, h.Run, int64(h.Seq), h.Hash)
		}
		query = append(query, ` ON CONFLICT (run) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`...)
		if _, err := tx.ExecContext(ctx, c.q(string(query)), args...); err != nil {
			return fmt.Errorf("sqlstore: add a checkpoint's heads: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: add a checkpoint: %w", err)
	}
	return nil
}

// Scan calls fn with every checkpoint made at or after atNs, in order of
// their numbers. fn's error stops the scan.
func (c *Checkpoints) Scan(ctx context.Context, atNs int64, fn func(evidence.Stored) error) error {
	db, err := c.tables.use(ctx)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, c.q(`SELECT n, at_ns, hash, body, sig FROM veto_checkpoints WHERE at_ns >= ? ORDER BY n`), atNs)
	if err != nil {
		return fmt.Errorf("sqlstore: read the checkpoints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cp evidence.Stored
		var n int64
		var body string
		if err := rows.Scan(&n, &cp.At, &cp.Hash, &body, &cp.Sig); err != nil {
			return fmt.Errorf("sqlstore: read the checkpoints: %w", err)
		}
		cp.N, cp.Body = uint64(n), []byte(body)
		if err := fn(cp); err != nil {
			return err
		}
	}
	return rows.Err()
}
