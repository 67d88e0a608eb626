package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
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

// Tokens are the service's tokens: kept by a veto.TokenStore (the
// state's database, package sqlstore, opened through package state), so
// that every instance on one PostgreSQL database knows the same tokens,
// and verified here, with a cache in front of the store.
type Tokens struct {
	store veto.TokenStore

	// A token verified is taken without asking the store again for
	// cacheFor: a revocation reaches every instance within that time.
	mu    sync.Mutex
	cache map[string]cachedToken
}

type cachedToken struct {
	tok   Token
	until time.Time
}

// cacheFor is how long a verified token is trusted without the store;
// cacheMax bounds how many are.
const (
	cacheFor = time.Second
	cacheMax = 4096
)

// tokenPrefix starts every secret, so that a leaked one is recognisable.
const tokenPrefix = "veto_"

// NewTokens keeps tokens in store; a store's table may be made at its
// first use.
func NewTokens(store veto.TokenStore) *Tokens { return &Tokens{store: store} }

// OpenTokens is NewTokens with the store used now (its table made, a
// legacy one migrated): a store that cannot be used is an error at start.
func OpenTokens(ctx context.Context, store veto.TokenStore) (*Tokens, error) {
	if _, err := store.ListTokens(ctx); err != nil {
		return nil, fmt.Errorf("server: the tokens: %w", err)
	}
	return NewTokens(store), nil
}

// tokenOf is the token a store's record is.
func tokenOf(rec veto.TokenRecord) Token {
	return Token{ID: rec.ID, Actor: rec.Actor, Role: Role(rec.Role), Created: rec.Created, Revoked: rec.Revoked}
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
	rec := veto.TokenRecord{ID: tok.ID, Hash: hashSecret(secret), Actor: actor, Role: string(role), Created: tok.Created}
	if err := t.store.AddToken(ctx, rec); err != nil {
		return Token{}, "", fmt.Errorf("server: store the token: %w", err)
	}
	return tok, secret, nil
}

// List returns every token, revoked ones included, oldest first.
func (t *Tokens) List(ctx context.Context) ([]Token, error) {
	recs, err := t.store.ListTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("server: list the tokens: %w", err)
	}
	out := make([]Token, len(recs))
	for i, rec := range recs {
		out[i] = tokenOf(rec)
	}
	return out, nil
}

// ErrNoToken is Revoke's error for an id no token has.
var ErrNoToken = errors.New("no token has that id")

// Revoke ends a token: requests carrying it are refused from now on by
// this process, and within a second (cacheFor) by every instance.
func (t *Tokens) Revoke(ctx context.Context, id string, now time.Time) error {
	t.mu.Lock()
	clear(t.cache)
	t.mu.Unlock()
	ok, err := t.store.RevokeToken(ctx, id, now)
	if err != nil {
		return fmt.Errorf("server: revoke the token: %w", err)
	}
	if !ok {
		return ErrNoToken
	}
	return nil
}

// Verify returns the live token whose secret this is; ok is false for an
// unknown or revoked one. err is the store's failure.
func (t *Tokens) Verify(ctx context.Context, secret string) (tok Token, ok bool, err error) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) > 128 {
		return Token{}, false, nil
	}
	h := hashSecret(secret)
	now := time.Now()
	if tok, hit := t.cachedHash(h, now); hit {
		return tok, true, nil
	}
	rec, ok, err := t.store.LiveToken(ctx, h)
	if err != nil || !ok {
		return Token{}, false, err
	}
	tok = tokenOf(rec)
	t.mu.Lock()
	if t.cache == nil || len(t.cache) >= cacheMax {
		t.cache = map[string]cachedToken{}
	}
	t.cache[h] = cachedToken{tok: tok, until: now.Add(cacheFor)}
	t.mu.Unlock()
	return tok, true, nil
}

// Cached returns the token whose secret this is when it was verified
// within cacheFor: a request that carries it needs the store only for
// what it does, so the state is proved once for it, not once for the
// token and again for the call. ok false: Verify must ask the store.
func (t *Tokens) Cached(secret string) (tok Token, ok bool) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) > 128 {
		return Token{}, false
	}
	return t.cachedHash(hashSecret(secret), time.Now())
}

func (t *Tokens) cachedHash(h string, now time.Time) (Token, bool) {
	t.mu.Lock()
	c, hit := t.cache[h]
	t.mu.Unlock()
	if hit && now.Before(c.until) {
		return c.tok, true
	}
	return Token{}, false
}
