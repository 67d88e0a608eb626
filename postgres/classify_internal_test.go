package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres/pgtest"
)

// Classify names a cause by the error's SQLSTATE: a statement timeout and
// a lock timeout raised by the server itself are locked; the codes a test
// cannot make the shared server raise (a full disk, a shutdown, a broken
// connection) are given as the driver reports them.
func TestClassifyBySQLSTATE(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", pgtest.Fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE l (k INT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	raised := map[string]error{}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, raised["statement timeout"] = c.ExecContext(ctx, `SET statement_timeout = 50; SELECT pg_sleep(2)`)
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, `LOCK TABLE l IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	waiter, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Rollback()
	if _, err := waiter.ExecContext(ctx, `SET LOCAL lock_timeout = 50`); err != nil {
		t.Fatal(err)
	}
	_, raised["lock timeout"] = waiter.ExecContext(ctx, `SELECT * FROM l`)
	for name, want := range map[string]string{"statement timeout": "57014", "lock timeout": "55P03"} {
		var pe *pgconn.PgError
		if !errors.As(raised[name], &pe) || pe.Code != want {
			t.Fatalf("%s: %v, want SQLSTATE %s", name, raised[name], want)
		}
	}
	for _, tc := range []struct {
		name   string
		err    error
		cause  veto.Cause
		detail string
	}{
		{"statement timeout", raised["statement timeout"], veto.CauseLocked, ""},
		{"lock timeout", raised["lock timeout"], veto.CauseLocked, ""},
		{"disk full", &pgconn.PgError{Code: "53100"}, veto.CauseFull, ""},
		{"out of memory", &pgconn.PgError{Code: "53200"}, veto.CauseUnreachable, ""},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, veto.CauseUnreachable, "the server is shutting down or starting"},
		{"starting", &pgconn.PgError{Code: "57P03"}, veto.CauseUnreachable, "the server is shutting down or starting"},
		{"connection failure", &pgconn.PgError{Code: "08006"}, veto.CauseUnreachable, "the connection failed"},
		{"wrapped", errors.Join(errors.New("append"), &pgconn.PgError{Code: "53100"}), veto.CauseFull, ""},
		{"not the server's", errors.New("dial tcp: connection refused"), veto.CauseUnreachable, ""},
	} {
		if c, d := Classify(tc.err); c != tc.cause || d != tc.detail {
			t.Errorf("%s: Classify = %q %q, want %q %q", tc.name, c, d, tc.cause, tc.detail)
		}
	}
}

// Open's refusals name the state as "in PostgreSQL", never the DSN (which
// may hold a password): a DSN that does not parse and a server that is
// not there.
func TestOpenRefusalNamesNoDSN(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://veto:SECRET@127.0.0.1:notaport/test",
		"postgres://veto:SECRET@127.0.0.1:1/test?sslmode=disable&connect_timeout=1",
	} {
		s, err := Open(ctx, dsn)
		if err == nil {
			s.Close()
			t.Fatalf("%s opened", dsn)
		}
		var se *veto.StateError
		if !errors.As(err, &se) || se.Path != Name || se.Cause != veto.CauseUnreachable ||
			!errors.Is(err, veto.ErrStateUnavailable) {
			t.Fatalf("%s: %v, want unreachable %s", dsn, err, Name)
		}
		if r := se.Reason(); r != "veto's state in PostgreSQL cannot be reached" || strings.Contains(r, "SECRET") {
			t.Fatalf("%s: reason %q", dsn, r)
		}
	}
}

// A store holds at most 8 connections to the server, however many
// requests wait on it.
func TestOpenBoundsTheConnections(t *testing.T) {
	s, err := Open(context.Background(), pgtest.Fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := s.DB().Stats().MaxOpenConnections; n != 8 {
		t.Fatalf("at most %d connections, want 8", n)
	}
}
