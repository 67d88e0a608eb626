package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// copilotRun is the spec of one Copilot CLI run in the sandbox: BYOK mode
// (COPILOT_PROVIDER_BASE_URL, the Anthropic Messages API), offline (no
// GitHub sign-in, nothing sent to GitHub), every tool allowed so that
// veto alone decides.
func copilotRun(t *testing.T, s *sandbox, node string, calls []Call) runSpec {
	copilot := filepath.Join(node, "node_modules", ".bin", "copilot")
	return runSpec{
		Program: copilot,
		Args:    []string{"-p", "go", "--allow-all-tools", "--allow-all-paths", "--no-color"},
		Env: append(s.env(), "COPILOT_PROVIDER_TYPE=anthropic", "COPILOT_PROVIDER_API_KEY="+s.apiKey,
			"COPILOT_MODEL=claude-sonnet-4", "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false"),
		Dir:      s.ws,
		BaseEnv:  "COPILOT_PROVIDER_BASE_URL",
		API:      "anthropic",
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  3 * time.Minute,
	}
}

// copilotUser trusts the workspace, without which Copilot CLI loads no
// project hooks: trusted_folders in its config.json (~/.copilot, or under
// XDG_CONFIG_HOME, which the sandbox sets).
func copilotUser(t *testing.T, s *sandbox) {
	cfg := fmt.Sprintf(`{"trusted_folders": [%q], "auto_update": false}`, s.ws)
	s.write("home/.copilot/config.json", cfg, 0o644)
	s.write("config/.copilot/config.json", cfg, 0o644)
	s.write("config/copilot/config.json", cfg, 0o644)
}

// TestCopilotCLIPayloads logs the hook events the real Copilot CLI sends,
// as a second hook next to veto's writes them, and what the model got.
func TestCopilotCLIPayloads(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "copilot-cli"); code != 0 {
		t.Fatalf("veto init: exit %d\n%s%s", code, out, errOut)
	}
	copilotUser(t, s)
	logDir := filepath.Join(s.root, "events")
	os.MkdirAll(logDir, 0o755)
	p := filepath.Join(s.ws, ".github", "hooks", "log.json")
	var hooks []string
	for _, ev := range []string{"sessionStart", "preToolUse", "postToolUse"} {
		hooks = append(hooks, fmt.Sprintf(`%q: [{"type": "command", "bash": %q, "timeoutSec": 5}]`, ev,
			"cat > \"$(mktemp "+filepath.Join(logDir, ev+".XXXXXX")+")\""))
	}
	s.write(strings.TrimPrefix(p, s.root+"/"), `{"version": 1, "hooks": {`+strings.Join(hooks, ", ")+`}}`, 0o644)
	calls := []Call{
		{Name: "a command that succeeds", Tool: "bash", Input: json.RawMessage(`{"command": "echo fine", "description": "Say fine"}`)},
		{Name: "a command that fails", Tool: "bash", Input: json.RawMessage(`{"command": "ls no-such-directory", "description": "List a directory that is not there"}`)},
		{Name: "read the README", Tool: "view", Input: json.RawMessage(`{"path": "` + s.ws + `/README.md"}`)},
		{Name: "write a new file", Tool: "create", Input: json.RawMessage(`{"path": "` + s.ws + `/NOTES.md", "file_text": "# Notes\n"}`)},
		{Name: "read an SSH private key", Tool: "view", Input: json.RawMessage(`{"path": "` + s.home + `/.ssh/id_rsa"}`)},
	}
	o := play(t, copilotRun(t, s, node, calls))
	s.finish()
	t.Logf("exit %d in %s; the tools offered, with their arguments (* required): %v\nstdout %.1000s\nstderr %.1000s",
		o.Exit, o.Duration, o.Schemas, o.Stdout, o.Stderr)
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
		t.Logf("%s: %.1500s", n, b)
	}
	_, _, log := s.veto("log", "--json")
	t.Logf("veto log: %.4000s", log)
}

// TestCopilotCLI plays the scenarios in the real Copilot CLI.
func TestCopilotCLI(t *testing.T) {
	need(t)
	node := clients(t)
	playScenarios(t, clientRun{display: "Copilot CLI", name: "copilot-cli", file: "copilot-cli.json",
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return copilotRun(t, s, node, calls) },
		setup: copilotUser, denied: copilotDenied})
}

// copilotDenied starts what Copilot CLI 1.0.102 hands the model for a
// call a hook refused: a result, not an error. A hook that fails (cannot
// start, exits non-zero) refuses too: "Denied by preToolUse hook from
// FILE (hook errored)".
const copilotDenied = "Denied by preToolUse hook"

// TestCopilotCLIFailsClosed breaks veto each way under the real Copilot
// CLI: 1.0.102 refuses the call on a hook that errors (a missing program,
// a usage error), so every failure blocks; a hook that hangs past the
// timeout (not veto: a program that sleeps) lets it run.
func TestCopilotCLIFailsClosed(t *testing.T) {
	need(t)
	node := clients(t)
	cr := clientRun{display: "Copilot CLI", name: "copilot-cli", setup: copilotUser, denied: copilotDenied,
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec { return copilotRun(t, s, node, calls) }}
	write := func(marker string) Call {
		return Call{Tool: "create", Input: json.RawMessage(fmt.Sprintf(`{"path": %q, "file_text": "ran\n"}`, marker))}
	}
	failClosed(t, cr, write, nil, failure{name: "a hook that hangs past the client's 1 s timeout",
		control: "Copilot CLI lets the call run when a hook outlives its timeout: veto's budget, half of it, is what comes first",
		setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
			s.write("bin/hang", "#!/bin/sh\nexec sleep 30\n", 0o755)
			editSettings(t, s, cr, `"timeoutSec": 5,`, `"timeoutSec": 1,`)
			editSettings(t, s, cr, "veto-hook "+cr.name, "hang "+cr.name)
			return nil
		}})
}
