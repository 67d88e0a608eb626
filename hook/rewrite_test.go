package hook_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/hook"
)

// A Bash call the analyzer cannot vouch for reaches Claude Code allowed
// with its command rewritten to run under veto exec (updatedInput), when
// this process can start veto exec; refused with exit 2 when it cannot.
func TestClaudeCodeGetsTheCommandUnderVetoExec(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	t.Setenv("CLAUDE_PROJECT_DIR", ws)
	state := filepath.Join(dir, "state", "veto.db")
	event := func(id string) *strings.Reader {
		b, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]any{"command": `eval "$BUILD_STEP"`, "description": "build"}, "tool_use_id": id})
		return strings.NewReader(string(b))
	}
	a := claudecode.Adapter{ProjectDir: ws}
	r, err := hook.Reply(context.Background(), a, event("t1"), hook.Options{State: state, Supervisor: []string{"/opt/veto/veto", "exec"}})
	if err != nil || r.Exit != 0 {
		t.Fatalf("exit %d, %v: %s", r.Exit, err, r.Stderr)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName string         `json:"hookEventName"`
			UpdatedInput  map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("stdout %q: %v", r.Stdout, err)
	}
	want := `/opt/veto/veto exec --state ` + state + ` --run s1 -- bash -c 'eval "$BUILD_STEP"'`
	if out.HookSpecificOutput.HookEventName != "PreToolUse" || out.HookSpecificOutput.UpdatedInput["command"] != want ||
		out.HookSpecificOutput.UpdatedInput["description"] != "build" {
		t.Fatalf("reply %s; want the command %s", r.Stdout, want)
	}
	r, _ = hook.Reply(context.Background(), a, event("t2"), hook.Options{State: state})
	if r.Exit != 2 || !strings.Contains(r.Stderr, "cannot_vouch") {
		t.Fatalf("without a supervisor: exit %d, %q", r.Exit, r.Stderr)
	}
}
