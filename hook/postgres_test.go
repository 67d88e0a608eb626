package hook_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlstore"
)

// TestDecidesOnPostgres: veto hook decides on a PostgreSQL database that
// many vetos share: a Read one process observed is known to the Write
// another decides (no read-before-write refusal), what a run did is in
// the database and not in any SQLite file, and a database that cannot be
// reached refuses the call with its cause, never naming the DSN's
// password.
func TestDecidesOnPostgres(t *testing.T) {
	dsn := pgtest.Fresh(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	check(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	check(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	a := claudecode.Adapter{}
	answer := func(o hook.Options, ev string) (int, string) {
		o.Timeout = 5 * time.Second
		r, _ := hook.Reply(context.Background(), a, strings.NewReader(ev), o)
		return r.Exit, r.Stderr
	}
	event := func(name, id, tool, input string) string {
		return `{"session_id":"pg","cwd":"` + ws + `","hook_event_name":"` + name + `","tool_name":"` + tool +
			`","tool_input":` + input + `,"tool_use_id":"` + id + `","source":"startup"}`
	}
	pg := hook.Options{Postgres: dsn}
	if code, out := answer(pg, `{"session_id":"pg","cwd":"`+ws+`","hook_event_name":"SessionStart","source":"startup"}`); code != 0 {
		t.Fatalf("start: %d %s", code, out)
	}
	read := `{"file_path":"` + ws + `/main.go"}`
	write := `{"file_path":"` + ws + `/main.go","content":"package main // edited\n"}`
	if code, out := answer(pg, event("PreToolUse", "w0", "Write", write)); code != 2 || !strings.Contains(out, "overwrite_unread") {
		t.Fatalf("a Write before any Read: %d %s", code, out)
	}
	if code, out := answer(pg, event("PreToolUse", "r1", "Read", read)); code != 0 {
		t.Fatalf("read: %d %s", code, out)
	}
	if code, out := answer(pg, event("PostToolUse", "r1", "Read", read)); code != 0 {
		t.Fatalf("read observed: %d %s", code, out)
	}
	// Another process, another pool: it knows the read.
	if code, out := answer(hook.Options{Postgres: dsn}, event("PreToolUse", "w1", "Write", write)); code != 0 {
		t.Fatalf("the Write after the Read another veto observed: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "veto", "veto.db")); err == nil {
		t.Error("a SQLite state was made beside the database")
	}
	db, err := sql.Open("pgx", dsn)
	check(t, err)
	defer db.Close()
	var n int
	check(t, db.QueryRow(`SELECT count(*) FROM veto_events WHERE run = 'pg'`).Scan(&n))
	if n < 5 {
		t.Errorf("%d events of the run in the database, want its start, three decisions and an observation", n)
	}

	// Unreachable: a closed port, a password in the DSN.
	down := hook.Options{Postgres: "postgres://veto:canary-pw-81c2@127.0.0.1:1/test?sslmode=disable&connect_timeout=1"}
	start := time.Now()
	code, out := answer(down, event("PreToolUse", "r2", "Read", read))
	if code != 2 || !strings.Contains(out, "state_unavailable") || !strings.Contains(out, "cannot be reached") {
		t.Fatalf("an unreachable database: %d %s", code, out)
	}
	if strings.Contains(out, "canary-pw") || strings.Contains(out, "127.0.0.1:1") {
		t.Errorf("the refusal names the DSN: %s", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %s", took)
	}
}

// TestServerDecidesOnPostgres: a hook server started on a database keeps
// one pool for it: what a call through it did is known to a veto hook on
// the same database.
func TestServerDecidesOnPostgres(t *testing.T) {
	dsn := pgtest.Fresh(t)
	t.Setenv("VETO_POSTGRES", dsn)
	srv := startServerWith(t, hook.Options{Postgres: dsn})
	ws := srv.ws
	ev := func(name, id, tool, input string) string {
		return `{"session_id":"pgs","cwd":"` + ws + `","hook_event_name":"` + name + `","tool_name":"` + tool +
			`","tool_input":` + input + `,"tool_use_id":"` + id + `","source":"startup"}`
	}
	call := func(e string) (int, string) {
		var out, errb bytes.Buffer
		code := wire.Run([]string{"claude-code"}, strings.NewReader(e), &out, &errb, inProcess, nil)
		return code, out.String() + errb.String()
	}
	n0 := hook.Served()
	read := `{"file_path":"` + ws + `/main.go"}`
	if code, out := call(`{"session_id":"pgs","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`); code != 0 {
		t.Fatalf("start: %d %s", code, out)
	}
	if code, out := call(ev("PreToolUse", "r1", "Read", read)); code != 0 {
		t.Fatalf("read: %d %s", code, out)
	}
	if code, out := call(ev("PostToolUse", "r1", "Read", read)); code != 0 {
		t.Fatalf("read observed: %d %s", code, out)
	}
	if hook.Served()-n0 != 3 {
		t.Fatalf("the server answered %d of 3", hook.Served()-n0)
	}
	r, _ := hook.Reply(context.Background(), claudecode.Adapter{}, strings.NewReader(ev("PreToolUse", "w1", "Write",
		`{"file_path":"`+ws+`/main.go","content":"x"}`)), hook.Options{Postgres: dsn, Timeout: 5 * time.Second})
	if r.Exit != 0 {
		t.Fatalf("a veto hook on the same database did not know the server's read: %d %s", r.Exit, r.Stderr)
	}
	if _, err := os.Stat(os.Getenv("VETO_STATE")); err == nil {
		t.Error("the server made a SQLite state beside the database")
	}
}

// TestHookTakesTheActiveRevision: on a shared PostgreSQL database, veto
// hook decides with the revision marked active there, in place of the
// policy files, and names it in the decision; a stored revision whose
// files no longer hash to its id is refused, and the call with it.
func TestHookTakesTheActiveRevision(t *testing.T) {
	dsn := pgtest.Fresh(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	check(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	cel, err := celrule.New()
	check(t, err)
	n := 0
	answer := func() (int, string) {
		n++
		ev := `{"session_id":"rev-` + strings.Repeat("r", n) + `","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash",` +
			`"tool_input":{"command":"echo hello"},"tool_use_id":"b1"}`
		r, _ := hook.Reply(context.Background(), claudecode.Adapter{}, strings.NewReader(ev),
			hook.Options{Postgres: dsn, Timeout: 5 * time.Second, Compiler: cel})
		return r.Exit, r.Stderr
	}
	if code, out := answer(); code != 0 {
		t.Fatalf("before any revision: %d %s", code, out)
	}
	db, err := sql.Open("pgx", dsn)
	check(t, err)
	defer db.Close()
	revs := sqlstore.NewRevisions(func() *sql.DB { return db }, "postgres")
	files := []policy.NamedFile{{Name: "deny.yaml", Body: []byte("rules:\n  - id: org.no-echo\n    deny: 'tool == \"Bash\" && args.command.startsWith(\"echo\")'\n    reason: echo_refused\n")}}
	p, err := policy.LoadRevision(files, cel)
	check(t, err)
	check(t, revs.Push(context.Background(), sqlstore.Revision{ID: p.Revision(), By: "test", At: time.Now(),
		Files: []sqlstore.RevisionFile{{Name: files[0].Name, Body: files[0].Body}}}, sqlstore.HeadActive))
	if code, out := answer(); code != 2 || !strings.Contains(out, "echo_refused") {
		t.Fatalf("under the active revision: %d %s", code, out)
	}
	var rev string
	check(t, db.QueryRow(`SELECT convert_from(body, 'UTF8') FROM veto_events WHERE run = 'rev-rr' ORDER BY seq DESC LIMIT 1`).Scan(&rev))
	if !strings.Contains(rev, `"policy_rev":"`+p.Revision()+`"`) {
		t.Fatalf("the decision does not name the revision: %s", rev)
	}
	// The stored files changed behind veto's back: not taken.
	_, err = db.Exec(`UPDATE veto_policy_revisions SET files = $1 WHERE id = $2`,
		`[{"name":"deny.yaml","body":"`+base64.StdEncoding.EncodeToString([]byte("{}\n"))+`"}]`, p.Revision())
	check(t, err)
	if code, out := answer(); code != 2 || !strings.Contains(out, "stored revision was changed") {
		t.Fatalf("a changed revision: %d %s", code, out)
	}
}
