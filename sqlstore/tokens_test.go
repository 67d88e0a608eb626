package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// tokenDBs are the databases a token store runs on: a fresh SQLite file
// and a fresh PostgreSQL schema, each with its dialect.
func tokenDBs(t *testing.T) map[string]func(t *testing.T) (func() *sql.DB, string) {
	return map[string]func(t *testing.T) (func() *sql.DB, string){
		"sqlite": func(t *testing.T) (func() *sql.DB, string) {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.DB, "sqlite"
		},
		"postgres": func(t *testing.T) (func() *sql.DB, string) {
			s, err := postgres.Open(context.Background(), pgtest.Fresh(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.DB, "postgres"
		},
	}
}

// TestTokenStoreKeepsTokens: the token store the service reads, on both
// databases: a token added is live by its hash (and by no other), listed
// oldest first, refused a second time; a revocation is seen by another
// instance on the same database, is not undone by revoking again, and
// leaves the token listed with its time; a state with no database is
// veto.ErrStateUnavailable.
func TestTokenStoreKeepsTokens(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	for name, open := range tokenDBs(t) {
		t.Run(name, func(t *testing.T) {
			db, dialect := open(t)
			a, b := sqlstore.NewTokens(db, dialect), sqlstore.NewTokens(db, dialect) // two instances
			ann := veto.TokenRecord{ID: "tok_ann", Hash: "h-ann", Actor: veto.Actor{Kind: "user", ID: "ann"}, Role: "person", Created: t0.Add(time.Second)}
			ci := veto.TokenRecord{ID: "tok_ci", Hash: "h-ci", Actor: veto.Actor{Kind: "agent", ID: "ci"}, Role: "agent", Created: t0}
			for _, rec := range []veto.TokenRecord{ann, ci} {
				if err := a.AddToken(ctx, rec); err != nil {
					t.Fatalf("add %s: %v", rec.ID, err)
				}
			}
			if err := b.AddToken(ctx, veto.TokenRecord{ID: "tok_other", Hash: "h-ann", Actor: ann.Actor, Created: t0}); err == nil {
				t.Fatal("a second token with the same hash was stored")
			}
			if err := b.AddToken(ctx, veto.TokenRecord{ID: "tok_ann", Hash: "h-new", Actor: ann.Actor, Created: t0}); err == nil {
				t.Fatal("a second token with the same id was stored")
			}
			got, ok, err := b.LiveToken(ctx, "h-ann")
			if err != nil || !ok || got != ann {
				t.Fatalf("live h-ann: %+v %v %v, want %+v", got, ok, err, ann)
			}
			if _, ok, err := b.LiveToken(ctx, "tok_ann"); ok || err != nil {
				t.Fatalf("a token is live by its id: %v %v", ok, err)
			}
			if ok, err := b.RevokeToken(ctx, "tok_ann", t0.Add(time.Hour)); !ok || err != nil {
				t.Fatalf("revoke: %v %v", ok, err)
			}
			if _, ok, err := a.LiveToken(ctx, "h-ann"); ok || err != nil {
				t.Fatalf("the other instance still sees the revoked token live: %v %v", ok, err)
			}
			for _, id := range []string{"tok_ann", "tok_none"} {
				if ok, err := a.RevokeToken(ctx, id, t0.Add(2*time.Hour)); ok || err != nil {
					t.Fatalf("revoke %s again: %v %v", id, ok, err)
				}
			}
			list, err := a.ListTokens(ctx)
			if err != nil || len(list) != 2 {
				t.Fatalf("list: %+v %v", list, err)
			}
			ci.Hash, ann.Hash = "", "" // the listing carries no hash
			ann.Revoked = t0.Add(time.Hour)
			if list[0] != ci || list[1] != ann {
				t.Fatalf("list: %+v, want %+v then %+v", list, ci, ann)
			}
		})
	}
	none := sqlstore.NewTokens(func() *sql.DB { return nil }, "sqlite")
	if _, _, err := none.LiveToken(ctx, "h"); !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("no database: %v, want ErrStateUnavailable", err)
	}
	if err := none.AddToken(ctx, veto.TokenRecord{ID: "x"}); !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("no database: %v, want ErrStateUnavailable", err)
	}
}
