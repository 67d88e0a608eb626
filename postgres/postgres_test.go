package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/storetest"
)

var ctx = context.Background()

func base() string { return pgtest.Base() }

func TestMain(m *testing.M) {
	storetest.ChildMain(func() (veto.Store, error) { return postgres.Open(ctx, os.Getenv("VETO_STORETEST_DSN")) })
	os.Exit(m.Run())
}

func fresh(t testing.TB) string { return pgtest.Fresh(t) }

func open(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, harness()) }

// TestConformanceOnOneConnection runs the conformance suite with stores
// that open one connection each: a path that held a connection while it
// waited for another would wait forever here, where the store's bound
// (8) would only make it deadlock under load.
func TestConformanceOnOneConnection(t *testing.T) {
	defer postgres.SetMaxConns(1)()
	h := harness()
	h.ChildEnv = nil // the processes' tests open stores in children, with the bound they have
	storetest.Run(t, h)
}

// harness is the conformance suite's view of this package's stores.
func harness() storetest.Harness {
	dsns := map[storetest.Store]string{}
	return storetest.Harness{
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
		Overwrite: func(t testing.TB, s storetest.Store, run string, seq uint64, b []byte) {
			db := s.(*sqlstore.Store).DB()
			var err error
			if b == nil {
				_, err = db.ExecContext(ctx, `DELETE FROM veto_events WHERE run = $1 AND seq = $2`, run, int64(seq))
			} else {
				_, err = db.ExecContext(ctx, `UPDATE veto_events SET body = $1 WHERE run = $2 AND seq = $3`, b, run, int64(seq))
			}
			if err != nil {
				t.Fatal(err)
			}
		},
		ChildEnv: func(t testing.TB, s storetest.Store) []string {
			return []string{"VETO_STORETEST_DSN=" + dsns[s]}
		},
	}
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
