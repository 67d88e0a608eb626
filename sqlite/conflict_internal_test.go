package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"github.com/vetohq/veto"
)

// The dialect knows another writer won by the driver's error code, not by
// its message: a duplicate key is a conflict, anything else is not.
func TestConflictByErrorCode(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE pk (run TEXT, seq INTEGER, PRIMARY KEY (run, seq))`,
		`CREATE TABLE uq (name TEXT UNIQUE)`,
		`INSERT INTO pk VALUES ('r', 1)`,
		`INSERT INTO uq VALUES ('a')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, pkErr := db.Exec(`INSERT INTO pk VALUES ('r', 1)`)
	_, uqErr := db.Exec(`INSERT INTO uq VALUES ('a')`)
	_, otherErr := db.Exec(`INSERT INTO missing VALUES (1)`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"primary key", pkErr, true},
		{"unique", uqErr, true},
		{"wrapped", fmt.Errorf("append: %w", pkErr), true},
		{"no such table", otherErr, false},
		{"same text, no code", errors.New("UNIQUE constraint failed: pk.run"), false},
		{"nil", nil, false},
	} {
		if got := dialect.Conflict(tc.err); got != tc.want {
			t.Errorf("%s: Conflict(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// A store that cannot be opened says so (veto.ErrStateUnavailable) and keeps
// the cause: the driver's error is still there to be asked.
func TestUnavailableKeepsTheCause(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	// SQLite's header, then garbage: past veto's own checks of the header,
	// the driver finds it malformed.
	b := []byte(strings.Repeat("not a database ", 547)[:8192])
	copy(b, "SQLite format 3\x00\x10\x00")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), p, Options{})
	if err == nil {
		s.Close()
		t.Skip("the driver opened a corrupt file; its first use fails instead")
	}
	var se *sqlite.Error
	if !errors.Is(err, veto.ErrStateUnavailable) || !errors.As(err, &se) {
		t.Fatalf("error %v (%T): want veto.ErrStateUnavailable wrapping the driver's *sqlite.Error", err, err)
	}
	var st *veto.StateError
	if !errors.As(err, &st) || st.Cause != veto.CauseDamaged || st.Path != p {
		t.Fatalf("error %v: want the cause damaged, for %s", err, p)
	}
}
