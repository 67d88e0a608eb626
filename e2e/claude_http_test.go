package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeCodeHTTPHook plays Claude Code's scenarios with veto as a
// service: veto init claude-code --url registers veto serve's HTTP hook,
// and veto serve, started in the client's network namespace on the
// sandbox's state, answers every hook. The same calls run or are refused
// with veto's reason as through the command hook, and veto log records
// each decision and observation once.
func TestClaudeCodeHTTPHook(t *testing.T) {
	need(t)
	node := clients(t)
	const url = "http://127.0.0.1:8181"
	var token string
	playScenarios(t, clientRun{display: "Claude Code (HTTP hook)", name: "claude-code", file: "claude-code.json",
		initArgs: []string{"--url", url},
		setup: func(t *testing.T, s *sandbox) {
			describeNotes(t, s)
			code, out, errOut := s.veto("token", "create", "--actor", "user:e2e")
			if code != 0 {
				t.Fatalf("veto token create: exit %d: %s", code, errOut)
			}
			token = strings.TrimSpace(out)
		},
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec {
			// Claude's settings name veto serve's endpoint now, not veto-hook.
			for i := range calls {
				if calls[i].Output == "veto-hook" {
					calls[i].Output = "/v1/hooks/claude-code"
				}
			}
			spec := claudeRun(t, s, node, calls)
			spec.Env = append(spec.Env, "VETO_TOKEN="+token)
			spec.Serve = []string{filepath.Join(s.bin, "veto"), "serve", "--listen", strings.TrimPrefix(url, "http://")}
			spec.ServeEnv = s.env()
			spec.Canaries["the service's token"] = token
			return spec
		},
		failIsError: true, sharedIDs: true})
}
