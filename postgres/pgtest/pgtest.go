// Package pgtest gives tests a PostgreSQL schema of their own on the
// server the tests use, dropped after the test.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver
)

// Base is the server the tests use: $VETO_TEST_POSTGRES, or the local one.
func Base() string {
	if d := os.Getenv("VETO_TEST_POSTGRES"); d != "" {
		return d
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// Fresh returns the DSN of a new, empty schema, dropped after the test.
// When no server answers it skips the test, saying how to run it; with CI
// set it fails instead.
func Fresh(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("pgx", Base())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := db.PingContext(c); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL at %s: %v", Base(), err)
		}
		t.Skipf("no PostgreSQL at %s (%v): start it with pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start, or set VETO_TEST_POSTGRES", Base(), err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "veto_test_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d, err := sql.Open("pgx", Base())
		if err == nil {
			d.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
			d.Close()
		}
	})
	return Base() + "&search_path=" + schema
}
