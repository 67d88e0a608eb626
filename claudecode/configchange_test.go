package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/claudecode"
)

const vetoProg = "/opt/veto bin/veto"

var programs = []string{vetoProg, "/opt/veto bin/veto-hook"}

// registration is the hooks veto init writes for Claude Code, with
// command, as JSON text read back (numbers as json.Number).
func registration(t *testing.T, command string) map[string]any {
	t.Helper()
	hooks := map[string]any{}
	for _, ev := range claudecode.Client.Events {
		timeout := "5"
		if ev.Timeout > 0 {
			timeout = "600"
		}
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command,
			"timeout": json.Number(timeout), "onFailure": "block"}}}
		if ev.Matcher != "" {
			group["matcher"] = ev.Matcher
		}
		hooks[ev.Name] = []any{group}
	}
	return roundTrip(t, map[string]any{"hooks": hooks, "permissions": map[string]any{"allow": []any{"Read"}}})
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// entry is the first entry veto registered for event in settings.
func entry(s map[string]any, event string) map[string]any {
	g := s["hooks"].(map[string]any)[event].([]any)[0].(map[string]any)
	return g["hooks"].([]any)[0].(map[string]any)
}

func group(s map[string]any, event string) map[string]any {
	return s["hooks"].(map[string]any)[event].([]any)[0].(map[string]any)
}

// TestConfigChangeRefusesAWeakenedRegistration: every way a change may
// leave veto's registration weaker than veto init writes it is named, and
// a change that keeps it whole (or keeps it whole in another layer) is not.
func TestConfigChangeRefusesAWeakenedRegistration(t *testing.T) {
	const cmd = "'/opt/veto bin/veto' hook claude-code"
	tests := []struct {
		name   string
		change func(project, user map[string]any) (map[string]any, map[string]any)
		want   string // a problem the judgement names; "" : none
	}{
		{"whole", func(p, u map[string]any) (map[string]any, map[string]any) { return p, u }, ""},
		{"another setting changed", func(p, u map[string]any) (map[string]any, map[string]any) {
			p["permissions"] = map[string]any{"allow": []any{"Read", "Edit"}}
			return p, u
		}, ""},
		{"veto-hook beside veto", func(p, u map[string]any) (map[string]any, map[string]any) {
			return registration(t, "'/opt/veto bin/veto-hook' claude-code"), u
		}, ""},
		{"a status line added", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["statusMessage"] = "veto"
			return p, u
		}, ""},
		{"removed from the project, whole in the user's", func(p, u map[string]any) (map[string]any, map[string]any) {
			return map[string]any{}, registration(t, cmd)
		}, ""},
		{"every hook removed", func(p, u map[string]any) (map[string]any, map[string]any) {
			delete(p, "hooks")
			return p, u
		}, "veto's PreToolUse hook is gone"},
		{"ConfigChange removed", func(p, u map[string]any) (map[string]any, map[string]any) {
			delete(p["hooks"].(map[string]any), "ConfigChange")
			return p, u
		}, "veto's ConfigChange hook is gone"},
		{"the command is not veto", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["command"] = "/bin/true"
			return p, u
		}, "PreToolUse hook is gone"},
		{"another veto-hook", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["command"] = "/tmp/x/veto-hook claude-code"
			return p, u
		}, "PreToolUse hook runs a command that is not this veto's"},
		{"another client's name", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["command"] = "'/opt/veto bin/veto' hook codex"
			return p, u
		}, "PreToolUse hook runs a command that is not this veto's"},
		{"veto wrapped in a shell", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["command"] = cmd + " || true"
			return p, u
		}, "PreToolUse hook runs a command that is not this veto's"},
		{"onFailure removed", func(p, u map[string]any) (map[string]any, map[string]any) {
			delete(entry(p, "PostToolUse"), "onFailure")
			return p, u
		}, `PostToolUse hook lost onFailure: "block"`},
		{"onFailure changed", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "SessionStart")["onFailure"] = "ignore"
			return p, u
		}, `SessionStart hook lost onFailure`},
		{"the timeout removed", func(p, u map[string]any) (map[string]any, map[string]any) {
			delete(entry(p, "PreToolUse"), "timeout")
			return p, u
		}, "PreToolUse hook has a timeout under the 5s"},
		{"the person's wait shortened", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PermissionRequest")["timeout"] = json.Number("5")
			return p, u
		}, "PermissionRequest hook has a timeout under the 10m0s"},
		{"a narrower matcher", func(p, u map[string]any) (map[string]any, map[string]any) {
			group(p, "PreToolUse")["matcher"] = "Bash"
			return p, u
		}, "PreToolUse hook matches fewer than every tool"},
		{"ConfigChange for one source only", func(p, u map[string]any) (map[string]any, map[string]any) {
			group(p, "ConfigChange")["matcher"] = "user_settings"
			return p, u
		}, "ConfigChange hook matches fewer than every source"},
		{"async", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["async"] = true
			return p, u
		}, "PreToolUse hook has the field async"},
		{"a condition", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["if"] = "Bash(rm *)"
			return p, u
		}, "PreToolUse hook has the field if"},
		{"another kind of hook", func(p, u map[string]any) (map[string]any, map[string]any) {
			entry(p, "PreToolUse")["type"] = "prompt"
			return p, u
		}, "PreToolUse hook is no longer a command hook"},
		{"every hook off in the local settings", func(p, u map[string]any) (map[string]any, map[string]any) {
			u["disableAllHooks"] = true
			return p, u
		}, "the user settings turn every hook off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project, user := tt.change(registration(t, cmd), map[string]any{})
			problems := claudecode.Weakened([]claudecode.Layer{
				{Source: "user_settings", Settings: roundTrip(t, user)},
				{Source: "project_settings", Settings: roundTrip(t, project)},
			}, programs)
			got := strings.Join(problems, "; ")
			switch {
			case tt.want == "" && got != "":
				t.Errorf("refused a change that keeps veto whole: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("problems %q, want one naming %q", got, tt.want)
			}
		})
	}
}

