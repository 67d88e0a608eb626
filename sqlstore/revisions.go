package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Revisions is the policy revisions pushed to the state's database (veto
// policy push): every instance on one PostgreSQL database decides with
// the one marked active, and beside it with the one marked shadow, whose
// differences it records. A revision is content-addressed: its id is the
// policy's revision hash, so pushing the same files twice stores one.
// The tables are made at the first use in each database.
type Revisions struct {
	q      func(query string) string
	tables firstUse
}

// Revision is one pushed policy: its files, in the order they apply, and
// who pushed it when.
type Revision struct {
	ID    string
	Files []RevisionFile
	By    string
	At    time.Time
}

// RevisionFile is one file of a revision: the name it was pushed under
// (its base name) and its bytes.
type RevisionFile struct {
	Name string `json:"name"`
	Body []byte `json:"body"`
}

// The heads a revision may be marked as.
const (
	HeadActive = "active"
	HeadShadow = "shadow"
)

// Heads are the revisions marked active and shadow ("" none), and when
// each was last set.
type Heads struct {
	Active, Shadow     string
	ActiveAt, ShadowAt time.Time
	ActiveBy, ShadowBy string
}

// ErrNoRevision is a revision id the database does not hold.
var ErrNoRevision = errors.New("no such policy revision")

// NewRevisions keeps revisions in the database db returns. dialect is
// "sqlite" or "postgres".
func NewRevisions(db func() *sql.DB, dialect string) *Revisions {
	r := &Revisions{q: Markers(dialect)}
	r.tables = firstUse{db: db, what: "the policy revision tables", make: r.make}
	return r
}

func (r *Revisions) make(ctx context.Context, db *sql.DB) error {
	return execAll(ctx, db,
		`CREATE TABLE IF NOT EXISTS veto_policy_revisions (
			id TEXT PRIMARY KEY,
			files TEXT NOT NULL,
			pushed_by TEXT NOT NULL,
			pushed_at BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS veto_policy_heads (
			head TEXT PRIMARY KEY,
			id TEXT NOT NULL,
			set_by TEXT NOT NULL,
			set_at BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS veto_shadow_diffs (
			shadow_rev TEXT NOT NULL,
			active_rev TEXT NOT NULL,
			run TEXT NOT NULL,
			call_id TEXT NOT NULL,
			tool TEXT NOT NULL,
			at BIGINT NOT NULL,
			active TEXT NOT NULL,
			active_rule TEXT NOT NULL,
			active_reason TEXT NOT NULL,
			shadow TEXT NOT NULL,
			shadow_rule TEXT NOT NULL,
			shadow_reason TEXT NOT NULL,
			PRIMARY KEY (shadow_rev, run, call_id))`)
}

// Push stores rev (unless a revision of its id is stored already) and
// marks it as head, in one transaction.
func (r *Revisions) Push(ctx context.Context, rev Revision, head string) error {
	if head != HeadActive && head != HeadShadow {
		return fmt.Errorf("sqlstore: no head %q", head)
	}
	db, err := r.tables.use(ctx)
	if err != nil {
		return err
	}
	files, err := json.Marshal(rev.Files)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, r.q(`INSERT INTO veto_policy_revisions (id, files, pushed_by, pushed_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`), rev.ID, string(files), rev.By, rev.At.UnixNano()); err != nil {
		return err
	}
	if err := r.setHead(ctx, tx, head, rev.ID, rev.By, rev.At); err != nil {
		return err
	}
	return tx.Commit()
}

func (r *Revisions) setHead(ctx context.Context, tx *sql.Tx, head, id, by string, at time.Time) error {
	if id == "" {
		_, err := tx.ExecContext(ctx, r.q(`DELETE FROM veto_policy_heads WHERE head = ?`), head)
		return err
	}
	_, err := tx.ExecContext(ctx, r.q(`INSERT INTO veto_policy_heads (head, id, set_by, set_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (head) DO UPDATE SET id = excluded.id, set_by = excluded.set_by, set_at = excluded.set_at`), head, id, by, at.UnixNano())
	return err
}

