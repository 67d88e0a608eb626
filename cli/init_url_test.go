package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// veto init claude-code --url --http registers veto serve's HTTP hook for
// every event, fail-closed, with the token read from $VETO_TOKEN (never written),
// in place of veto's command hooks; init without --url and uninstall take
// it out again, keeping everything else.
func TestInitClaudeCodeURL(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(existing), 0o644)
	base := decode(t, []byte(existing))

	run(t, "init", "claude-code", "--dir", dir) // the command form first
	run(t, "init", "claude-code", "--dir", dir, "--url", "https://veto.internal:8443/", "--http")
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
	if out := run(t, "init", "claude-code", "--dir", dir, "--url", "https://veto.internal:8443/", "--http"); !strings.Contains(out, "nothing changed") {
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
	if n := bytes.Count(b, []byte(` hook gemini-cli --url http://127.0.0.1:8181 --token-file `)); n != 3 {
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

// isolate points veto's config directory and state at the test's own, so
// that init --url keeps the hook's token there.
func isolate(t *testing.T) (config, state string) {
	t.Helper()
	d := t.TempDir()
	config, state = filepath.Join(d, "config"), filepath.Join(d, "state", "veto.db")
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("VETO_STATE", state)
	t.Setenv("VETO_POSTGRES", "")
	return config, state
}

// tokenIn is the live token a file holds, from the state.
func tokenIn(t *testing.T, state, file string) server.Token {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(file)
	st, err := sqlite.Open(context.Background(), state, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok, ok, err := server.NewTokens(sqlstore.NewTokens(st.DB, "sqlite")).Verify(context.Background(), strings.TrimSpace(string(b)))
	if !ok || err != nil {
		t.Fatalf("the file's token is not live: %v", err)
	}
	return tok
}

// TestInitURLSetsUpAnAgentsToken: init CLIENT --url makes the hook an
// agent's token (agent:CLIENT, role agent), kept 0600 in veto's config
// directory and read by the command hook from there: the settings hold
// neither the secret nor $VETO_TOKEN. Run again, it keeps the token. An
// actor that is not an agent, and a given file holding a person's token,
// are refused, and nothing is written; a given agent's token is used.
func TestInitURLSetsUpAnAgentsToken(t *testing.T) {
	config, state := isolate(t)
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	run(t, "init", "claude-code", "--dir", dir, "--url", "http://127.0.0.1:8181")
	file := filepath.Join(config, "veto", "tokens", "claude-code.token")
	tok := tokenIn(t, state, file)
	if tok.Role != server.RoleAgent || tok.Actor.Kind != "agent" || tok.Actor.ID != "claude-code" {
		t.Fatalf("the hook's token: %+v", tok)
	}
	secret, _ := os.ReadFile(file)
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, bytes.TrimSpace(secret)) || bytes.Contains(b, []byte("VETO_TOKEN")) || bytes.Contains(b, []byte(`"http"`)) {
		t.Fatalf("the settings hold the token or read it from the environment:\n%s", b)
	}
	if n := bytes.Count(b, []byte(" hook claude-code --url http://127.0.0.1:8181 --token-file "+file)); n < 4 || n != bytes.Count(b, []byte("hook claude-code")) {
		t.Fatalf("%d forwarding hooks reading the file, want one per event and no other:\n%s", n, b)
	}
	if out := run(t, "init", "claude-code", "--dir", dir, "--url", "http://127.0.0.1:8181"); !strings.Contains(out, "nothing changed") ||
		!strings.Contains(out, "kept the hook's token "+tok.ID) {
		t.Fatalf("second init: %s", out)
	}

	// Refused: a person as the hook's actor; a file of a person's token.
	var out, errOut bytes.Buffer
	gdir := t.TempDir()
	if code := cli.Main(context.Background(), []string{"init", "gemini-cli", "--dir", gdir, "--url", "http://127.0.0.1:8181", "--actor", "user:ann"},
		strings.NewReader(""), &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "a person's token is never the hook's") {
		t.Fatalf("--actor user:ann: exit %d: %s", code, errOut.String())
	}
	person := filepath.Join(t.TempDir(), "person.token")
	errOut.Reset()
	cli.Main(context.Background(), []string{"token", "create", "--actor", "user:ann"}, strings.NewReader(""), &out, &errOut)
	os.WriteFile(person, []byte(strings.Fields(out.String())[0]+"\n"), 0o600)
	errOut.Reset()
	if code := cli.Main(context.Background(), []string{"init", "gemini-cli", "--dir", gdir, "--url", "http://127.0.0.1:8181", "--token-file", person},
		strings.NewReader(""), &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "does not hold a live agent's token") {
		t.Fatalf("a person's token file: exit %d: %s", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(gdir, ".gemini", "settings.json")); err == nil {
		t.Fatal("a refused init wrote the settings")
	}
	// Allowed: a given agent's token, for the agent it names.
	agentFile := filepath.Join(t.TempDir(), "gemini.token")
	out.Reset()
	cli.Main(context.Background(), []string{"token", "create", "--actor", "agent:gem"}, strings.NewReader(""), &out, &errOut)
	os.WriteFile(agentFile, []byte(strings.Fields(out.String())[0]+"\n"), 0o600)
	run(t, "init", "gemini-cli", "--dir", gdir, "--url", "http://127.0.0.1:8181", "--token-file", agentFile)
	if b, _ := os.ReadFile(filepath.Join(gdir, ".gemini", "settings.json")); !bytes.Contains(b, []byte("--token-file "+agentFile)) {
		t.Fatalf("the given file is not the hook's:\n%s", b)
	}
}

// TestHookURLReadsItsTokenFile: veto hook CLIENT --url --token-file sends
// the file's token; a file others may read is refused and the call is
// blocked, naming neither the token nor the file's content.
func TestHookURLReadsItsTokenFile(t *testing.T) {
	var got string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"exit":0,"stdout":"","stderr":""}`)
	}))
	defer ts.Close()
	t.Setenv("VETO_TOKEN", "veto_fromtheenvironment")
	file := filepath.Join(t.TempDir(), "hook.token")
	os.WriteFile(file, []byte("veto_fromthefile\n"), 0o600)
	event := `{"session_id":"g1","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"/tmp/x"}}`
	// The hook runs as its own process under a stand-in client (TestMain):
	// a hook notes the client that runs it as guarded, and in this process
	// that would be the test binary, which answers as a person elsewhere.
	veto, err := exec.LookPath("veto")
	if err != nil {
		t.Fatal(err)
	}
	hook := func() (int, string) {
		var out bytes.Buffer
		cmd := exec.Command(veto, "hook", "gemini-cli", "--url", ts.URL, "--token-file", file)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(event), &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	if code, out := hook(); code != 0 || got != "Bearer veto_fromthefile" {
		t.Fatalf("exit %d, sent %q: %s", code, got, out)
	}
	os.Chmod(file, 0o644)
	got = ""
	if code, out := hook(); code != 2 || got != "" || !strings.Contains(out, "token file") || strings.Contains(out, "veto_fromthefile") {
		t.Fatalf("a file others may read: exit %d, sent %q: %s", code, got, out)
	}
}
