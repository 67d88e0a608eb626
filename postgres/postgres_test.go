package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/storetest"
)

var ctx = context.Background()

// base is the server the tests use: $VETO_TEST_POSTGRES, or the local one.
func base() string {
	if d := os.Getenv("VETO_TEST_POSTGRES"); d != "" {
		return d
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

func TestMain(m *testing.M) {
	storetest.ChildMain(func() (veto.Store, error) { return postgres.Open(ctx, os.Getenv("VETO_STORETEST_DSN")) })
	os.Exit(m.Run())
}

// fresh returns the DSN of a new, empty schema, dropped after the test;
// it skips the test, saying how to run it, when no server answers.
func fresh(t testing.TB) string {
	t.Helper()
	db, err := sql.Open("pgx", base())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := db.PingContext(c); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL at %s: %v", base(), err)
		}
		t.Skipf("no PostgreSQL at %s (%v): start it with pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start, or set VETO_TEST_POSTGRES", base(), err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "veto_test_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d, err := sql.Open("pgx", base())
		if err == nil {
			d.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
			d.Close()
		}
	})
	return base() + "&search_path=" + schema
}

func open(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dsns := map[storetest.Store]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t testing.TB) storetest.Store {
			d := fresh(t)
			s := open(t, d)
			dsns[s] = d
			return s
		},
		Reopen: func(t testing.TB, s storetest.Store) storetest.Store {
			r := open(t, dsns[s])
			dsns[r] = dsns[s]
			return r
		},
		Raw: func(t testing.TB, s storetest.Store, run string, seq uint64, b []byte) {
			if err := s.(*sqlstore.Store).InsertRaw(ctx, run, seq, b); err != nil {
				t.Fatal(err)
			}
		},
		ChildEnv: func(t testing.TB, s storetest.Store) []string {
			return []string{"VETO_STORETEST_DSN=" + dsns[s]}
		},
	})
}

// An unreachable server denies every call: state_unavailable.
func TestUnreachableServerDenies(t *testing.T) {
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := postgres.Open(c, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1")
	if err == nil {
		t.Fatal("opened a server that is not there")
	}
	// A store that was reachable and went away: the gate refuses.
	d := fresh(t)
	s := open(t, d)
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	v := g.Decide(ctx, &veto.Call{Tool: "Read", Run: veto.Run{Ref: "r", Fresh: true}})
	if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
		t.Fatalf("decided %+v without a store", v)
	}
}
