package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudeCodeInteractiveAsksOnThePage: an interactive Claude Code
// session (in a pseudo-terminal, under bypassPermissions) meets a call
// veto's policy asks a person about. Claude Code's own prompt shows veto's
// question; veto's PermissionRequest hook waits for the page; the person
// approves it on the page in Chromium, and the call runs, once, allowed by
// that approval. Nobody touches the terminal.
func TestClaudeCodeInteractiveAsksOnThePage(t *testing.T) {
	need(t, "script", "setsid")
	chrome := chromiumPath(t)
	s, first, _, notes := askingSession(t)
	// The throw-away HOME has been through Claude Code's first-run screens.
	key := s.apiKey[len(s.apiKey)-20:]
	cj, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":              map[string]any{s.ws: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
	s.write("home/.claude.json", string(cj), 0o600)
	// The session runs in a pseudo-terminal until the call has run and
	// been reported, or 120 s; then its process group is stopped.
	screen := filepath.Join(s.root, "screen.txt")
	cmd := shellQuote(first.Program) + " --dangerously-skip-permissions --mcp-config " + shellQuote(filepath.Join(s.root, "mcp.json")) +
		" --strict-mcp-config go"
	s.write("bin/interactive", "#!/bin/sh\n"+
		"exec >/dev/null 2>&1\n"+ // nothing left behind holds the harness's pipes
		"sleep 150 | setsid script -qfec "+shellQuote(cmd)+" "+shellQuote(screen)+" >/dev/null 2>&1 &\n"+
		"pid=$!\n"+
		"for i in $(seq 240); do [ -f "+shellQuote(notes)+" ] && break; sleep 0.5; done\n"+
		"sleep 3\n"+
		"kill -TERM -- -$pid 2>/dev/null; sleep 1; kill -KILL -- -$pid 2>/dev/null\n"+
		// Claude Code runs in the session script made for the terminal, out
		// of reach of the group above, and outlived it by hours.
		"pkill -KILL -f "+shellQuote(filepath.Join(s.root, "mcp.json"))+" 2>/dev/null\n"+
		"exit 0\n", 0o755)
	spec := first
	spec.Program, spec.Args = filepath.Join(s.bin, "interactive"), nil
	spec.Env = append(spec.Env, "TERM=xterm-256color")
	spec.Timeout = 4 * time.Minute

	type result struct {
		o   outcome
		err error
	}
	played := make(chan result, 1)
	dir := t.TempDir()
	go func() {
		o, err := playIn(dir, spec)
		played <- result{o, err}
	}()
	wait := func() outcome {
		r := <-played
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.o
	}
	// The question is on record once Claude Code's prompt shows it.
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, out, _ := s.veto("approve"); strings.Contains(out, callID(0)) {
			break
		}
		if time.Now().After(deadline) {
			o := wait()
			b, _ := os.ReadFile(screen)
			t.Fatalf("no question on record; exit %d\n%s\nscreen: %.3000s", o.Exit, o.Stderr, clean(b))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("the call ran before anyone answered")
	}
	answerOnPage(t, s, chrome, callID(0), "approve")
	o := wait()
	b, _ := os.ReadFile(notes)
	screenText, _ := os.ReadFile(screen)
	if string(b) != "ran\n" {
		t.Fatalf("approved on the page, the call did not run (%q)\nscreen: %.3000s", b, clean(screenText))
	}
	if r, ok := o.Results[callID(0)]; !ok || r.IsError {
		t.Fatalf("the model got %+v", r)
	}
	shown := clean(screenText)
	for _, want := range []string{"veto asks a person", "release_needs_person", "Allowed by PermissionRequest hook"} {
		if !strings.Contains(shown, strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the terminal did not show %q:\n%.3000s", want, shown)
		}
	}
	s.finish()
	byCall, text := vetoLog(t, s)
	var questions, allows, observations int
	for _, e := range byCall[callID(0)] {
		switch {
		case e.Kind == "invocation_denied" && e.Awaiting == "approval":
			questions++
		case e.Kind == "invocation_allowed" && e.Approval > 0:
			allows++
		case e.Kind == "observation" && e.Outcome == "succeeded":
			observations++
		}
	}
	if questions != 1 || allows != 1 || observations != 1 {
		t.Errorf("veto log: %d questions, %d allows by approval, %d observations; want one each\n%s", questions, allows, observations, text)
	}
	printTable("Claude Code interactive, a call that waits for a person", []row{
		{n: 1, tool: "Write", verdict: "asks", name: "Claude Code's prompt shows veto's question; veto's PermissionRequest hook waits"},
		{n: 2, tool: "Write", verdict: "approved", name: "approved on veto's page (Chromium)"},
		{n: 3, tool: "Write", verdict: "allowed", ran: true, name: "the hook answers allow: ran once, nobody at the terminal"},
	}, "")
}

// clean is a terminal's output without its escape sequences and spaces
// (the screen is drawn with cursor moves, not spaces).
func clean(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[':
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
		case b[i] == 0x1b && i+1 < len(b) && b[i+1] == ']':
			j := i + 2
			for j < len(b) && b[j] != 0x07 {
				j++
			}
			i = j
		case b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t':
		default:
			out.WriteByte(b[i])
		}
	}
	return out.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