// Mark marks the stored revision id as head (activate, a rollback is
// activating an older one); an empty id unmarks the head (the shadow
// ends). An id not stored is ErrNoRevision.
func (r *Revisions) Mark(ctx context.Context, head, id, by string, at time.Time) error {
	if head != HeadActive && head != HeadShadow {
		return fmt.Errorf("sqlstore: no head %q", head)
	}
	db, err := r.tables.use(ctx)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if id != "" {
		var n int
		if err := tx.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM veto_policy_revisions WHERE id = ?`), id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return ErrNoRevision
		}
	}
	if err := r.setHead(ctx, tx, head, id, by, at); err != nil {
		return err
	}
	return tx.Commit()
}

// Heads returns the revisions marked active and shadow: one small query,
// which every instance asks each second.
func (r *Revisions) Heads(ctx context.Context) (Heads, error) {
	var h Heads
	db := r.tables.db()
	if db == nil {
		return h, errNoDatabase
	}
	// Asked by every hook call on a shared database: the table is made
	// only when the query finds none.
	rows, err := db.QueryContext(ctx, `SELECT head, id, set_by, set_at FROM veto_policy_heads`)
	if err != nil {
		if db, err = r.tables.use(ctx); err != nil {
			return h, err
		}
		if rows, err = db.QueryContext(ctx, `SELECT head, id, set_by, set_at FROM veto_policy_heads`); err != nil {
			return h, err
		}
	}
	defer rows.Close()
	for rows.Next() {
		var head, id, by string
		var at int64
		if err := rows.Scan(&head, &id, &by, &at); err != nil {
			return h, err
		}
		switch head {
		case HeadActive:
			h.Active, h.ActiveBy, h.ActiveAt = id, by, time.Unix(0, at).UTC()
		case HeadShadow:
			h.Shadow, h.ShadowBy, h.ShadowAt = id, by, time.Unix(0, at).UTC()
		}
	}
	return h, rows.Err()
}

// Get returns the stored revision id, files and all; ErrNoRevision when
// there is none.
func (r *Revisions) Get(ctx context.Context, id string) (Revision, error) {
	rev := Revision{ID: id}
	db, err := r.tables.use(ctx)
	if err != nil {
		return rev, err
	}
	var files string
	var at int64
	err = db.QueryRowContext(ctx, r.q(`SELECT files, pushed_by, pushed_at FROM veto_policy_revisions WHERE id = ?`), id).Scan(&files, &rev.By, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return rev, ErrNoRevision
	}
	if err != nil {
		return rev, err
	}
	rev.At = time.Unix(0, at).UTC()
	if err := json.Unmarshal([]byte(files), &rev.Files); err != nil {
		return rev, fmt.Errorf("sqlstore: revision %s is damaged: %w", id, err)
	}
	return rev, nil
}

// List returns every stored revision, newest first, without its files.
func (r *Revisions) List(ctx context.Context) ([]Revision, error) {
	db, err := r.tables.use(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, pushed_by, pushed_at FROM veto_policy_revisions ORDER BY pushed_at DESC, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Revision
	for rows.Next() {
		var rev Revision
		var at int64
		if err := rows.Scan(&rev.ID, &rev.By, &at); err != nil {
			return nil, err
		}
		rev.At = time.Unix(0, at).UTC()
		out = append(out, rev)
	}
	return out, rows.Err()
}

// ShadowDiff is one call the shadow revision decided otherwise than the
// active one: identifiers and codes, never arguments.
type ShadowDiff struct {
	ShadowRev, ActiveRev string
	Run, CallID, Tool    string
	At                   time.Time
	// Active and Shadow are each revision's verdict: allow, deny or ask,
	// with the rule and reason of a refusal.
	Active, ActiveRule, ActiveReason string
	Shadow, ShadowRule, ShadowReason string
}

// RecordDiff stores one difference; the same call recorded again (a
// retried decision) is stored once.
func (r *Revisions) RecordDiff(ctx context.Context, d ShadowDiff) error {
	db, err := r.tables.use(ctx)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, r.q(`INSERT INTO veto_shadow_diffs (shadow_rev, active_rev, run, call_id, tool, at,
		active, active_rule, active_reason, shadow, shadow_rule, shadow_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (shadow_rev, run, call_id) DO NOTHING`), d.ShadowRev, d.ActiveRev, d.Run, d.CallID, d.Tool, d.At.UnixNano(),
		d.Active, d.ActiveRule, d.ActiveReason, d.Shadow, d.ShadowRule, d.ShadowReason)
	return err
}

// DiffGroup is the differences of one kind: the same tool, the same
// verdict, rule and reason from each revision, how many calls and when the
// last was.
type DiffGroup struct {
	ShadowDiff
	Calls int
}

// Diffs returns the differences recorded for the shadow revision id,
// grouped by what each revision did, most calls first.
func (r *Revisions) Diffs(ctx context.Context, id string) ([]DiffGroup, error) {
	db, err := r.tables.use(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, r.q(`SELECT active_rev, tool, active, active_rule, active_reason, shadow, shadow_rule, shadow_reason,
		COUNT(*), MAX(at) FROM veto_shadow_diffs WHERE shadow_rev = ?
		GROUP BY active_rev, tool, active, active_rule, active_reason, shadow, shadow_rule, shadow_reason
		ORDER BY COUNT(*) DESC, shadow_rule, active_rule, tool`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DiffGroup
	for rows.Next() {
		g := DiffGroup{ShadowDiff: ShadowDiff{ShadowRev: id}}
		var at int64
		if err := rows.Scan(&g.ActiveRev, &g.Tool, &g.Active, &g.ActiveRule, &g.ActiveReason, &g.Shadow, &g.ShadowRule, &g.ShadowReason,
			&g.Calls, &at); err != nil {
			return nil, err
		}
		g.At = time.Unix(0, at).UTC()
		out = append(out, g)
	}
	return out, rows.Err()
}
