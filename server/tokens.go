package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// A Token is one bearer token of the service, bound to the actor every
// call made with it acts as, and to a Role that says which endpoints it
// may use. Only a hash of its secret is stored.
type Token struct {
	ID      string     `json:"id"`
	Actor   veto.Actor `json:"actor"`
	Role    Role       `json:"role"`
	Created time.Time  `json:"created"`
	Revoked time.Time  `json:"revoked,omitzero"`
}

// Tokens keeps the service's tokens in a table of the state's database
// (veto_tokens), so that every instance on one PostgreSQL database knows
// the same tokens.
type Tokens struct {
	db      func() *sql.DB            // the database now (an SQLite state is reopened when it moves)
	q       func(query string) string // the dialect's markers
	dialect string

	// A token verified is taken without asking the database again for
	// cacheFor: a revocation reaches every instance within that time.
	mu    sync.Mutex
	cache map[string]cachedToken
	made  *sql.DB // the database the table is known to exist in
}

type cachedToken struct {
	tok   Token
	until time.Time
}

// cacheFor is how long a verified token is trusted without the database;
// cacheMax bounds how many are.
const (
	cacheFor = time.Second
	cacheMax = 4096
)

// tokenPrefix starts every secret, so that a leaked one is recognisable.
const tokenPrefix = "veto_"

// NewTokens keeps tokens in the database db returns (nil while there is
// none: every use fails); the table is made at the first use. dialect is
// "sqlite" or "postgres".
func NewTokens(db func() *sql.DB, dialect string) *Tokens {
	return &Tokens{db: db, q: sqlstore.Markers(dialect), dialect: dialect}
}

// OpenTokens is NewTokens with the table made now.
func OpenTokens(ctx context.Context, db func() *sql.DB, dialect string) (*Tokens, error) {
	t := NewTokens(db, dialect)
	if _, err := t.use(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// ErrNoDatabase is the error of a use while the state has no database.
var ErrNoDatabase = errors.New("server: the state's database cannot be reached")

// use returns the database, with the token table made in it.
func (t *Tokens) use(ctx context.Context) (*sql.DB, error) {
	db := t.db()
	if db == nil {
		return nil, ErrNoDatabase
	}
	t.mu.Lock()
	made := t.made == db
	t.mu.Unlock()
	if made {
		return db, nil
	}
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS veto_tokens (
		id TEXT PRIMARY KEY,
		hash TEXT NOT NULL UNIQUE,
		actor_kind TEXT NOT NULL,
		actor_id TEXT NOT NULL,
		created BIGINT NOT NULL,
		revoked BIGINT NOT NULL DEFAULT 0)`)
	if err != nil {
		return nil, fmt.Errorf("server: the token table: %w", err)
	}
	if err := t.addRole(ctx, db); err != nil {
		return nil, fmt.Errorf("server: the token table's role: %w", err)
	}
	t.mu.Lock()
	t.made = db
	t.mu.Unlock()
	return db, nil
}

// addRole migrates a table made before tokens had roles: the column role
// is added, and the rows it finds read ” (RoleLegacy). Two instances may
// migrate at once: PostgreSQL adds the column only if missing, and on
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

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// ParseActor reads KIND:ID, as `veto token create --actor` takes it.
func ParseActor(s string) (veto.Actor, error) {
	kind, id, ok := strings.Cut(s, ":")
	if !ok || kind == "" || id == "" {
		return veto.Actor{}, errors.New("an actor is KIND:ID, as user:alice or schedule:nightly")
	}
	switch kind {
	case "user", "schedule", "agent", "service":
	default:
		return veto.Actor{}, fmt.Errorf("actor kind %q is not one of user, schedule, agent, service", kind)
	}
	if len(id) > 256 {
		return veto.Actor{}, errors.New("the actor's id is longer than 256 bytes")
	}
	return veto.Actor{Kind: kind, ID: id}, nil
}

// Create makes a token of role for actor and returns it with its
// secret, which is shown once and never stored. A role the actor cannot
// hold (CheckRole) is refused.
func (t *Tokens) Create(ctx context.Context, actor veto.Actor, role Role, now time.Time) (Token, string, error) {
	if err := CheckRole(role, actor); err != nil {
		return Token{}, "", err
	}
	var raw [32]byte
	var id [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return Token{}, "", err
	}
	if _, err := rand.Read(id[:]); err != nil {
		return Token{}, "", err
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	tok := Token{ID: "tok_" + hex.EncodeToString(id[:]), Actor: actor, Role: role, Created: now.UTC().Truncate(time.Second)}
	db, err := t.use(ctx)
	if err != nil {
		return Token{}, "", err
	}
	_, err = db.ExecContext(ctx, t.q(`INSERT INTO veto_tokens (id, hash, actor_kind, actor_id, role, created) VALUES (?, ?, ?, ?, ?, ?)`),
		tok.ID, hashSecret(secret), actor.Kind, actor.ID, string(role), tok.Created.Unix())
	if err != nil {
		return Token{}, "", fmt.Errorf("server: store the token: %w", err)
	}
	return tok, secret, nil
}

// List returns every token, revoked ones included, oldest first.
func (t *Tokens) List(ctx context.Context) ([]Token, error) {
	db, err := t.use(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, actor_kind, actor_id, role, created, revoked FROM veto_tokens ORDER BY created, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var tok Token
		var created, revoked int64
		if err := rows.Scan(&tok.ID, &tok.Actor.Kind, &tok.Actor.ID, &tok.Role, &created, &revoked); err != nil {
			return nil, err
		}
		tok.Created = time.Unix(created, 0).UTC()
		if revoked != 0 {
			tok.Revoked = time.Unix(revoked, 0).UTC()
		}
		out = append(out, tok)
	}
	return out, rows.Err()
}

// ErrNoToken is Revoke's error for an id no token has.
var ErrNoToken = errors.New("no token has that id")

// Revoke ends a token: requests carrying it are refused from now on by
// this process, and within a second (cacheFor) by every instance.
func (t *Tokens) Revoke(ctx context.Context, id string, now time.Time) error {
	t.mu.Lock()
	clear(t.cache)
	t.mu.Unlock()
	db, err := t.use(ctx)
	if err != nil {
		return err
	}
	res, err := db.ExecContext(ctx, t.q(`UPDATE veto_tokens SET revoked = ? WHERE id = ? AND revoked = 0`), max(now.Unix(), 1), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNoToken
	}
	return nil
}

// Verify returns the live token whose secret this is; ok is false for an
// unknown or revoked one. err is a database failure.
func (t *Tokens) Verify(ctx context.Context, secret string) (tok Token, ok bool, err error) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) > 128 {
		return Token{}, false, nil
	}
	h := hashSecret(secret)
	now := time.Now()
	t.mu.Lock()
	c, hit := t.cache[h]
	t.mu.Unlock()
	if hit && now.Before(c.until) {
		return c.tok, true, nil
	}
	db, err := t.use(ctx)
	if err != nil {
		return Token{}, false, err
	}
	var created int64
	err = db.QueryRowContext(ctx, t.q(`SELECT id, actor_kind, actor_id, role, created FROM veto_tokens WHERE hash = ? AND revoked = 0`),
		h).Scan(&tok.ID, &tok.Actor.Kind, &tok.Actor.ID, &tok.Role, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, err
	}
	tok.Created = time.Unix(created, 0).UTC()
	t.mu.Lock()
	if t.cache == nil || len(t.cache) >= cacheMax {
		t.cache = map[string]cachedToken{}
	}
	t.cache[h] = cachedToken{tok: tok, until: now.Add(cacheFor)}
	t.mu.Unlock()
	return tok, true, nil
}
