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

// captureClaudeHooks adds, beside veto's, a hook to each event of the
// project's .claude/settings.json that writes the payload it gets to a
// file of its own in dir, before veto's: what a client that reads Claude Code's
// settings hands a Claude Code hook.
func captureClaudeHooks(t *testing.T, s *sandbox, dir string) {
	t.Helper()
	p := filepath.Join(s.ws, ".claude", "settings.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var settings map[string]any
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for ev, groups := range hooks {
		list, _ := groups.([]any)
		// First: a client that stops at the first hook that refuses still
		// runs it.
		hooks[ev] = append([]any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "timeout": 5,
			"command": "cat > \"$(mktemp " + filepath.Join(dir, ev) + ".$(date +%s%N).XXXXXX)\""}}}}, list...)
	}
	b, _ = json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// captured logs the payloads captureClaudeHooks wrote, and returns them
// by event.
func captured(t *testing.T, dir string) map[string][]string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	got := map[string][]string{}
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		ev, _, _ := strings.Cut(n, ".")
		got[ev] = append(got[ev], string(b))
		t.Logf("%s: %.1500s", n, b)
	}
	return got
}

// TestCopilotCLIReadsClaudeHooks: a project with veto init claude-code
// only, played in the real Copilot CLI 1.0.102, which runs the hooks of
// .claude/settings.json too: veto decides each call once, as Copilot
// CLI's (its actor, its session, its tool names), the allowed ones run and
// are observed, a refused one is blocked with veto's reason.
func TestCopilotCLIReadsClaudeHooks(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-code"); code != 0 {
		t.Fatalf("veto init: exit %d\n%s%s", code, out, errOut)
	}
	copilotUser(t, s)
	dir := filepath.Join(s.root, "payloads")
	captureClaudeHooks(t, s, dir)
	calls := []Call{
		{Name: "a command that succeeds", Tool: "bash", Input: json.RawMessage(`{"command": "echo fine", "description": "Say fine"}`)},
		{Name: "read the README", Tool: "view", Input: json.RawMessage(`{"path": "` + s.ws + `/README.md"}`)},
		{Name: "read an SSH private key", Tool: "view", Input: json.RawMessage(`{"path": "` + s.home + `/.ssh/id_rsa"}`)},
	}
	o := play(t, copilotRun(t, s, node, calls))
	s.finish()
	t.Logf("exit %d in %s\nstdout %.1000s\nstderr %.1000s", o.Exit, o.Duration, o.Stdout, o.Stderr)
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	got := captured(t, dir)
	if len(got["PreToolUse"]) != len(calls) {
		t.Errorf("Copilot CLI ran .claude/settings.json's PreToolUse hook %d times, want %d", len(got["PreToolUse"]), len(calls))
	}
	byCall, _ := vetoLog(t, s)
	decided := inOrder(byCall, isDecision)
	observed := inOrder(byCall, func(k string) bool { return k == "observation" })
	want := []struct{ verdict, output string }{{"invocation_allowed", "fine"}, {"invocation_allowed", "e2e project"}, {"invocation_denied", "file.credential"}}
	if len(decided) != len(calls) {
		t.Fatalf("veto log holds %d decisions, want %d (one a call): %+v", len(decided), len(calls), decided)
	}
	var rows []row
	for i, c := range calls {
		d, r := decided[i], o.Results[callID(i)]
		t.Logf("%s: the model got (is_error %v): %.300q", c.Name, r.IsError, r.Content)
		rw := row{n: i + 1, tool: c.Tool, verdict: map[bool]string{true: "allow", false: "DENY"}[d.Kind == "invocation_allowed"], name: c.Name}
		if d.Rule != "" {
			rw.why = d.Rule + "/" + d.Reason
		}
		if d.Kind != want[i].verdict || d.Tool != c.Tool || d.Actor.ID != "copilot-cli" {
			t.Errorf("#%d %s: decided %s of %s as %s, want %s of %s as copilot-cli", i+1, c.Name, d.Kind, d.Tool, d.Actor.ID, want[i].verdict, c.Tool)
		}
		if !strings.Contains(r.Content, want[i].output) {
			t.Errorf("#%d %s: the model got %.300q, want it to hold %q", i+1, c.Name, r.Content, want[i].output)
		}
		if d.Kind == "invocation_denied" && !strings.HasPrefix(r.Content, copilotDenied+": veto blocked this view call") {
			t.Errorf("#%d %s: veto's reason did not reach the model: %.300q", i+1, c.Name, r.Content)
		}
		for _, ob := range observed {
			if ob.CallID == d.CallID {
				rw.ran, rw.outcome = true, ob.Outcome
			}
		}
		if rw.ran != (d.Kind == "invocation_allowed") {
			t.Errorf("#%d %s: observed %v, want it observed when allowed", i+1, c.Name, rw.ran)
		}
		rows = append(rows, rw)
	}
	printTable("Copilot CLI with veto init claude-code only (its .claude/settings.json hooks)", rows, fmt.Sprintf(" (client run %s)", o.Duration.Round(100*time.Millisecond)))
}

