// Package servertest holds what the tests of the service and of its page
// share: a world of real files, real stores, a locked log buffer. It is
// for tests only.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// World is a home and a workspace of real files, shared by the instances
// of one test, and the policy file they serve.
type World struct{ Home, Work, Policy string }

// NewWorld makes a World in t's temp dir: a home with an SSH key, a
// project with sources and a private directory, and Policy.
func NewWorld(t testing.TB) World {
	t.Helper()
	d := t.TempDir()
	w := World{Home: filepath.Join(d, "home"), Work: filepath.Join(d, "home", "project")}
	for _, dir := range []string{filepath.Join(w.Home, ".ssh"), filepath.Join(w.Work, "secrets")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		filepath.Join(w.Home, ".ssh", "id_rsa"):      "KEY",
		filepath.Join(w.Work, "README.md"):           "read me\n",
		filepath.Join(w.Work, "main.go"):             "package main\n",
		filepath.Join(w.Work, "other.go"):            "package main\n",
		filepath.Join(w.Work, "secrets", "plan.txt"): "plan\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.Policy = filepath.Join(d, "veto.yaml")
	if err := os.WriteFile(w.Policy, []byte(Policy), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// Policy is the built-in default with an egress allow-list and a
// private directory: a read of secrets/ taints the run.
const Policy = `egress:
  mode: allowlist
  allow: ["docs.example.org"]
sequence:
  private: ["**/secrets/**"]
rules:
  - id: deploy-needs-person
    match: {tool: Bash}
    ask: 'args.command.startsWith("make deploy")'
    reason: deploy_needs_person
    message: A deploy needs a person's approval.
`

// SQLiteStore is a real SQLite state in a temp dir, and its dialect.
func SQLiteStore(t testing.TB) (*sqlstore.Store, string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, "sqlite"
}

// PGStore is a pool on dsn (a database of the test's own), and its
// dialect.
func PGStore(t testing.TB, dsn string) (*sqlstore.Store, string) {
	t.Helper()
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, "postgres"
}

// LockedBuffer holds the gate's and the server's log lines, written by
// both under one lock and read under it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was logged so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Bytes is a copy of what was logged so far.
func (l *LockedBuffer) Bytes() []byte { return []byte(l.String()) }

// JSONLogger logs at debug level, as JSON, into b.
func JSONLogger(b *LockedBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Post sends body (JSON, or a string as it is) to base+path with token
// ("" sends none) and returns the status and the decoded JSON answer.
func Post(t testing.TB, base, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return Do(t, req, token)
}

// Get gets base+path with token and returns the status and the decoded
// JSON answer.
func Get(t testing.TB, base, path, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	return Do(t, req, token)
}

// Do sends req with token ("" sends none) and returns the status and the
// decoded JSON answer (nil when the answer is not JSON).
func Do(t testing.TB, req *http.Request, token string) (int, map[string]any) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %q", req.Method, req.URL.Path, raw)
		}
	}
	return resp.StatusCode, m
}
