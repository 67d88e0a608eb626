package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/faultdb"
	"modernc.org/sqlite"
)

// withFaults has Open use a driver that fails what fs says, for this test.
func withFaults(t *testing.T, fs *faultdb.Faults) {
	t.Helper()
	old := openDB
	openDB = func(dsn string) (*sql.DB, error) { return faultdb.OpenDB(&sqlite.Driver{}, dsn, fs), nil }
	t.Cleanup(func() { openDB = old })
}

// Opening a state fails closed at each of its steps: the driver refusing
// the schema's query, and the switch to WAL. Each is refused with its
// cause named, nothing is opened, and no descriptor is left behind.
func TestOpenFailsAtEachStep(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		op    faultdb.Op
		match string
	}{
		{"the schema's query", faultdb.Query, "veto_meta"},
		{"the switch to WAL", faultdb.Exec, "journal_mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "veto.db")
			s, err := Open(ctx, p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			fs := &faultdb.Faults{}
			f := fs.Fail(c.op, c.match, 1)
			withFaults(t, fs)
			before := openFDs(t)
			s, err = Open(ctx, p, Options{})
			if err == nil {
				s.Close()
				t.Fatalf("opened with %s failing", c.name)
			}
			if fs.Fired(f) != 1 {
				t.Fatalf("the fault fired %d times", fs.Fired(f))
			}
			var se *veto.StateError
			if !errors.As(err, &se) || se.Path != p || se.Reason() == "" {
				t.Fatalf("Open = %v, want a refusal naming its cause", err)
			}
			if n := openFDs(t); n != before {
				t.Errorf("the refusal left %d descriptors open", n-before)
			}
		})
	}
}
