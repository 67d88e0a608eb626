package wire_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/hook/wire"
)

func writeSettings(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The timeout registered with the client is read where the client reads
// it: the user's file ($CODEX_HOME for Codex) and the project's, in the
// directory or the nearest above it, in the client's unit; only veto's
// entries for that client count, and the shortest wins. A file that does
// not decode counts for nothing.
func TestRegisteredTimeout(t *testing.T) {
	root := t.TempDir()
	home, codexHome, ws := filepath.Join(root, "home"), filepath.Join(root, "codex"), filepath.Join(root, "ws")
	sub := filepath.Join(ws, "a", "b")
	os.MkdirAll(sub, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", codexHome)
	entry := func(cmd string, timeout string) string {
		return `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":` + cmd + `,"timeout":` + timeout + `}]}]}}`
	}
	if d := wire.Registered(&clients.Codex, sub); d != 0 {
		t.Fatalf("no settings: %s", d)
	}
	writeSettings(t, filepath.Join(ws, ".codex", "hooks.json"), entry(`"/bin/sh -c 'x' /opt/veto-hook codex"`, "3"))
	if d := wire.Registered(&clients.Codex, sub); d != 3*time.Second {
		t.Fatalf("the project's, two levels up: %s", d)
	}
	writeSettings(t, filepath.Join(codexHome, "hooks.json"), entry(`"/opt/veto-hook codex"`, "1"))
	if d := wire.Registered(&clients.Codex, sub); d != time.Second {
		t.Fatalf("the user's, shorter: %s", d)
	}
	writeSettings(t, filepath.Join(codexHome, "hooks.json"), entry(`"/opt/other-hook codex"`, "1"))
	if d := wire.Registered(&clients.Codex, sub); d != 3*time.Second {
		t.Fatalf("another program's entry counted: %s", d)
	}
	writeSettings(t, filepath.Join(codexHome, "hooks.json"), "// not JSON\n")
	if d := wire.Registered(&clients.Codex, sub); d != 3*time.Second {
		t.Fatalf("a file that does not decode: %s", d)
	}
	// Gemini CLI's unit is milliseconds, its user file under HOME.
	writeSettings(t, filepath.Join(home, ".gemini", "settings.json"), entry(`"'/opt/my bin/veto-hook' gemini-cli"`, "1500"))
	if d := wire.Registered(&clients.GeminiCLI, ws); d != 1500*time.Millisecond {
		t.Fatalf("gemini-cli: %s", d)
	}
	if d := wire.Registered(&clients.Cursor, ws); d != 0 {
		t.Fatalf("Cursor registers no timeout: %s", d)
	}
}

// A timeout lowered by hand after veto init lowers the budget: veto-hook
// answers within half of it, even when veto hook does not answer at all.
func TestBudgetIsHalfTheRegisteredTimeout(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", "")
	t.Setenv("VETO_NO_SERVER", "1")
	writeSettings(t, filepath.Join(ws, ".codex", "hooks.json"),
		`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/veto-hook codex","timeout":1}]}]}}`)
	t.Chdir(ws)
	stuck := func(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
		time.Sleep(3 * time.Second)
		return 0, true
	}
	var o, e bytes.Buffer
	start := time.Now()
	code := wire.Run([]string{"codex"}, strings.NewReader(event), &o, &e, stuck, nil)
	took := time.Since(start)
	if code != 2 || !strings.Contains(e.String(), "did not decide within 500ms") {
		t.Fatalf("exit %d %q %q", code, o.String(), e.String())
	}
	if took > 500*time.Millisecond+wire.Grace+200*time.Millisecond {
		t.Errorf("answered after %s, past half the registered 1 s", took)
	}
	// What is left of the halved budget is what veto hook is given.
	fb := &recorder{}
	wire.Run([]string{"codex"}, strings.NewReader(event), io.Discard, io.Discard, fb.run, nil)
	args := strings.Join(fb.args, " ")
	left, err := time.ParseDuration(args[strings.LastIndex(args, " ")+1:])
	if err != nil || left > 500*time.Millisecond || left < 300*time.Millisecond {
		t.Fatalf("veto hook was given %q", args)
	}
}

// BenchmarkRegistered is what reading the registered timeout adds to each
// hook: the user's file and the project's, found three levels up.
func BenchmarkRegistered(b *testing.B) {
	root := b.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	sub := filepath.Join(ws, "a", "b", "c")
	os.MkdirAll(sub, 0o755)
	b.Setenv("HOME", home)
	settings := `{"permissions":{"allow":["Bash(go test:*)"]},"hooks":{` +
		`"SessionStart":[{"hooks":[{"type":"command","command":"/opt/veto-hook claude-code","timeout":5,"onFailure":"block"}]}],` +
		`"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/veto-hook claude-code","timeout":5,"onFailure":"block"}]}],` +
		`"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/veto-hook claude-code","timeout":5,"onFailure":"block"}]}]}}`
	for _, p := range []string{filepath.Join(home, ".claude", "settings.json"), filepath.Join(ws, ".claude", "settings.json")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(settings), 0o644)
	}
	for b.Loop() {
		if d := wire.Registered(&clients.ClaudeCode, sub); d != 5*time.Second {
			b.Fatal(d)
		}
	}
}

// Waiting names Claude Code's PermissionRequest, and no other event;
// an event that only mentions it in its arguments is not one.
func TestWaiting(t *testing.T) {
	c := &clients.ClaudeCode
	for in, want := range map[string]string{
		`{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`:                             "PermissionRequest",
		`{"hook_event_name":"PreToolUse","tool_input":{"command":"echo \"PermissionRequest\""}}`: "",
		`{"hook_event_name":"PreToolUse"}`:                                                       "",
		`not json "PermissionRequest"`:                                                           "",
	} {
		got := ""
		if e := wire.Waiting(c, []byte(in)); e != nil {
			got = e.Name
		}
		if got != want {
			t.Errorf("Waiting(%s) = %q, want %q", in, got, want)
		}
	}
	if wire.Waiting(&clients.GeminiCLI, []byte(`{"hook_event_name":"PermissionRequest"}`)) != nil {
		t.Error("Gemini CLI has no waiting event")
	}
}

// The event veto waits on has its own budget: its long timeout is its
// own, and not the other events'.
func TestRegisteredForTheWaitingEvent(t *testing.T) {
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	t.Setenv("HOME", home)
	settings := `{"hooks":{` +
		`"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/veto-hook claude-code","timeout":5}]}],` +
		`"PermissionRequest":[{"matcher":"*","hooks":[{"type":"command","command":"/opt/veto-hook claude-code","timeout":600}]}]}}`
	p := filepath.Join(ws, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(settings), 0o644)
	if d := wire.Registered(&clients.ClaudeCode, ws); d != 5*time.Second {
		t.Errorf("Registered = %s, want 5s (the waiting event's 600 s is not the others' budget)", d)
	}
	if d := wire.RegisteredFor(&clients.ClaudeCode, ws, "PermissionRequest"); d != 600*time.Second {
		t.Errorf("RegisteredFor(PermissionRequest) = %s, want 10m0s", d)
	}
	if d := wire.RegisteredFor(&clients.ClaudeCode, ws, "PreToolUse"); d != 5*time.Second {
		t.Errorf("RegisteredFor(PreToolUse) = %s, want 5s", d)
	}
}
