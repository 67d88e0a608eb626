package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// geminiRun is the spec of one Gemini CLI run in the sandbox: headless,
// every tool approved by Gemini CLI itself (--yolo), so veto alone decides.
func geminiRun(t *testing.T, s *sandbox, node string, calls []Call) runSpec {
	return runSpec{
		Program: "node",
		Args: []string{filepath.Join(node, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"), "-p", "go", "--yolo", "-m", "gemini-2.5-flash",
			// HOME is in the workspace, so that Gemini CLI's own
			// workspace check lets calls on ~/.ssh and ~/.bash_profile
			// through to veto.
			"--include-directories", s.home},
		Env: append(s.env(),
			"GEMINI_API_KEY="+s.apiKey,
			"GEMINI_CLI_TRUST_WORKSPACE=true", // headless exits 55 in an untrusted folder
			"GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=true", "CI=1"),
		Dir:      s.ws,
		BaseEnv:  "GOOGLE_GEMINI_BASE_URL",
		API:      "gemini",
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  3 * time.Minute,
	}
}

// geminiUser writes the user's settings Gemini CLI needs to talk to the
// endpoint with an API key, nothing sent elsewhere, and the notes MCP
// server.
func geminiUser(t *testing.T, s *sandbox) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.MarshalIndent(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
		"mcpServers": mcpServers(self),
	}, "", "  ")
	s.write("home/.gemini/settings.json", string(settings)+"\n", 0o644)
}

// TestGeminiCLI plays the scenarios in the real Gemini CLI.
func TestGeminiCLI(t *testing.T) {
	need(t, "node")
	node := clients(t)
	playScenarios(t, clientRun{display: "Gemini CLI", name: "gemini-cli", file: "gemini-cli.json",
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return geminiRun(t, s, node, calls) },
		setup: func(t *testing.T, s *sandbox) { geminiUser(t, s); describeNotes(t, s) }})
}