// TestConfigChangeHookReadsTheChangedFile: through Config, the file the
// event names is read for the new settings (a deleted file, a broken one,
// the copy Claude Code shows its hooks); the organisation's settings and
// skills pass; a refusal is exit 2 with the reason on stderr and never
// quotes the file.
func TestConfigChangeHookReadsTheChangedFile(t *testing.T) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		t.Fatal(err)
	}
	home, project := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	const canary = "sk-ant-api03-CONFIGCHANGE-CANARY"
	whole := registration(t, self+" hook claude-code")
	whole["env"] = map[string]any{"ANTHROPIC_API_KEY": canary}
	settings := filepath.Join(project, ".claude", "settings.json")
	write := func(path string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if s, ok := v.(string); ok {
			b = []byte(s)
		}
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(settings, whole)
	a := claudecode.Adapter{ProjectDir: project}
	tests := []struct {
		name, source, file string
		content            any // written to file first (nil: nothing written)
		block              bool
	}{
		{"the project's settings whole", "project_settings", settings, nil, false},
		{"the file names no file: the layer's own", "project_settings", "", nil, false},
		{"the project's settings deleted", "project_settings", filepath.Join(project, "gone.json"), nil, true},
		{"not JSON", "project_settings", filepath.Join(project, "broken.json"), `{"hooks": ` + canary, true},
		{"the copy shown to hooks drops veto", "project_settings", filepath.Join(project, ".claude", "settings.json.proposed"),
			map[string]any{"env": map[string]any{"ANTHROPIC_API_KEY": canary}}, true},
		{"the user's settings turn hooks off", "user_settings", filepath.Join(home, ".claude", "settings.json"),
			map[string]any{"disableAllHooks": true}, true},
		{"the local settings add a setting", "local_settings", filepath.Join(project, ".claude", "settings.local.json"),
			map[string]any{"model": "x"}, false},
		{"the organisation's settings cannot be blocked", "policy_settings", filepath.Join(project, "gone.json"), nil, false},
		{"skills are not settings", "skills", filepath.Join(project, "gone.json"), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.content != nil {
				write(tt.file, tt.content)
				defer os.Remove(tt.file)
			}
			r := a.Config(&agent.Event{Kind: agent.Config, Session: "s1", Cwd: project, ConfigSource: tt.source, ConfigFile: tt.file})
			switch {
			case !tt.block && (r.Exit != 0 || r.Stdout != "" || r.Stderr != ""):
				t.Errorf("blocked a change that keeps veto whole: %+v", r)
			case tt.block && (r.Exit != 2 || !strings.Contains(r.Stderr, claudecode.ReasonRegistration)):
				t.Errorf("reply %+v, want exit 2 with %s on stderr", r, claudecode.ReasonRegistration)
			}
			if strings.Contains(r.Stderr+r.Stdout, canary) {
				t.Errorf("the reply quotes the settings file: %q", r.Stderr)
			}
		})
	}
}
