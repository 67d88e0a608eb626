package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// claudeRun is the spec of one Claude Code run in the sandbox.
func claudeRun(t *testing.T, s *sandbox, node string, calls []Call) runSpec {
	claude := filepath.Join(node, "node_modules", ".bin", "claude")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mcp, _ := json.Marshal(map[string]any{"mcpServers": mcpServers(self)})
	s.write("mcp.json", string(mcp), 0o644)
	return runSpec{
		Program: claude,
		Args: []string{"-p", "go", "--dangerously-skip-permissions", "--max-turns", "60",
			"--mcp-config", filepath.Join(s.root, "mcp.json"), "--strict-mcp-config"},
		Env: append(s.env(),
			"ANTHROPIC_API_KEY="+s.apiKey,
			"IS_SANDBOX=1", // --dangerously-skip-permissions as root
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		Dir:      s.ws,
		BaseEnv:  "ANTHROPIC_BASE_URL",
		API:      "anthropic",
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  3 * time.Minute,
	}
}

// TestClaudeCode plays the scenarios in the real Claude Code: what ran,
// what was refused with veto's reason, the world after, veto's log.
func TestClaudeCode(t *testing.T) {
	need(t)
	node := clients(t)
	playScenarios(t, clientRun{display: "Claude Code", name: "claude-code", file: "claude-code.json",
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return claudeRun(t, s, node, calls) },
		setup: describeNotes, failIsError: true, sharedIDs: true})
}
