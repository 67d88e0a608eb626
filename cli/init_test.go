package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/clients"
)

const existing = `{
  "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(./.env)"]},
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 30}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "env": {"FOO": "1"}
}`

func run(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("veto %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// veto init claude-code keeps every other setting and hook, in meaning;
// a second run changes nothing; uninstall removes only what init added.
func TestInitClaudeCodeKeepsSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(existing), 0o644)

	dry := run(t, "init", "claude-code", "--dir", dir, "--dry-run")
	if !strings.Contains(dry, "dry run") {
		t.Fatalf("dry run: %s", dry)
	}
	if b, _ := os.ReadFile(path); string(b) != existing {
		t.Fatal("a dry run wrote the settings")
	}

	run(t, "init", "claude-code", "--dir", dir)
	first, _ := os.ReadFile(path)
	got := decode(t, first)
	want := decode(t, []byte(existing))
	for _, k := range []string{"permissions", "model", "env"} {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s changed: %v", k, got[k])
		}
	}
	hooks := got["hooks"].(map[string]any)
	if !reflect.DeepEqual(hooks["Stop"], want["hooks"].(map[string]any)["Stop"]) {
		t.Error("another hook event changed")
	}
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || !reflect.DeepEqual(pre[0], want["hooks"].(map[string]any)["PreToolUse"].([]any)[0]) {
		t.Fatalf("PreToolUse: %v", pre)
	}
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure"} {
		groups := hooks[ev].([]any)
		last := groups[len(groups)-1].(map[string]any)
		cmd := last["hooks"].([]any)[0].(map[string]any)["command"].(string)
		if !filepath.IsAbs(strings.Fields(cmd)[0]) || !strings.HasSuffix(cmd, " hook claude-code") {
			t.Errorf("%s: command %q", ev, cmd)
		}
		if ev != "SessionStart" && last["matcher"] != "*" {
			t.Errorf("%s: matcher %v", ev, last["matcher"])
		}
	}

	out := run(t, "init", "claude-code", "--dir", dir)
	second, _ := os.ReadFile(path)
	if !bytes.Equal(first, second) || !strings.Contains(out, "nothing changed") {
		t.Fatalf("a second init changed the settings:\n%s", second)
	}

	run(t, "uninstall", "claude-code", "--dir", dir)
	after, _ := os.ReadFile(path)
	if !reflect.DeepEqual(decode(t, after), want) {
		t.Fatalf("uninstall did not restore the settings:\n%s", after)
	}
}

func TestInitCreatesSettings(t *testing.T) {
	dir := t.TempDir()
	run(t, "init", "claude-code", "--dir", dir)
	b, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(b), "PreToolUse") {
		t.Fatalf("%s %v", b, err)
	}
	run(t, "uninstall", "claude-code", "--dir", dir)
	b, _ = os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if strings.TrimSpace(string(b)) != "{}" {
		t.Fatalf("after uninstall: %s", b)
	}
}

func TestInitRefusesABrokenSettingsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"hooks": [`), 0o644)
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), []string{"init", "claude-code", "--dir", dir}, strings.NewReader(""), &out, &errOut); code == 0 ||
		!strings.Contains(errOut.String(), "not a JSON object") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if b, _ := os.ReadFile(path); string(b) != `{"hooks": [` {
		t.Fatal("a broken settings file was overwritten")
	}
}

func TestInitEveryClient(t *testing.T) {
	for _, c := range clients.All {
		client, file := c.Name, c.Settings.Project
		if c.Settings.Extension {
			continue // an extension file, not settings: TestInitPi
		}
		t.Run(client, func(t *testing.T) {
			dir := t.TempDir()
			run(t, "init", client, "--dir", dir)
			path := filepath.Join(dir, file)
			first, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(first), " hook "+client+`"`) {
				t.Fatalf("%s: %s %v", path, first, err)
			}
			run(t, "init", client, "--dir", dir)
			if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
				t.Fatal("a second init changed the file")
			}
			run(t, "uninstall", client, "--dir", dir)
			if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != "{}" {
				t.Fatalf("after uninstall: %s", b)
			}
		})
	}
}

// TestInitCodex writes Codex's hooks.json as Codex reads it: groups of
// command hooks, "*" for every tool, no matcher for every session source,
// the timeout in seconds; and it says the hook must be trusted in Codex.
func TestInitCodex(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), []string{"init", "codex", "--dir", dir}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("init codex: %d %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "trust") || !strings.Contains(out.String(), "/hooks") {
		t.Fatalf("init codex says nothing of trusting the hook: %s", out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, ".codex/hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Hooks) != 3 {
		t.Fatalf("events %v", file.Hooks)
	}
	// --user writes where Codex reads the user's hooks: $CODEX_HOME, else
	// ~/.codex.
	home, codexHome := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", codexHome)
	run(t, "init", "codex", "--user")
	if _, err := os.Stat(filepath.Join(codexHome, "hooks.json")); err != nil {
		t.Fatalf("not in CODEX_HOME: %v", err)
	}
	t.Setenv("CODEX_HOME", "")
	run(t, "init", "codex", "--user")
	if _, err := os.Stat(filepath.Join(home, ".codex", "hooks.json")); err != nil {
		t.Fatalf("not in ~/.codex: %v", err)
	}
	for ev, matcher := range map[string]string{"SessionStart": "", "PreToolUse": "*", "PostToolUse": "*"} {
		groups := file.Hooks[ev]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev, groups)
		}
		g, h := groups[0], groups[0].Hooks[0]
		if (matcher == "") != (g.Matcher == nil) || g.Matcher != nil && *g.Matcher != matcher {
			t.Errorf("%s: matcher %v, want %q", ev, g.Matcher, matcher)
		}
		if h.Type != "command" || h.Timeout != 5 || !strings.HasSuffix(h.Command, " hook codex") {
			t.Errorf("%s: %+v", ev, h)
		}
	}
}

