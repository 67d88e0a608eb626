package cli_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// TestTokenRevokeFlagsAfterID: `veto token revoke ID --postgres DSN` (the
// order the help shows) revokes the token, on PostgreSQL and SQLite, and
// the service no longer takes it; the flags first work as well.
func TestTokenRevokeFlagsAfterID(t *testing.T) {
	stores := map[string]func(t *testing.T) (flag, where string, db func() *sql.DB, dialect string){
		"postgres": func(t *testing.T) (string, string, func() *sql.DB, string) {
			dsn := pgtest.Fresh(t)
			s, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return "--postgres", dsn, s.DB, "postgres"
		},
		"sqlite": func(t *testing.T) (string, string, func() *sql.DB, string) {
			path := filepath.Join(t.TempDir(), "veto.db")
			s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return "--state", path, s.DB, "sqlite"
		},
	}
	idOf := regexp.MustCompile(`token (tok_[0-9a-f]+) acts as`)
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			flag, where, db, dialect := open(t)
			toks := server.NewTokens(sqlstore.NewTokens(db, dialect))
			for _, order := range []string{"flags after the id", "flags first"} {
				code, out := veto(t, "", "token", "create", "--actor", "agent:claude-code", flag, where)
				m := idOf.FindStringSubmatch(out)
				if code != 0 || m == nil {
					t.Fatalf("create: exit %d: %s", code, out)
				}
				secret := strings.Fields(out)[0]
				if _, ok, err := toks.Verify(context.Background(), secret); !ok || err != nil {
					t.Fatalf("the new token is not live: %v", err)
				}
				args := []string{"token", "revoke", m[1], flag, where}
				if order == "flags first" {
					args = []string{"token", "revoke", flag, where, m[1]}
				}
				if code, out := veto(t, "", args...); code != 0 || !strings.Contains(out, "revoked "+m[1]) {
					t.Fatalf("%s: exit %d: %s", order, code, out)
				}
				if strings.Contains(out, where) && name == "postgres" {
					t.Fatal("revoke printed the DSN")
				}
				// Revoke empties this process's cache only: a new Tokens
				// asks the database, as another instance would.
				if _, ok, _ := server.NewTokens(sqlstore.NewTokens(db, dialect)).Verify(context.Background(), secret); ok {
					t.Fatalf("%s: the token is still live", order)
				}
			}
		})
	}
}
