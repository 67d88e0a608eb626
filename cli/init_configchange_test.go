package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/cli"
)

// settingsLayer reads a settings file as the ConfigChange judgement does.
func settingsLayer(t *testing.T, path string) claudecode.Layer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return claudecode.Layer{Source: "project_settings", Settings: m}
}

// TestInitRegistersWhatConfigChangeKeeps: what veto init claude-code
// writes, ConfigChange among it, is the registration ConfigChange holds
// whole; what veto uninstall leaves is one it refuses mid-session; and
// veto doctor names a registration without ConfigChange.
func TestInitRegistersWhatConfigChangeKeeps(t *testing.T) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		t.Fatal(err)
	}
	programs := []string{self, filepath.Join(filepath.Dir(self), "veto-hook")}
	dir := t.TempDir()
	// doctor looks at the state, the policy and the hook server too: the
	// test's own.
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		t.Setenv(k, filepath.Join(dir, "env", k))
	}
	t.Setenv("VETO_STATE", filepath.Join(dir, "veto.db"))
	path := filepath.Join(dir, ".claude", "settings.json")
	out := run(t, "init", "claude-code", "--dir", dir)
	if !strings.Contains(out, "ConfigChange") {
		t.Errorf("init does not say it registers ConfigChange: %s", out)
	}
	if p := claudecode.Weakened([]claudecode.Layer{settingsLayer(t, path)}, programs); len(p) > 0 {
		t.Errorf("init's registration is weakened: %v", p)
	}

	// Without ConfigChange (an older init), doctor says so. The program
	// is one that does not exist, so that doctor probes nothing.
	l := settingsLayer(t, path)
	delete(l.Settings["hooks"].(map[string]any), "ConfigChange")
	b, _ := json.Marshal(l.Settings)
	os.WriteFile(path, bytes.ReplaceAll(b, []byte(self), []byte("/nonexistent/veto")), 0o644)
	var stdout, stderr bytes.Buffer
	cli.Main(context.Background(), []string{"doctor", "claude-code", "--dir", dir}, strings.NewReader(""), &stdout, &stderr)
	if !strings.Contains(stdout.String(), "veto is not registered for ConfigChange") {
		t.Errorf("doctor does not name the missing ConfigChange:\n%s", stdout.String())
	}

	run(t, "init", "claude-code", "--dir", dir)
	run(t, "uninstall", "claude-code", "--dir", dir)
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "ConfigChange") {
		t.Errorf("uninstall left ConfigChange: %s", b)
	}
	p := claudecode.Weakened([]claudecode.Layer{settingsLayer(t, path)}, programs)
	if !strings.Contains(strings.Join(p, "; "), "veto's ConfigChange hook is gone") {
		t.Errorf("after uninstall, ConfigChange would let the change in mid-session: %v", p)
	}
}
