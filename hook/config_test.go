package hook_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/hook"
)

// TestConfigChangeNeedsNeitherPolicyNorState: Claude Code's ConfigChange
// is judged from the settings alone. With a state that cannot open, a
// change that leaves veto unregistered is still blocked (exit 2), one of
// the organisation's settings still passes, and an event veto cannot read
// blocks the change.
func TestConfigChangeNeedsNeitherPolicyNorState(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	event := func(fields map[string]string) string {
		b, _ := json.Marshal(fields)
		return string(b)
	}
	gone := filepath.Join(dir, "project", ".claude", "settings.json")
	tests := []struct {
		name, event string
		exit        int
	}{
		{"veto's hooks gone", event(map[string]string{"session_id": "s1", "hook_event_name": "ConfigChange", "cwd": dir,
			"source": "project_settings", "file_path": gone}), 2},
		{"the organisation's settings", event(map[string]string{"session_id": "s1", "hook_event_name": "ConfigChange", "cwd": dir,
			"source": "policy_settings", "file_path": gone}), 0},
		{"no session", event(map[string]string{"hook_event_name": "ConfigChange", "source": "project_settings"}), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := hook.Reply(context.Background(), claudecode.Adapter{ProjectDir: filepath.Join(dir, "project")},
				strings.NewReader(tt.event), hook.Options{State: filepath.Join(dir, "no", "such", "dir", "veto.db"), Timeout: 2 * time.Second})
			if r.Exit != tt.exit {
				t.Errorf("exit %d, want %d (stderr %q)", r.Exit, tt.exit, r.Stderr)
			}
		})
	}
}