// TestCopilotCLIBothRegistrations: a project with veto init claude-code
// and veto init copilot-cli, played in the real Copilot CLI, which runs
// both: its own hooks first (the notes before each say so), then those of
// .claude/settings.json, and it stops at the first that refuses. Each call
// is decided and observed once; veto doctor warns of the overlap.
func TestCopilotCLIBothRegistrations(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	for _, c := range []string{"claude-code", "copilot-cli"} {
		if code, out, errOut := s.veto("init", c); code != 0 {
			t.Fatalf("veto init %s: exit %d\n%s%s", c, code, out, errOut)
		}
	}
	copilotUser(t, s)
	dir := filepath.Join(s.root, "payloads")
	captureClaudeHooks(t, s, dir)
	// And before veto's own Copilot CLI hook, one that notes when it ran.
	own := filepath.Join(s.ws, ".github", "hooks", "veto.json")
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	note := `{"type": "command", "timeoutSec": 5, "bash": "cat > \"$(mktemp ` + filepath.Join(dir, "own-preToolUse") + `.$(date +%s%N).XXXXXX)\""}, `
	b = []byte(strings.Replace(string(b), `"preToolUse": [`, `"preToolUse": [`+note, 1))
	if err := os.WriteFile(own, b, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := []Call{
		{Name: "a command that succeeds", Tool: "bash", Input: json.RawMessage(`{"command": "echo fine", "description": "Say fine"}`)},
		{Name: "read the README", Tool: "view", Input: json.RawMessage(`{"path": "` + s.ws + `/README.md"}`)},
		{Name: "read an SSH private key", Tool: "view", Input: json.RawMessage(`{"path": "` + s.home + `/.ssh/id_rsa"}`)},
	}
	o := play(t, copilotRun(t, s, node, calls))
	s.finish()
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	got := captured(t, dir)
	// The order the hooks ran in: each note's name holds its time.
	stamp := func(name string) string {
		_, rest, _ := strings.Cut(name, ".")
		ts, _, _ := strings.Cut(rest, ".")
		return ts
	}
	entries, _ := os.ReadDir(dir)
	var order []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "PreToolUse.") || strings.HasPrefix(e.Name(), "own-preToolUse.") {
			order = append(order, stamp(e.Name())+" "+strings.SplitN(e.Name(), ".", 2)[0])
		}
	}
	sort.Strings(order)
	t.Logf("the PreToolUse hooks in the order they ran: %v", order)
	if len(got["own-preToolUse"]) != 3 || len(got["PreToolUse"]) != 2 {
		t.Errorf("Copilot CLI ran its own preToolUse hooks %d times and .claude/settings.json's %d times, want 3 and 2 (none after the refusal)",
			len(got["own-preToolUse"]), len(got["PreToolUse"]))
	}
	for i := 0; i+1 < len(order); i += 2 {
		if !strings.HasSuffix(order[i], " own-preToolUse") {
			t.Errorf("a .claude/settings.json hook ran before Copilot CLI's own: %v", order)
			break
		}
	}
	byCall, _ := vetoLog(t, s)
	decided := inOrder(byCall, isDecision)
	observed := inOrder(byCall, func(k string) bool { return k == "observation" })
	if len(decided) != len(calls) || len(observed) != 2 {
		t.Errorf("veto log holds %d decisions and %d observations, want %d and 2: each call decided once, each that ran observed once:\n%+v\n%+v",
			len(decided), len(observed), len(calls), decided, observed)
	}
	var rows []row
	for i, c := range calls {
		r := o.Results[callID(i)]
		t.Logf("%s: the model got (is_error %v): %.300q", c.Name, r.IsError, r.Content)
		rw := row{n: i + 1, tool: c.Tool, verdict: "none", name: c.Name}
		if i < len(decided) {
			d := decided[i]
			rw.verdict = map[bool]string{true: "allow", false: "DENY"}[d.Kind == "invocation_allowed"]
			if d.Rule != "" {
				rw.why = d.Rule + "/" + d.Reason
			}
			for _, ob := range observed {
				if ob.CallID == d.CallID {
					rw.ran, rw.outcome = true, ob.Outcome
				}
			}
		}
		rows = append(rows, rw)
	}
	if r := o.Results[callID(2)]; !strings.HasPrefix(r.Content, copilotDenied+": veto blocked this view call") {
		t.Errorf("the key's read was not refused with veto's reason: %.300q", r.Content)
	}
	code, out, errOut := s.veto("doctor")
	t.Logf("veto doctor: exit %d\n%s%s", code, out, errOut)
	if code != 0 || !strings.Contains(out, "warn     GitHub Copilot CLI also runs veto's Claude Code hooks") {
		t.Errorf("veto doctor does not warn of the overlap")
	}
	printTable("Copilot CLI with veto init claude-code and copilot-cli", rows, fmt.Sprintf(" (client run %s)", o.Duration.Round(100*time.Millisecond)))
}

