package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vetohq/veto"
)

// Tokens is veto serve's tokens in the table veto_tokens of the state's
// database, beside the store's own tables: every instance on one
// PostgreSQL database knows the same tokens. The table is made at the
// first use in each database, and a table of a veto before roles gains
// the column then.
type Tokens struct {
	q       func(query string) string
	dialect string
	tables  firstUse
}

var _ veto.TokenStore = (*Tokens)(nil)

// NewTokens keeps tokens in the database db returns (nil while there is
// none: every use fails, veto.ErrStateUnavailable). dialect is "sqlite"
// or "postgres".
func NewTokens(db func() *sql.DB, dialect string) *Tokens {
	t := &Tokens{q: Markers(dialect), dialect: dialect}
	t.tables = firstUse{db: db, what: "the token table", make: t.make}
	return t
}

// make makes the token table, with the role column of a table made
// before roles.
func (t *Tokens) make(ctx context.Context, db *sql.DB) error {
	if err := execAll(ctx, db, `CREATE TABLE IF NOT EXISTS veto_tokens (
		id TEXT PRIMARY KEY,
		hash TEXT NOT NULL UNIQUE,
		actor_kind TEXT NOT NULL,
		actor_id TEXT NOT NULL,
		created BIGINT NOT NULL,
		revoked BIGINT NOT NULL DEFAULT 0)`); err != nil {
		return err
	}
	if err := t.addRole(ctx, db); err != nil {
		return fmt.Errorf("its role: %w", err)
	}
	return nil
}

// addRole migrates a table made before tokens had roles: the column role
// is added, and the rows it finds read "" (a legacy token). Two instances
// may migrate at once: PostgreSQL adds the column only if missing, and on
// SQLite a "duplicate column" from the other writer is checked again.
func (t *Tokens) addRole(ctx context.Context, db *sql.DB) error {
	if t.dialect == "postgres" {
		_, err := db.ExecContext(ctx, `ALTER TABLE veto_tokens ADD COLUMN IF NOT EXISTS role TEXT NOT NULL DEFAULT ''`)
		return err
	}
	has := func() bool {
		_, err := db.ExecContext(ctx, `SELECT role FROM veto_tokens LIMIT 0`)
		return err == nil
	}
	if has() {
		return nil
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE veto_tokens ADD COLUMN role TEXT NOT NULL DEFAULT ''`); err != nil && !has() {
		return err
	}
	return nil
}

// AddToken stores a new token, its times in whole seconds.
func (t *Tokens) AddToken(ctx context.Context, rec veto.TokenRecord) error {
	db, err := t.tables.use(ctx)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, t.q(`INSERT INTO veto_tokens (id, hash, actor_kind, actor_id, role, created) VALUES (?, ?, ?, ?, ?, ?)`),
		rec.ID, rec.Hash, rec.Actor.Kind, rec.Actor.ID, rec.Role, rec.Created.Unix())
	if err != nil {
		return fmt.Errorf("sqlstore: store the token: %w", err)
	}
	return nil
}

// LiveToken returns the unrevoked token of hash.
func (t *Tokens) LiveToken(ctx context.Context, hash string) (veto.TokenRecord, bool, error) {
	db, err := t.tables.use(ctx)
	if err != nil {
		return veto.TokenRecord{}, false, err
	}
	rec := veto.TokenRecord{Hash: hash}
	var created int64
	err = db.QueryRowContext(ctx, t.q(`SELECT id, actor_kind, actor_id, role, created FROM veto_tokens WHERE hash = ? AND revoked = 0`),
		hash).Scan(&rec.ID, &rec.Actor.Kind, &rec.Actor.ID, &rec.Role, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return veto.TokenRecord{}, false, nil
	}
	if err != nil {
		return veto.TokenRecord{}, false, fmt.Errorf("sqlstore: read a token: %w", err)
	}
	rec.Created = time.Unix(created, 0).UTC()
	return rec, true, nil
}

// ListTokens returns every token, oldest first; their hashes are left
// out, since no caller needs them.
func (t *Tokens) ListTokens(ctx context.Context) ([]veto.TokenRecord, error) {
	db, err := t.tables.use(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, actor_kind, actor_id, role, created, revoked FROM veto_tokens ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list the tokens: %w", err)
	}
	defer rows.Close()
	var out []veto.TokenRecord
	for rows.Next() {
		var rec veto.TokenRecord
		var created, revoked int64
		if err := rows.Scan(&rec.ID, &rec.Actor.Kind, &rec.Actor.ID, &rec.Role, &created, &revoked); err != nil {
			return nil, fmt.Errorf("sqlstore: list the tokens: %w", err)
		}
		rec.Created = time.Unix(created, 0).UTC()
		if revoked != 0 {
			rec.Revoked = time.Unix(revoked, 0).UTC()
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// RevokeToken marks the live token id revoked at at (a time before 1970
// is stored as its first second: 0 means live).
func (t *Tokens) RevokeToken(ctx context.Context, id string, at time.Time) (bool, error) {
	db, err := t.tables.use(ctx)
	if err != nil {
		return false, err
	}
	res, err := db.ExecContext(ctx, t.q(`UPDATE veto_tokens SET revoked = ? WHERE id = ? AND revoked = 0`), max(at.Unix(), 1), id)
	if err != nil {
		return false, fmt.Errorf("sqlstore: revoke the token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: revoke the token: %w", err)
	}
	return n > 0, nil
}
