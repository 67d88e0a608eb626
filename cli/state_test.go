package cli_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
)

const stateCanary = "CANARY-state-arg-91d2"

// veto runs the veto command in process.
func veto(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := cli.Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String() + errOut.String()
}

// seed records a decision in each run, with the canary in its argument.
func seed(t *testing.T, path string, runs ...string) {
	t.Helper()
	for i, run := range runs {
		call := `{"call_id": "c` + string(rune('a'+i)) + `", "tool": "Read", "args": {"file_path": "` + stateCanary + `.md"}, "cwd": "/work/project", "run": {"ref": "` + run + `", "fresh": true}}`
		if code, out := veto(t, call, "check", "--state", path); code != cli.ExitAllow {
			t.Fatalf("seed %s: exit %d: %s", run, code, out)
		}
	}
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Each cause of a refusal has an exit code of its own.
func TestStateCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound", "veto.db")
	seed(t, sound, "r1")
	if code, out := veto(t, "", "state", "check", "--state", sound); code != 0 || !strings.Contains(out, "is sound: 1 run(s), 2 event(s)") {
		t.Fatalf("sound: exit %d: %s", code, out)
	}

	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o600)
	newer := filepath.Join(dir, "newer", "veto.db")
	seed(t, newer, "r1")
	if _, err := rawDB(t, newer).Exec(`UPDATE veto_meta SET value = '99' WHERE key = 'migrations'`); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked", "veto.db")
	seed(t, locked, "r1")
	tx, err := rawDB(t, locked).Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO veto_meta VALUES ('held', '1')`); err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, []byte("x"), 0o600)

	for _, c := range []struct {
		name, path string
		code       int
		words      string
	}{
		{"damaged", empty, 3, "is damaged (the file is empty)"},
		{"newer", newer, 4, "was written by a newer veto (99 migrations, this veto knows 5)"},
		{"locked", locked, 5, "is locked by another writer past the busy timeout"},
		{"bad path", dir, 8, "is not a usable path (not a regular file)"},
		{"under a file", filepath.Join(notDir, "veto.db"), 8, "is not a usable path"},
	} {
		code, out := veto(t, "", "state", "check", "--state", c.path, "--timeout", "200ms")
		if code != c.code || !strings.Contains(out, c.words) || !strings.Contains(out, "cause: ") {
			t.Errorf("%s: exit %d, want %d: %s", c.name, code, c.code, out)
		}
		if strings.Contains(out, stateCanary) {
			t.Errorf("%s: the output holds argument text: %s", c.name, out)
		}
	}
}

// repair moves a damaged state aside (kept, 0600), starts a new one, and
// marks every run the damaged file's bytes name incomplete.
func TestStateRepairMarksRunsIncomplete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "veto.db")
	seed(t, path, "alpha", "beta")
	// The header overwritten: SQLite cannot read it, the pages still hold
	// the events.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(strings.Repeat("garbage!", 12)), 0)
	f.Close()
	if code, out := veto(t, "", "state", "check", "--state", path); code != 3 || !strings.Contains(out, "is damaged") {
		t.Fatalf("check: exit %d: %s", code, out)
	}
	code, out := veto(t, "", "state", "repair", "--state", path)
	if code != 0 || !strings.Contains(out, "marked 2 run(s) incomplete") || !strings.Contains(out, "  alpha\n") || !strings.Contains(out, "  beta\n") {
		t.Fatalf("repair: exit %d: %s", code, out)
	}
	if strings.Contains(out, stateCanary) {
		t.Fatalf("repair printed argument text: %s", out)
	}
	aside, _ := filepath.Glob(path + ".damaged-*Z")
	if len(aside) != 1 {
		t.Fatalf("kept aside: %v", aside)
	}
	if fi, err := os.Stat(aside[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the damaged file kept: %v %v", fi, err)
	}
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"alpha", "beta"} {
		p, err := s.Load(context.Background(), run)
		if err != nil || !p.Exists() || p.History.Complete() {
			t.Errorf("run %s after the repair: exists=%v complete=%v err=%v", run, p.Exists(), p.History.Complete(), err)
		}
	}
	s.Close()
	// The run goes on in the new state, incomplete: its next call, which
	// says it is fresh, does not make it complete.
	seed(t, path, "alpha")
	s, _ = sqlite.Open(context.Background(), path, sqlite.Options{})
	if p, _ := s.Load(context.Background(), "alpha"); p.History.Complete() {
		t.Error("a call after the repair made the run complete")
	}
	s.Close()
	if code, out := veto(t, "", "log", "verify", "--state", path); code != 0 {
		t.Fatalf("log verify: exit %d: %s", code, out)
	}
	if code, out := veto(t, "", "state", "check", "--state", path); code != 0 || !strings.Contains(out, "2 run(s) recorded incomplete after damage") {
		t.Fatalf("check after the repair: exit %d: %s", code, out)
	}
}

// An event damaged in place in a sound file: check reports its run (exit
// 1), repair marks it incomplete and moves nothing.
func TestStateRepairMarksRunsWithDamagedEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "veto.db")
	seed(t, path, "r1", "r2")
	if _, err := rawDB(t, path).Exec(`UPDATE veto_events SET body = X'00' WHERE run = 'r1' AND seq = 1`); err != nil {
		t.Fatal(err)
	}
	code, out := veto(t, "", "state", "check", "--state", path)
	if code != cli.ExitDeny || !strings.Contains(out, "run r1: event 1 does not decode") || strings.Contains(out, "run r2") {
		t.Fatalf("check: exit %d: %s", code, out)
	}
	if code, out := veto(t, "", "state", "repair", "--state", path); code != 0 || !strings.Contains(out, "marked 1 run(s) incomplete") {
		t.Fatalf("repair: exit %d: %s", code, out)
	}
	if aside, _ := filepath.Glob(path + ".damaged-*"); len(aside) != 0 {
		t.Fatalf("a sound file was moved aside: %v", aside)
	}
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, _ := s.Load(context.Background(), "r1"); p.History.Complete() {
		t.Fatal("the damaged run is complete after the repair")
	}
	if p, _ := s.Load(context.Background(), "r2"); !p.History.Complete() {
		t.Fatal("a sound run was marked")
	}
}

// PostgreSQL: check reads every run's chain; a database that cannot be
// reached is named so, without its DSN.
func TestStateCheckPostgres(t *testing.T) {
	dsn := pgtest.Fresh(t)
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if code, out := veto(t, "", "state", "check", "--postgres", dsn); code != 0 || !strings.Contains(out, "ok: the PostgreSQL database is sound") {
		t.Fatalf("exit %d: %s", code, out)
	}
	bad := "postgres://postgres:" + stateCanary + "@127.0.0.1:1/test?sslmode=disable&connect_timeout=1"
	code, out := veto(t, "", "state", "check", "--postgres", bad, "--timeout", "1s")
	if code != 7 || !strings.Contains(out, "cannot be reached") || strings.Contains(out, stateCanary) {
		t.Fatalf("unreachable: exit %d: %s", code, out)
	}
}
