package cli_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// veto init claude-code --mcp puts veto mcp in front of every stdio
// server of the project's .mcp.json, under the server's own name, keeping
// everything else; uninstall --mcp gives each its command back.
func TestInitClaudeCodeMCP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	const original = `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/project"], "env": {"DEBUG": "1"}},
    "memory": {"type": "stdio", "command": "mcp-server-memory"},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
  },
  "other": {"kept": true}
}`
	os.WriteFile(path, []byte(original), 0o644)
	base := decode(t, []byte(original))

	run(t, "init", "claude-code", "--mcp", "--dir", dir)
	b, _ := os.ReadFile(path)
	got := decode(t, b)
	servers := got["mcpServers"].(map[string]any)
	fs := servers["filesystem"].(map[string]any)
	args := fs["args"].([]any)
	want := []any{"mcp", "--name", "filesystem", "--actor", "agent:claude-code", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/project"}
	if !reflect.DeepEqual(args, want) || fs["command"] == "npx" || !reflect.DeepEqual(fs["env"], map[string]any{"DEBUG": "1"}) {
		t.Fatalf("filesystem: %v", fs)
	}
	if m := servers["memory"].(map[string]any); m["command"] == "mcp-server-memory" {
		t.Fatalf("memory not wrapped: %v", m)
	}
	if !reflect.DeepEqual(servers["remote"], base["mcpServers"].(map[string]any)["remote"]) || !reflect.DeepEqual(got["other"], base["other"]) {
		t.Fatalf("what is not a stdio server changed: %v", got)
	}

	run(t, "init", "claude-code", "--mcp", "--dir", dir) // a second init changes nothing
	b2, _ := os.ReadFile(path)
	if !reflect.DeepEqual(decode(t, b2), got) {
		t.Fatal("a second init changed the file")
	}

	run(t, "uninstall", "claude-code", "--mcp", "--dir", dir)
	b, _ = os.ReadFile(path)
	if back := decode(t, b); !reflect.DeepEqual(back, base) {
		t.Fatalf("uninstall does not restore the file:\n got %v\nwant %v", back, base)
	}
}
