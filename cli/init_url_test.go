package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
)

// veto init claude-code --url registers veto serve's HTTP hook for every
// event, fail-closed, with the token read from $VETO_TOKEN (never written),
// in place of veto's command hooks; init without --url and uninstall take
// it out again, keeping everything else.
func TestInitClaudeCodeURL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(existing), 0o644)
	base := decode(t, []byte(existing))

	run(t, "init", "claude-code", "--dir", dir) // the command form first
	run(t, "init", "claude-code", "--dir", dir, "--url", "https://veto.internal:8443/")
	b, _ := os.ReadFile(path)
	got := decode(t, b)
	hooks := got["hooks"].(map[string]any)
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure"} {
		var mine []map[string]any
		for _, g := range hooks[ev].([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				m := h.(map[string]any)
				if c, _ := m["command"].(string); strings.Contains(c, "veto") {
					t.Fatalf("%s: the command hook stayed beside the HTTP one: %v", ev, m)
				}
				if m["type"] == "http" {
					mine = append(mine, m)
				}
			}
		}
		if len(mine) != 1 {
			t.Fatalf("%s: %d HTTP hooks, want 1: %s", ev, len(mine), b)
		}
		m := mine[0]
		if m["url"] != "https://veto.internal:8443/v1/hooks/claude-code" || m["onFailure"] != "block" {
			t.Fatalf("%s: %v", ev, m)
		}
		hdr := m["headers"].(map[string]any)
		if hdr["Authorization"] != "Bearer $VETO_TOKEN" || !reflect.DeepEqual(m["allowedEnvVars"], []any{"VETO_TOKEN", "CLAUDE_PROJECT_DIR"}) {
			t.Fatalf("%s: the token is not read from $VETO_TOKEN: %v", ev, m)
		}
	}
	// Twice changes nothing.
	if out := run(t, "init", "claude-code", "--dir", dir, "--url", "https://veto.internal:8443/"); !strings.Contains(out, "nothing changed") {
		t.Fatalf("second init --url: %s", out)
	}
	// The command form replaces it; uninstall leaves the user's settings.
	run(t, "init", "claude-code", "--dir", dir)
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(`"http"`)) {
		t.Fatalf("init without --url kept the HTTP hook: %s", b)
	}
	run(t, "init", "claude-code", "--dir", dir, "--url", "http://127.0.0.1:8181")
	run(t, "uninstall", "claude-code", "--dir", dir)
	b, _ = os.ReadFile(path)
	if got := decode(t, b); !reflect.DeepEqual(got, base) {
		t.Fatalf("uninstall left:\n%s", b)
	}

	// A client with command hooks only: veto hook forwards to the service.
	run(t, "init", "gemini-cli", "--dir", dir)
	run(t, "init", "gemini-cli", "--dir", dir, "--url", "http://127.0.0.1:8181/")
	gpath := filepath.Join(dir, ".gemini", "settings.json")
	b, _ = os.ReadFile(gpath)
	if n := bytes.Count(b, []byte(` hook gemini-cli --url http://127.0.0.1:8181"`)); n != 3 {
		t.Fatalf("gemini-cli: %d forwarding hooks, want 3 (one per event), and no other veto hook:\n%s", n, b)
	}
	if bytes.Count(b, []byte("hook gemini-cli")) != 3 {
		t.Fatalf("gemini-cli: the local hook stayed beside the forwarding one:\n%s", b)
	}
	run(t, "uninstall", "gemini-cli", "--dir", dir)
	if b, _ := os.ReadFile(gpath); bytes.Contains(b, []byte("veto")) {
		t.Fatalf("uninstall left veto in gemini's settings:\n%s", b)
	}
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), []string{"uninstall", "gemini-cli", "--dir", dir, "--url", "http://127.0.0.1:1"},
		strings.NewReader(""), &out, &errOut); code != cli.ExitUsage {
		t.Fatalf("uninstall --url: exit %d", code)
	}
}