// TestCopilotCLIClaudeHookReplies: which replies of a hook in
// .claude/settings.json the real Copilot CLI treats as a refusal, and
// whether the reason reaches the model. The hook (a script, not veto)
// answers each harmless echo by the form it names.
func TestCopilotCLIClaudeHookReplies(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	copilotUser(t, s)
	s.write("bin/form-hook", `#!/bin/sh
in=$(cat)
case "$in" in
*copilot-form-exit0*) echo '{"permissionDecision":"deny","permissionDecisionReason":"REASON-copilot-form-exit0"}' ;;
*claude-json-exit0*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"REASON-claude-json-exit0"}}' ;;
*stderr-exit2*) echo 'REASON-stderr-exit2' >&2; exit 2 ;;
*copilot-form-exit2*) echo '{"permissionDecision":"deny","permissionDecisionReason":"REASON-copilot-form-exit2"}'; echo 'STDERR-copilot-form-exit2' >&2; exit 2 ;;
*decision-block*) echo '{"decision":"block","reason":"REASON-decision-block"}' ;;
esac
exit 0
`, 0o755)
	s.write("home/src/project/.claude/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "form-hook", "timeout": 5}]}]}}`, 0o644)
	var calls []Call
	for _, form := range []string{"copilot-form-exit0", "claude-json-exit0", "stderr-exit2", "copilot-form-exit2", "decision-block", "none"} {
		calls = append(calls, Call{Name: form, Tool: "bash", Input: json.RawMessage(`{"command": "echo ran-` + form + `", "description": "Say ` + form + `"}`)})
	}
	o := play(t, copilotRun(t, s, node, calls))
	// What 1.0.102 did with each (measured; docs/clients.md): the JSON
	// denials block with their reason, exit 2 alone blocks without it,
	// Claude Code's old {"decision":"block"} does not block.
	want := map[string]string{
		"copilot-form-exit0": copilotDenied + ": REASON-copilot-form-exit0",
		"claude-json-exit0":  copilotDenied + ": REASON-claude-json-exit0",
		"stderr-exit2":       copilotDenied + ": hook exited with code 2",
		"copilot-form-exit2": copilotDenied + ": REASON-copilot-form-exit2",
		"decision-block":     "ran-decision-block",
		"none":               "ran-none",
	}
	for i, c := range calls {
		r := o.Results[callID(i)]
		t.Logf("%s: the model got (is_error %v): %.300q", c.Name, r.IsError, r.Content)
		if !strings.HasPrefix(r.Content, want[c.Name]) {
			t.Errorf("%s: the model got %.300q, want it to start %q", c.Name, r.Content, want[c.Name])
		}
	}
}

// TestCopilotCLIClaudeHookPayloads logs every payload the real Copilot
// CLI hands hooks in .claude/settings.json (capturing hooks only, no
// veto), for each of its tools, with what the model got.
func TestCopilotCLIClaudeHookPayloads(t *testing.T) {
	need(t)
	node := clients(t)
	s := newSandbox(t)
	copilotUser(t, s)
	var hooks []string
	for _, ev := range []string{"SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "ConfigChange", "Stop", "UserPromptSubmit", "SessionEnd"} {
		hooks = append(hooks, `"`+ev+`": [{"matcher": "*", "hooks": [{"type": "command", "timeout": 5, "command": "true"}]}]`)
	}
	s.write("home/src/project/.claude/settings.json", `{"hooks": {`+strings.Join(hooks, ", ")+`}}`, 0o644)
	dir := filepath.Join(s.root, "payloads")
	captureClaudeHooks(t, s, dir)
	calls := []Call{
		{Name: "a command that succeeds", Tool: "bash", Input: json.RawMessage(`{"command": "echo fine", "description": "Say fine"}`)},
		{Name: "a command that fails", Tool: "bash", Input: json.RawMessage(`{"command": "ls no-such-directory", "description": "List a directory that is not there"}`)},
		{Name: "read the README", Tool: "view", Input: json.RawMessage(`{"path": "` + s.ws + `/README.md"}`)},
		{Name: "write a new file", Tool: "create", Input: json.RawMessage(`{"path": "` + s.ws + `/NOTES.md", "file_text": "# Notes\n"}`)},
		{Name: "edit it", Tool: "edit", Input: json.RawMessage(`{"path": "` + s.ws + `/NOTES.md", "old_str": "# Notes", "new_str": "# More notes"}`)},
		{Name: "find the Go files", Tool: "glob", Input: json.RawMessage(`{"pattern": "**/*.go"}`)},
		{Name: "search for TODO", Tool: "grep", Input: json.RawMessage(`{"pattern": "TODO"}`)},
		{Name: "read a file that is not there", Tool: "view", Input: json.RawMessage(`{"path": "` + s.ws + `/no-such-file"}`)},
	}
	o := play(t, copilotRun(t, s, node, calls))
	t.Logf("exit %d in %s; the tools offered: %v\nstdout %.1500s\nstderr %.1000s", o.Exit, o.Duration, o.Schemas, o.Stdout, o.Stderr)
	for i := range calls {
		r := o.Results[callID(i)]
		t.Logf("%s: the model got (is_error %v): %.300q", calls[i].Name, r.IsError, r.Content)
	}
	captured(t, dir)
}
