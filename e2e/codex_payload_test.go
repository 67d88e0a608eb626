package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCodexPayloads logs the hook events the real Codex sends, as a second
// hook next to veto's writes them (one file an event, under the sandbox):
// what a failed command's PostToolUse holds, and whether an apply_patch
// run through exec_command sends one at all. It checks only that veto's
// verdicts held; the payloads are in the log (-v) for the adapter's tests.
func TestCodexPayloads(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "codex"); code != 0 {
		t.Fatalf("veto init codex: exit %d\n%s%s", code, out, errOut)
	}
	codexUser(t, s)
	logDir := filepath.Join(s.root, "events")
	os.MkdirAll(logDir, 0o755)
	hooksPath := filepath.Join(s.ws, ".codex", "hooks.json")
	b, err := os.ReadFile(hooksPath)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	hooks := file["hooks"].(map[string]any)
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		logger := map[string]any{"type": "command", "timeout": 5,
			"command": "cat > \"$(mktemp " + filepath.Join(logDir, ev+".XXXXXX") + ")\""}
		hooks[ev] = append(hooks[ev].([]any), map[string]any{"matcher": "*", "hooks": []any{logger}})
	}
	b, _ = json.MarshalIndent(file, "", "  ")
	if err := os.WriteFile(hooksPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := []Call{
		{Name: "a command that fails", Tool: "exec_command", Input: json.RawMessage(`{"cmd": "ls no-such-directory"}`)},
		{Name: "a command that succeeds", Tool: "exec_command", Input: json.RawMessage(`{"cmd": "echo fine"}`)},
		{Name: "write a new file (apply_patch)", Tool: "exec_command",
			Input: json.RawMessage(`{"cmd": "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: NOTES.md\n+# Notes\n*** End Patch\nPATCH"}`)},
	}
	o := play(t, codexRun(t, s, node, calls))
	s.finish()
	for i := range calls {
		r := o.Results[callID(i)]
		t.Logf("%s: the model got (is_error %v): %.300q", calls[i].Name, r.IsError, r.Content)
	}
	entries, _ := os.ReadDir(logDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(logDir, n))
		var ev map[string]any
		json.Unmarshal(b, &ev)
		delete(ev, "transcript_path")
		out, _ := json.Marshal(map[string]any{"event": ev["hook_event_name"], "tool": ev["tool_name"],
			"input": ev["tool_input"], "response": ev["tool_response"], "keys": keys(ev)})
		t.Logf("%s: %s", strings.SplitN(n, ".", 2)[0], out)
	}
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
