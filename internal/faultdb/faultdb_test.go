package faultdb_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"modernc.org/sqlite"

	"github.com/vetohq/veto/internal/faultdb"
)

func TestFaultsFailTheNthMatchingCall(t *testing.T) {
	ctx := context.Background()
	fs := &faultdb.Faults{}
	db := faultdb.OpenDB(&sqlite.Driver{}, "file:"+filepath.Join(t.TempDir(), "f.db"), fs)
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	f := fs.Fail(faultdb.Exec, "INSERT", 2)
	for i, want := range []bool{false, true, false} {
		_, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?)`, i)
		if got := errors.Is(err, faultdb.ErrInjected); got != want {
			t.Fatalf("insert %d: err %v, want injected %v", i+1, err, want)
		}
	}
	if fs.Fired(f) != 1 {
		t.Fatalf("fired %d times, want 1", fs.Fired(f))
	}
	// The same through a prepared statement and inside a transaction.
	fs.Clear()
	fs.Fail(faultdb.Exec, "INSERT", 0)
	st, err := db.PrepareContext(ctx, `INSERT INTO t VALUES (?)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExecContext(ctx, 9); !errors.Is(err, faultdb.ErrInjected) {
		t.Fatalf("prepared insert: %v", err)
	}
	st.Close()
	fs.Clear()
	fs.Fail(faultdb.Commit, "", 1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); !errors.Is(err, faultdb.ErrInjected) {
		t.Fatalf("commit: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows after a failed commit: %d, %v; want the 2 inserted before", n, err)
	}
	// A scan fault: the rows have one column more than the Scan asks for.
	fs.Fail(faultdb.Scan, "SELECT a", 1)
	if err := db.QueryRowContext(ctx, `SELECT a FROM t`).Scan(&n); err == nil {
		t.Fatal("scan succeeded under a scan fault")
	}
	if err := db.QueryRowContext(ctx, `SELECT a FROM t`).Scan(&n); err != nil {
		t.Fatalf("second scan: %v", err)
	}
	// A fetch fault: rows.Err is the fault.
	fs.Fail(faultdb.Next, "SELECT a", 2)
	rows, err := db.QueryContext(ctx, `SELECT a FROM t ORDER BY a`)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for rows.Next() {
		got++
	}
	if got != 1 || !errors.Is(rows.Err(), faultdb.ErrInjected) {
		t.Fatalf("rows fetched %d, err %v; want 1 and the fault", got, rows.Err())
	}
	rows.Close()
}
