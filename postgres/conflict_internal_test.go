package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vetohq/veto/postgres/pgtest"
)

// The errors that mean another writer won are told from every other, as
// the server itself raises them: a unique violation, a serialization
// failure and a deadlock are conflicts (decide again); a syntax error, a
// missing table and a cancelled context are not.
func TestConflictIsAnotherWriterWinning(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", pgtest.Fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (1, 0), (2, 0)`); err != nil {
		t.Fatal(err)
	}
	conflicts := map[string]error{}
	others := map[string]error{}

	_, conflicts["unique violation"] = db.ExecContext(ctx, `INSERT INTO t VALUES (1, 1)`)

	// Two serializable transactions, each reading what the other writes.
	serial := func() *sql.Tx {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	a, b := serial(), serial()
	var n int
	if err := a.QueryRowContext(ctx, `SELECT SUM(v) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, `SELECT SUM(v) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, `UPDATE t SET v = 1 WHERE k = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ExecContext(ctx, `UPDATE t SET v = 1 WHERE k = 2`); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	conflicts["serialization failure"] = b.Commit()

	// Two transactions locking the same rows in opposite orders.
	c, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, `UPDATE t SET v = 2 WHERE k = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecContext(ctx, `UPDATE t SET v = 2 WHERE k = 2`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var errC, errD error
	wg.Add(2)
	go func() { defer wg.Done(); _, errC = c.ExecContext(ctx, `UPDATE t SET v = 3 WHERE k = 2`) }()
	go func() { defer wg.Done(); _, errD = d.ExecContext(ctx, `UPDATE t SET v = 3 WHERE k = 1`) }()
	wg.Wait()
	c.Rollback()
	d.Rollback()
	switch {
	case errC != nil && errD == nil:
		conflicts["deadlock"] = errC
	case errD != nil && errC == nil:
		conflicts["deadlock"] = errD
	default:
		t.Fatalf("one of two deadlocked transactions should fail: %v, %v", errC, errD)
	}

	_, others["syntax error"] = db.ExecContext(ctx, `INSERT INTO`)
	_, others["missing table"] = db.ExecContext(ctx, `SELECT * FROM none_such`)
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, others["cancelled"] = db.ExecContext(done, `SELECT 1`)
	others["not the server's"] = errors.New("23505")

	for name, err := range conflicts {
		if err == nil || !dialect.Conflict(err) {
			t.Errorf("%s (%v) is not taken for another writer winning", name, err)
		}
	}
	for name, err := range others {
		if err == nil || dialect.Conflict(err) {
			t.Errorf("%s (%v) is taken for another writer winning", name, err)
		}
	}
}

// LockRun holds the run's row for the rest of the transaction, also when
// the row was there before: another writer cannot take it meanwhile.
func TestLockRunHoldsTheRunsRow(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Fresh(t)
	s, err := Open(ctx, dsn) // the schema
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := func(s string) string {
		var b strings.Builder
		n := 0
		for _, r := range s {
			if r == '?' {
				n++
				b.WriteString(dialect.Placeholder(n))
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	lock := func() *sql.Tx {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := dialect.LockRun(ctx, tx, q, "run-1"); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	if err := lock().Commit(); err != nil { // the row now exists
		t.Fatal(err)
	}
	tx := lock()
	defer tx.Rollback()
	var one int
	err = db.QueryRowContext(ctx, `SELECT 1 FROM veto_runs WHERE run = 'run-1' FOR UPDATE NOWAIT`).Scan(&one)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" {
		t.Fatalf("another writer took the locked run's row: %v", err)
	}
}