// The help of hook, init and uninstall comes from the client table: every
// client, its events and its settings file.
func TestHelpNamesEveryClient(t *testing.T) {
	for _, cmd := range []string{"hook", "init", "uninstall"} {
		help := run(t, cmd, "--help")
		for _, c := range clients.All {
			if !strings.Contains(help, c.Name) {
				t.Errorf("veto %s --help does not name %s", cmd, c.Name)
			}
			want := c.Settings.Project
			if cmd == "hook" {
				want = strings.Join(c.EventNames(false), ", ")
			}
			if !strings.Contains(help, want) {
				t.Errorf("veto %s --help does not say %q for %s", cmd, want, c.Name)
			}
		}
	}
}

// TestInitWritesFailClosed: every entry init registers carries the
// client's fail-closed switch (Claude Code's onFailure, Cursor's
// failClosed), so a hook that cannot start, times out or exits oddly
// blocks the call; an entry an older veto wrote without it gains it.
func TestInitWritesFailClosed(t *testing.T) {
	for _, tc := range []struct {
		client, file, key string
		value             any
	}{
		{"claude-code", ".claude/settings.json", "onFailure", "block"},
		{"cursor", ".cursor/hooks.json", "failClosed", true},
	} {
		t.Run(tc.client, func(t *testing.T) {
			dir := t.TempDir()
			run(t, "init", tc.client, "--dir", dir)
			path := filepath.Join(dir, tc.file)
			b, _ := os.ReadFile(path)
			entries := hookEntries(decode(t, b))
			if len(entries) == 0 {
				t.Fatalf("no entries: %s", b)
			}
			for _, e := range entries {
				if e[tc.key] != tc.value {
					t.Fatalf("entry %v lacks %s: %v", e, tc.key, tc.value)
				}
			}
			// As an older veto wrote it: without the switch.
			old := strings.ReplaceAll(string(b), `"`+tc.key+`": `+jsonText(tc.value)+`,`, "")
			old = strings.ReplaceAll(old, `,
        "`+tc.key+`": `+jsonText(tc.value), "")
			if strings.Contains(old, tc.key) {
				t.Fatalf("could not remove the switch from %s", old)
			}
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, "init", tc.client, "--dir", dir)
			b, _ = os.ReadFile(path)
			for _, e := range hookEntries(decode(t, b)) {
				if e[tc.key] != tc.value {
					t.Fatalf("a second init left %v without %s", e, tc.key)
				}
			}
		})
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hookEntries are the command entries of a settings file, grouped or not.
func hookEntries(settings map[string]any) []map[string]any {
	var out []map[string]any
	hooks, _ := settings["hooks"].(map[string]any)
	for _, list := range hooks {
		items, _ := list.([]any)
		for _, item := range items {
			m, _ := item.(map[string]any)
			if inner, ok := m["hooks"].([]any); ok {
				for _, h := range inner {
					if hm, ok := h.(map[string]any); ok {
						out = append(out, hm)
					}
				}
				continue
			}
			out = append(out, m)
		}
	}
	return out
}

// Codex lets a call run when its hook cannot start or exits with anything
// but 2: init wraps veto's command in the guard, replaces an entry an
// older veto wrote without it, and uninstall removes the guarded entries.
// No other client's command is wrapped.
func TestInitGuardsCodex(t *testing.T) {
	dir := t.TempDir()
	run(t, "init", "codex", "--dir", dir)
	path := filepath.Join(dir, ".codex/hooks.json")
	b, _ := os.ReadFile(path)
	entries := hookEntries(decode(t, b))
	if len(entries) != 3 {
		t.Fatalf("entries: %s", b)
	}
	plain := ""
	for _, e := range entries {
		c, _ := e["command"].(string)
		if !strings.HasPrefix(c, clients.GuardPrefix) || !strings.HasSuffix(c, " hook codex") {
			t.Fatalf("an unguarded entry: %q", c)
		}
		plain = clients.Unguarded(c)
	}
	// As an older veto wrote it: the command alone.
	old := strings.ReplaceAll(string(b), clients.Guarded(plain), plain)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "init", "codex", "--dir", dir)
	b, _ = os.ReadFile(path)
	if entries := hookEntries(decode(t, b)); len(entries) != 3 {
		t.Fatalf("a second init: %s", b)
	}
	for _, e := range hookEntries(decode(t, b)) {
		if e["command"] != clients.Guarded(plain) {
			t.Fatalf("a second init left %v", e)
		}
	}
	run(t, "uninstall", "codex", "--dir", dir)
	if b, _ := os.ReadFile(path); len(hookEntries(decode(t, b))) != 0 {
		t.Fatalf("uninstall left %s", b)
	}
	for _, c := range clients.All {
		if c.Name == "codex" {
			continue
		}
		d := t.TempDir()
		run(t, "init", c.Name, "--dir", d)
		b, _ := os.ReadFile(filepath.Join(d, c.Settings.Project))
		if strings.Contains(string(b), "/bin/sh -c") {
			t.Errorf("%s: a guarded command: %s", c.Name, b)
		}
	}
}
