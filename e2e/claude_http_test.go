package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		initArgs: []string{"--url", url, "--http"},
		setup: func(t *testing.T, s *sandbox) {
			describeNotes(t, s)
			code, out, errOut := s.veto("token", "create", "--actor", "agent:claude-code")
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
			spec.Serve = []string{filepath.Join(s.bin, "veto"), "serve", "--listen", strings.TrimPrefix(url, "http://"), "--workspace-root", s.ws}
			spec.ServeEnv = s.env()
			spec.Canaries["the service's token"] = token
			return spec
		},
		failIsError: true, sharedIDs: true})
}

// TestClaudeCodeHTTPHookFailsClosed: with veto serve's HTTP hook
// registered, the call is blocked when the service is not there (onFailure
// block, which init writes), when the request carries no valid token, and
// when the service's state is damaged; the client never lets it run.
func TestClaudeCodeHTTPHookFailsClosed(t *testing.T) {
	need(t)
	node := clients(t)
	const addr = "127.0.0.1:8181"
	cases := []struct {
		name  string
		serve bool   // veto serve runs in the namespace
		token string // "good", "" or a wrong one
		setup func(t *testing.T, s *sandbox)
		says  string
	}{
		{name: "the service is not running", serve: false, token: "good"},
		{name: "no token", serve: true, token: "", says: "unauthenticated"},
		{name: "a token the service does not know", serve: true, token: "veto_notatoken", says: "unauthenticated"},
		{name: "the service's state is damaged", serve: true, token: "good", says: "damaged", setup: func(t *testing.T, s *sandbox) {
			// The service opens the state at start; its file is garbage.
			p := filepath.Join(s.state, "veto", "veto.db")
			if err := os.WriteFile(p, []byte(strings.Repeat("not a database ", 300)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	var rows []row
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t)
			if code, out, errOut := s.veto("init", "claude-code", "--url", "http://"+addr, "--http"); code != 0 {
				t.Fatalf("veto init --url: exit %d\n%s%s", code, out, errOut)
			}
			tok := c.token
			if tok == "good" {
				code, out, errOut := s.veto("token", "create", "--actor", "agent:claude-code")
				if code != 0 {
					t.Fatalf("veto token create: %s", errOut)
				}
				tok = strings.TrimSpace(out)
			}
			if c.setup != nil {
				c.setup(t, s)
			}
			marker := filepath.Join(s.ws, "failclosed.txt")
			call := writeFile("Write")(marker)
			call.Name = c.name
			spec := claudeRun(t, s, node, []Call{call})
			spec.Env = append(spec.Env, "VETO_TOKEN="+tok)
			if c.serve {
				spec.Serve = []string{filepath.Join(s.bin, "veto"), "serve", "--listen", addr, "--workspace-root", s.ws}
				spec.ServeEnv = s.env()
			}
			o := play(t, spec)
			s.finish()
			r, answered := o.Results[callID(0)]
			_, err := os.Stat(marker)
			ran := err == nil
			verdict := "blocked"
			if ran {
				verdict = "RAN"
			}
			rows = append(rows, row{n: i + 1, tool: call.Tool, verdict: verdict, ran: ran,
				why: fmt.Sprintf("exit %d, %s", o.Exit, o.Duration.Round(100*time.Millisecond)), name: c.name})
			t.Logf("the model got (is_error %v): %.500s", r.IsError, r.Content)
			switch {
			case ran:
				t.Errorf("the call ran")
			case !answered:
				t.Logf("no result reached the endpoint; exit %d\nstderr: %.2000s", o.Exit, o.Stderr)
			case !r.IsError:
				t.Errorf("the call did not run, yet the result is not a refusal: %.300s", r.Content)
			case c.says != "" && !strings.Contains(r.Content, c.says):
				t.Errorf("the model's result does not say %q", c.says)
			}
			if strings.Contains(r.Content, tok) && tok != "" {
				t.Errorf("the model got the token")
			}
		})
	}
	printTable("Claude Code (HTTP hook), fail closed", rows, fmt.Sprintf(" (%d cases)", len(rows)))
}
