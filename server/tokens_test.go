package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// fakeTokens is a veto.TokenStore in memory that counts its lookups and
// fails when told to.
type fakeTokens struct {
	mu      sync.Mutex
	recs    []veto.TokenRecord
	lookups int
	fail    error
}

var _ veto.TokenStore = (*fakeTokens)(nil)

func (f *fakeTokens) AddToken(_ context.Context, rec veto.TokenRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.recs = append(f.recs, rec)
	return nil
}

func (f *fakeTokens) LiveToken(_ context.Context, hash string) (veto.TokenRecord, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.fail != nil {
		return veto.TokenRecord{}, false, f.fail
	}
	for _, r := range f.recs {
		if r.Hash == hash && r.Revoked.IsZero() {
			return r, true, nil
		}
	}
	return veto.TokenRecord{}, false, nil
}

func (f *fakeTokens) ListTokens(context.Context) ([]veto.TokenRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]veto.TokenRecord(nil), f.recs...), f.fail
}

func (f *fakeTokens) RevokeToken(_ context.Context, id string, at time.Time) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.recs {
		if r.ID == id && r.Revoked.IsZero() {
			f.recs[i].Revoked = at
			return true, nil
		}
	}
	return false, f.fail
}

// TestTokensKeepOnlyAHashInTheStore: the service's tokens go through the
// store interface, which is given the secret's hash and never the secret;
// a verified token is cached (the store is not asked again within the
// second), a revocation through the same Tokens is in force at once, an
// unknown id is ErrNoToken, a malformed secret asks the store nothing,
// and a store's failure is an error, never a token.
func TestTokensKeepOnlyAHashInTheStore(t *testing.T) {
	ctx := context.Background()
	store := &fakeTokens{}
	toks := server.NewTokens(store)
	tok, secret, err := toks.Create(ctx, veto.Actor{Kind: "agent", ID: "ci"}, server.RoleAgent, time.Unix(1_800_000_000, 5e8))
	if err != nil {
		t.Fatal(err)
	}
	if len(store.recs) != 1 || store.recs[0].ID != tok.ID || store.recs[0].Role != "agent" || store.recs[0].Created.Nanosecond() != 0 {
		t.Fatalf("stored %+v for %+v", store.recs, tok)
	}
	if h := store.recs[0].Hash; h == secret || strings.Contains(h, strings.TrimPrefix(secret, "veto_")) || h != server.HashSecret(secret) {
		t.Fatalf("the store holds %q for the secret, want its hash alone", h)
	}
	for range 3 {
		got, ok, err := toks.Verify(ctx, secret)
		if err != nil || !ok || got.ID != tok.ID || got.Role != server.RoleAgent || got.Actor != tok.Actor {
			t.Fatalf("verify: %+v %v %v", got, ok, err)
		}
	}
	if store.lookups != 1 {
		t.Fatalf("%d store lookups for three verifications within the second, want 1", store.lookups)
	}
	if _, ok, _ := toks.Verify(ctx, "not-a-veto-token"); ok || store.lookups != 1 {
		t.Fatalf("a malformed secret: ok %v, %d lookups", ok, store.lookups)
	}
	if err := toks.Revoke(ctx, tok.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := toks.Verify(ctx, secret); ok {
		t.Fatal("a revoked token verified from the cache")
	}
	if err := toks.Revoke(ctx, tok.ID, time.Now()); !errors.Is(err, server.ErrNoToken) {
		t.Fatalf("revoke again: %v, want ErrNoToken", err)
	}
	list, err := toks.List(ctx)
	if err != nil || len(list) != 1 || list[0].Revoked.IsZero() {
		t.Fatalf("list: %+v %v", list, err)
	}

	store.fail = errors.New("the store is down")
	other, secret2, err := server.NewTokens(&fakeTokens{}).Create(ctx, veto.Actor{Kind: "user", ID: "ann"}, server.RolePerson, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := toks.Verify(ctx, secret2); ok || err == nil || got.ID != "" {
		t.Fatalf("verify on a failing store: %+v %v %v (for %s)", got, ok, err, other.ID)
	}
	if _, err := server.OpenTokens(ctx, store); err == nil {
		t.Fatal("OpenTokens took a store that fails")
	}
}
