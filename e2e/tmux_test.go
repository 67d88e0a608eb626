package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// terminal is an interactive client running in tmux (a private server on
// a socket of the test's own) inside the run's network namespace: unlike
// script, tmux answers the terminal queries a client sends as it starts,
// so the client draws its screens, and a test can read them and press
// keys at its prompts.
type terminal struct {
	t      *testing.T
	sock   string // the tmux server's socket
	stop   string // the file whose existence ends the session
	played chan termResult
}

type termResult struct {
	o   outcome
	err error
}

// startTerminal runs spec's program with its arguments in tmux, in a
// namespace of its own, until stop() or spec.Timeout. kill, when set, is
// text of the client's command line its processes are killed by at the
// end (a client that outlives the tmux server).
func startTerminal(t *testing.T, s *sandbox, spec runSpec, kill string) *terminal {
	t.Helper()
	need(t, "tmux")
	dir, err := os.MkdirTemp("", "vt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	term := &terminal{t: t, sock: filepath.Join(dir, "s"), stop: filepath.Join(s.root, "terminal-stop"), played: make(chan termResult, 1)}
	cmd := shellQuote(spec.Program)
	for _, a := range spec.Args {
		cmd += " " + shellQuote(a)
	}
	tmux := "tmux -S " + shellQuote(term.sock)
	secs := int(spec.Timeout/time.Second) - 20
	script := "#!/bin/sh\n" +
		"exec >/dev/null 2>&1\n" +
		tmux + " -f /dev/null new-session -d -x 160 -y 50 " + shellQuote(cmd) + " || exit 1\n" +
		"for i in $(seq " + itoa(secs*2) + "); do [ -f " + shellQuote(term.stop) + " ] && break; sleep 0.5; done\n" +
		tmux + " kill-server\n" +
		"sleep 1\n"
	if kill != "" {
		script += "pkill -KILL -f " + shellQuote(kill) + "\n"
	}
	script += "exit 0\n"
	s.write("bin/terminal", script, 0o755)
	spec.Program, spec.Args = filepath.Join(s.bin, "terminal"), nil
	spec.Env = append(spec.Env, "TERM=xterm-256color")
	go func() {
		o, err := playIn(t.TempDir(), spec)
		term.played <- termResult{o, err}
	}()
	t.Cleanup(func() {
		os.WriteFile(term.stop, nil, 0o644)
		exec.Command("tmux", "-S", term.sock, "kill-server").Run()
	})
	return term
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// screen is what the terminal shows now.
func (term *terminal) screen() string {
	out, _ := exec.Command("tmux", "-S", term.sock, "capture-pane", "-p", "-J").Output()
	return string(out)
}

// waitFor waits until the screen shows text, and returns it.
func (term *terminal) waitFor(text string, within time.Duration) (string, bool) {
	until := time.Now().Add(within)
	for {
		sc := term.screen()
		if strings.Contains(sc, text) {
			return sc, true
		}
		if time.Now().After(until) {
			return sc, false
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// keys presses keys (tmux's key names).
func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", term.sock, "send-keys"}, keys...)...).CombinedOutput(); err != nil {
		term.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// end ends the session and returns the run's outcome.
func (term *terminal) end() outcome {
	term.t.Helper()
	os.WriteFile(term.stop, nil, 0o644)
	r := <-term.played
	if r.err != nil {
		term.t.Fatal(r.err)
	}
	return r.o
}

// claudeTerminal is askingSession's Claude Code, interactive, with its
// first-run screens done, in permission mode mode, under tmux; with
// logHooks, a hook that logs every event it gets (to hookLog) is
// registered in the user's settings besides veto's in the project's.
func claudeTerminal(t *testing.T, mode string, logHooks bool) (s *sandbox, term *terminal, notes, hookLog string) {
	t.Helper()
	s, first, _, notes := askingSession(t)
	key := s.apiKey[len(s.apiKey)-20:]
	cj, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
		"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":              map[string]any{s.ws: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
	s.write("home/.claude.json", string(cj), 0o600)
	hookLog = filepath.Join(s.root, "hooks.log")
	if logHooks {
		s.write("bin/loghook", "#!/bin/sh\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+"\n", 0o755)
		hooks := map[string]any{}
		for _, ev := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionRequest", "PermissionDenied",
			"Notification", "UserPromptSubmit", "Stop", "StopFailure"} {
			hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": filepath.Join(s.bin, "loghook"), "timeout": 5}}}}
		}
		b, _ := json.Marshal(map[string]any{"hooks": hooks})
		s.write("home/.claude/settings.json", string(b), 0o644)
	}
	spec := first
	spec.Args = []string{"--mcp-config", filepath.Join(s.root, "mcp.json"), "--strict-mcp-config"}
	switch mode {
	case "bypassPermissions":
		spec.Args = append(spec.Args, "--dangerously-skip-permissions")
	default:
		spec.Args = append(spec.Args, "--permission-mode", mode)
	}
	spec.Args = append(spec.Args, "go")
	spec.Timeout = 4 * time.Minute
	term = startTerminal(t, s, spec, filepath.Join(s.root, "mcp.json"))
	return s, term, notes, hookLog
}

// TestMeasureClaudeCodePrompt: measuring, not checking: what Claude Code
// sends its hooks when the person answers veto's question at its own
// prompt, and whether veto's waiting PermissionRequest hook is still
// running after: VETO_MEASURE=yes (Enter), yes1 (the key 1), no (Esc) or
// no3 (the key 3, the dialog's No in default mode); VETO_MEASURE_MODE is
// the permission mode (default).
func TestMeasureClaudeCodePrompt(t *testing.T) {
	answer := os.Getenv("VETO_MEASURE")
	if answer == "" {
		t.Skip("VETO_MEASURE=yes, yes1, no or no3")
	}
	mode := os.Getenv("VETO_MEASURE_MODE")
	if mode == "" {
		mode = "default"
	}
	s, term, notes, hookLog := claudeTerminal(t, mode, true)
	sc, ok := term.waitFor("veto asks a person", 90*time.Second)
	t.Logf("screen at the question (%v):\n%s", ok, sc)
	if !ok {
		term.end()
		t.FailNow()
	}
	time.Sleep(2 * time.Second)
	t.Logf("screen before the answer:\n%s", term.screen())
	switch answer {
	case "yes":
		term.keys("Enter")
	case "no3":
		term.keys("3")
	case "yes1":
		term.keys("1")
	default:
		term.keys("Escape")
	}
	time.Sleep(8 * time.Second)
	t.Logf("screen after the answer:\n%s", term.screen())
	// Is veto's PermissionRequest hook still waiting?
	ps, _ := exec.Command("pgrep", "-af", "veto-hook claude-code").Output()
	t.Logf("veto-hook processes 8 s after the answer:\n%s", ps)
	o := term.end()
	b, _ := os.ReadFile(notes)
	t.Logf("notes: %q; the model got %+v", b, o.Results)
	hl, _ := os.ReadFile(hookLog)
	t.Logf("hooks:\n%s", hl)
	s.finish()
	_, text := vetoLog(t, s)
	t.Logf("veto log:\n%s", text)
}

// TestClaudeCodeAnsweredAtItsPrompt: an interactive Claude Code session
// (under tmux, in each permission mode: 2.1.332 asks in all) meets a call veto's
// policy asks a person about. Claude Code's own dialog shows veto's
// question, and the person answers there: yes (the key 1, "1. Yes"), and
// the call runs once, and veto log holds the question, the person's answer
// (approval_granted by the OS user at Claude Code's prompt, for the
// agent) and the call's observation; no (the key of the dialog's No), and
// the call never runs, and veto log holds the question and nothing after it: Claude Code
// tells no hook of a no, so veto records no answer it has no evidence of.
func TestClaudeCodeAnsweredAtItsPrompt(t *testing.T) {
	for _, mode := range []string{"default", "bypassPermissions", "acceptEdits", "plan", "auto", "dontAsk"} {
		for _, yes := range []bool{true, false} {
			name := mode + "/no"
			if yes {
				name = mode + "/yes"
			}
			t.Run(name, func(t *testing.T) { answerAtPrompt(t, mode, yes) })
		}
	}
}

func answerAtPrompt(t *testing.T, mode string, yes bool) {
	s, term, notes, _ := claudeTerminal(t, mode, false)
	sc, ok := term.waitFor("Do you want to create RELEASE.txt?", 90*time.Second)
	if !ok {
		term.end()
		t.Fatalf("Claude Code's prompt did not show up:\n%s", sc)
	}
	for _, want := range []string{"Hook PreToolUse:Write requires confirmation", "veto asks a person about this Write call", "release_needs_person"} {
		if !strings.Contains(strings.Join(strings.Fields(sc), " "), want) {
			t.Errorf("the prompt does not show %q:\n%s", want, sc)
		}
	}
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("the call ran before the person answered")
	}
	// The question is on record, unanswered, while the prompt waits.
	if _, out, _ := s.veto("approve"); !strings.Contains(out, callID(0)) {
		t.Errorf("veto approve does not list the question:\n%s", out)
	}
	// The dialog's options: 1. Yes, (in default mode) 2. Yes, and
	// switch to accept edits, and the last, No.
	answer, after := "", "Rejected write to RELEASE.txt"
	if m := regexp.MustCompile(`([0-9])\. No\b`).FindStringSubmatch(sc); m != nil {
		answer = m[1]
	}
	if yes {
		answer, after = "1", "Wrote 1 line to RELEASE.txt"
	}
	if answer == "" {
		t.Fatalf("the dialog has no No:\n%s", sc)
	}
	term.keys(answer)
	sc, ok = term.waitFor(after, 30*time.Second)
	if !ok {
		t.Errorf("after the answer, the screen does not show %q:\n%s", after, sc)
	}
	if yes {
		// The call's report reaches veto just after the screen shows it ran.
		term.waitFor("Done.", 15*time.Second)
	} else {
		time.Sleep(3 * time.Second)
	}
	o := term.end()
	b, err := os.ReadFile(notes)
	r, answered := o.Results[callID(0)]
	switch {
	case yes && string(b) != "ran\n":
		t.Fatalf("answered yes, the call did not run (%q, %v)", b, err)
	case yes && (!answered || r.IsError):
		t.Errorf("answered yes, the model got %+v", r)
	case !yes && err == nil:
		t.Fatal("answered no, the call ran")
	case !yes && answered:
		t.Errorf("answered no, the model got a result already: %+v", r)
	}
	s.finish()
	byCall, text := vetoLog(t, s)
	var questions, answers, observations, others int
	for _, e := range byCall[callID(0)] {
		switch {
		case e.Kind == "invocation_denied" && e.Awaiting == "approval" && e.Reason == "release_needs_person":
			questions++
		case e.Kind == "approval_granted" && e.Actor.Kind == "user" && e.Actor.ID == "root" && e.Actor.Agent == "prompt:claude-code" &&
			e.For.Kind == "agent" && e.For.ID == "claude-code":
			answers++
		case e.Kind == "observation" && e.Outcome == "succeeded":
			observations++
		case e.Kind == "probe":
		default:
			others++
		}
	}
	want := [4]int{1, 0, 0, 0}
	if yes {
		want = [4]int{1, 1, 1, 0}
	}
	if got := [4]int{questions, answers, observations, others}; got != want {
		t.Errorf("veto log: %d questions, %d answers at the prompt, %d observations, %d other events; want %v\n%s",
			questions, answers, observations, others, want, text)
	}
	if code, out, errOut := s.veto("log", "verify"); code != 0 {
		t.Errorf("veto log verify: exit %d: %s%s", code, out, errOut)
	}
	if yes {
		printTable("Claude Code interactive ("+mode+"), answered yes at its own prompt", []row{
			{n: 1, tool: "Write", verdict: "asks", name: "Claude Code's dialog shows veto's question (tmux)"},
			{n: 2, tool: "Write", verdict: "approved", name: "the person presses 1 (Yes): recorded as user:root at prompt:claude-code"},
			{n: 3, tool: "Write", verdict: "allowed", ran: true, name: "the call ran once; its observation follows the answer"},
		}, "")
	} else {
		printTable("Claude Code interactive ("+mode+"), answered no at its own prompt", []row{
			{n: 1, tool: "Write", verdict: "asks", name: "Claude Code's dialog shows veto's question (tmux)"},
			{n: 2, tool: "Write", verdict: "refused", name: "the person presses " + answer + " (No): no hook event; veto records no answer"},
			{n: 3, tool: "Write", verdict: "blocked", name: "the call never ran"},
		}, "")
	}
}

// TestMeasureCopilotCLIPrompt: measuring, not checking: whether Copilot
// CLI's interactive mode (under tmux) puts a preToolUse hook's "ask" to
// the person, and what its hooks get after a yes or a no
// (VETO_MEASURE_COPILOT=yes or no; VETO_MEASURE_ALLOW_ALL=1 adds
// --allow-all-tools). The hook is a script that asks, not veto.
func TestMeasureCopilotCLIPrompt(t *testing.T) {
	answer := os.Getenv("VETO_MEASURE_COPILOT")
	if answer == "" {
		t.Skip("VETO_MEASURE_COPILOT=yes or no")
	}
	need(t, "tmux")
	node := clients(t)
	s := newSandbox(t)
	copilotUser(t, s)
	hookLog := filepath.Join(s.root, "hooks.log")
	s.write("bin/askhook", "#!/bin/sh\nenv | sort | grep -v -e KEY -e TOKEN >> "+shellQuote(hookLog+".env")+"\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+
		"\necho '{\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"veto-measure asks a person\"}'\n", 0o755)
	s.write("bin/loghook", "#!/bin/sh\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+"\n", 0o755)
	hooks := fmt.Sprintf(`{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": %q, "timeoutSec": 5}],
		"preToolUse": [{"type": "command", "bash": %q, "timeoutSec": 5}],
		"postToolUse": [{"type": "command", "bash": %q, "timeoutSec": 5}]}}`,
		filepath.Join(s.bin, "loghook"), filepath.Join(s.bin, "askhook"), filepath.Join(s.bin, "loghook"))
	s.write("home/src/project/.github/hooks/measure.json", hooks, 0o644)
	notes := filepath.Join(s.ws, "NOTES.md")
	spec := copilotRun(t, s, node, []Call{{Name: "write a new file", Tool: "create",
		Input: json.RawMessage(`{"path": "` + notes + `", "file_text": "ran\n"}`)}})
	spec.Args = []string{"-i", "go", "--allow-all-paths", "--no-color"}
	if os.Getenv("VETO_MEASURE_ALLOW_ALL") == "1" {
		spec.Args = append(spec.Args, "--allow-all-tools")
	}
	if extra := os.Getenv("VETO_MEASURE_COPILOT_ARGS"); extra != "" {
		spec.Args = append(spec.Args, strings.Fields(extra)...)
	}
	spec.Port = 0
	term := startTerminal(t, s, spec, "copilot")
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		sc := term.screen()
		if sc != last {
			t.Logf("screen:\n%s", sc)
			last = sc
		}
		if strings.Contains(sc, "veto-measure") || strings.Contains(sc, "NOTES.md") {
			break
		}
		time.Sleep(2 * time.Second)
	}
	time.Sleep(3 * time.Second)
	t.Logf("screen before the answer:\n%s", term.screen())
	switch answer {
	case "yes":
		term.keys("Enter")
	case "no":
		term.keys("Escape")
	}
	time.Sleep(8 * time.Second)
	t.Logf("screen after the answer:\n%s", term.screen())
	o := term.end()
	b, _ := os.ReadFile(notes)
	hl, _ := os.ReadFile(hookLog)
	env, _ := os.ReadFile(hookLog + ".env")
	t.Logf("notes: %q; the model got %+v\nhooks:\n%s\nthe hook's environment:\n%s", b, o.Results, hl, env)
}

// TestCopilotCLIAnsweredAtItsPrompt: the real Copilot CLI, interactive
// (under tmux), with and without --allow-all-tools, meets a call veto's
// policy asks a person about. veto answers "ask"; Copilot CLI's "Hook
// permission request" dialog shows veto's question, and the person
// answers there: yes (Enter), and the call runs once, and veto log holds
// the question, the person's answer (approval_granted by the OS user at
// prompt:copilot-cli) and the observation; no (Esc), and the call never
// runs, the model reads Copilot CLI's "Denied by user via preToolUse hook
// prompt", and veto log holds the question alone (no hook event comes).
func TestCopilotCLIAnsweredAtItsPrompt(t *testing.T) {
	for _, allowAll := range []bool{false, true} {
		for _, yes := range []bool{true, false} {
			name := map[bool]string{false: "asking", true: "allow-all-tools"}[allowAll] + "/" + map[bool]string{true: "yes", false: "no"}[yes]
			t.Run(name, func(t *testing.T) { copilotAnswerAtPrompt(t, allowAll, yes) })
		}
	}
}

func copilotAnswerAtPrompt(t *testing.T, allowAll, yes bool) {
	need(t, "tmux")
	node := clients(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "copilot-cli"); code != 0 {
		t.Fatalf("veto init copilot-cli: exit %d\n%s%s", code, out, errOut)
	}
	copilotUser(t, s)
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
		"rules:\n  - id: release-needs-person\n    match: {tool: create}\n"+
		"    ask: 'args.path.endsWith(\"/RELEASE.txt\")'\n    reason: release_needs_person\n"+
		"    message: Writing the release notes needs a person's approval.\n", 0o644)
	notes := filepath.Join(s.ws, "RELEASE.txt")
	spec := copilotRun(t, s, node, []Call{{Name: "write the release notes", Tool: "create",
		Input: json.RawMessage(`{"path": "` + notes + `", "file_text": "ran\n"}`)}})
	spec.Args = []string{"-i", "go", "--allow-all-paths", "--no-color"}
	if allowAll {
		spec.Args = append(spec.Args, "--allow-all-tools")
	}
	term := startTerminal(t, s, spec, "copilot")
	sc, ok := term.waitFor("Do you want to allow this tool call?", 90*time.Second)
	if !ok {
		term.end()
		t.Fatalf("Copilot CLI's dialog did not show up:\n%s", sc)
	}
	flat := strings.Join(strings.Fields(strings.ReplaceAll(sc, "│", " ")), " ")
	for _, want := range []string{"Hook permission request", "veto asks a person about this create call", "release_needs_person"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the dialog does not show %q:\n%s", want, sc)
		}
	}
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("the call ran before the person answered")
	}
	if yes {
		term.keys("Enter")
	} else {
		term.keys("Escape")
	}
	if sc, ok := term.waitFor("Done.", 30*time.Second); !ok && yes {
		t.Errorf("after the answer, the session did not go on:\n%s", sc)
	}
	time.Sleep(2 * time.Second)
	o := term.end()
	b, err := os.ReadFile(notes)
	r, answered := o.Results[callID(0)]
	switch {
	case yes && string(b) != "ran\n":
		t.Fatalf("answered yes, the call did not run (%q, %v)", b, err)
	case yes && (!answered || r.IsError || strings.HasPrefix(r.Content, "Denied")):
		t.Errorf("answered yes, the model got %+v", r)
	case !yes && err == nil:
		t.Fatal("answered no, the call ran")
	case !yes && !strings.HasPrefix(r.Content, "Denied by user via preToolUse hook prompt"):
		t.Errorf("answered no, the model got %+v", r)
	}
	s.finish()
	byCall, text := vetoLog(t, s)
	var questions, answers, observations, others int
	for _, evs := range byCall {
		for _, e := range evs {
			switch {
			case e.Kind == "invocation_denied" && e.Awaiting == "approval" && e.Reason == "release_needs_person":
				questions++
			case e.Kind == "approval_granted" && e.Actor.Kind == "user" && e.Actor.ID == "root" && e.Actor.Agent == "prompt:copilot-cli" &&
				e.For.Kind == "agent" && e.For.ID == "copilot-cli":
				answers++
			case e.Kind == "observation" && e.Outcome == "succeeded":
				observations++
			case e.Kind == "probe", e.Kind == "run_started":
			default:
				others++
			}
		}
	}
	want := [4]int{1, 0, 0, 0}
	if yes {
		want = [4]int{1, 1, 1, 0}
	}
	if got := [4]int{questions, answers, observations, others}; got != want {
		t.Errorf("veto log: %d questions, %d answers at the prompt, %d observations, %d other events; want %v\n%s",
			questions, answers, observations, others, want, text)
	}
	mode := "interactive"
	if allowAll {
		mode += ", --allow-all-tools"
	}
	if yes {
		printTable("Copilot CLI ("+mode+"), answered yes at its own prompt", []row{
			{n: 1, tool: "create", verdict: "asks", name: "Copilot CLI's dialog shows veto's question (tmux)"},
			{n: 2, tool: "create", verdict: "approved", name: "the person presses Enter (Yes): recorded as user:root at prompt:copilot-cli"},
			{n: 3, tool: "create", verdict: "allowed", ran: true, name: "the call ran once; its observation follows the answer"},
		}, "")
	} else {
		printTable("Copilot CLI ("+mode+"), answered no at its own prompt", []row{
			{n: 1, tool: "create", verdict: "asks", name: "Copilot CLI's dialog shows veto's question (tmux)"},
			{n: 2, tool: "create", verdict: "refused", name: "the person presses Esc (No): no hook event; veto records no answer"},
			{n: 3, tool: "create", verdict: "blocked", name: "the call never ran; the model reads Copilot CLI's denial"},
		}, "")
	}
}

// TestCopilotCLIRefusesAQuestionItCannotAsk: where Copilot CLI cannot ask
// (-p, under --allow-all-tools; --autopilot, which needs --yolo), it
// refuses a call veto answered "ask": the call never runs, and the model
// reads "Denied by preToolUse hook (unable to ask user for
// confirmation)" with veto's question.
func TestCopilotCLIRefusesAQuestionItCannotAsk(t *testing.T) {
	for _, autopilot := range []bool{false, true} {
		t.Run(map[bool]string{false: "print", true: "autopilot"}[autopilot], func(t *testing.T) {
			need(t, "tmux")
			node := clients(t)
			s := newSandbox(t)
			if code, out, errOut := s.veto("init", "copilot-cli"); code != 0 {
				t.Fatalf("veto init copilot-cli: exit %d\n%s%s", code, out, errOut)
			}
			copilotUser(t, s)
			s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
				"rules:\n  - id: release-needs-person\n    match: {tool: create}\n"+
				"    ask: 'args.path.endsWith(\"/RELEASE.txt\")'\n    reason: release_needs_person\n"+
				"    message: Writing the release notes needs a person's approval.\n", 0o644)
			notes := filepath.Join(s.ws, "RELEASE.txt")
			spec := copilotRun(t, s, node, []Call{{Name: "write the release notes", Tool: "create",
				Input: json.RawMessage(`{"path": "` + notes + `", "file_text": "ran\n"}`)}})
			var o outcome
			if autopilot {
				spec.Args = []string{"-i", "go", "--autopilot", "--yolo", "--no-color"}
				term := startTerminal(t, s, spec, "copilot")
				sc, ok := term.waitFor("Done.", 90*time.Second)
				if !ok {
					t.Errorf("the session did not end its turn:\n%s", sc)
				}
				o = term.end()
			} else {
				o = play(t, spec)
			}
			r := o.Results[callID(0)]
			if _, err := os.Stat(notes); err == nil {
				t.Fatal("the call ran unasked")
			}
			if !strings.HasPrefix(r.Content, "Denied by preToolUse hook (unable to ask user for confirmation)") ||
				!strings.Contains(r.Content, "release_needs_person") {
				t.Errorf("the model got %+v", r)
			}
			s.finish()
		})
	}
}

// TestMeasureClaudeCodeAskModes: measuring, not checking: in each
// permission mode of VETO_MEASURE_MODES, whether Claude Code's own dialog
// shows a PreToolUse hook's "ask" (a script, not veto) or runs the call
// unasked; nobody answers.
func TestMeasureClaudeCodeAskModes(t *testing.T) {
	modes := strings.Fields(os.Getenv("VETO_MEASURE_MODES"))
	if len(modes) == 0 {
		t.Skip("VETO_MEASURE_MODES=auto acceptEdits ...")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s, first, _, notes := askingSession(t)
			key := s.apiKey[len(s.apiKey)-20:]
			cj, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark", "bypassPermissionsModeAccepted": true,
				"customApiKeyResponses": map[string]any{"approved": []string{key}, "rejected": []string{}},
				"projects":              map[string]any{s.ws: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}})
			s.write("home/.claude.json", string(cj), 0o600)
			out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse",
				"permissionDecision": "ask", "permissionDecisionReason": "veto-measure asks a person"}})
			s.write("bin/askhook", "#!/bin/sh\ncat >/dev/null\necho "+shellQuote(string(out))+"\n", 0o755)
			hooks := map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command",
				"command": filepath.Join(s.bin, "askhook"), "timeout": 5}}}}}
			settings := map[string]any{"hooks": hooks}
			if allow := os.Getenv("VETO_MEASURE_ALLOW"); allow != "" {
				// Permission rules that allow the tool outright.
				settings["permissions"] = map[string]any{"allow": strings.Fields(allow)}
			}
			b, _ := json.Marshal(settings)
			s.write("home/src/project/.claude/settings.json", string(b), 0o644)
			spec := first
			if os.Getenv("VETO_MEASURE_TOOL") == "Bash" {
				// A file command, which acceptEdits passes unasked.
				spec.Calls = []Call{{Name: "touch the release notes", Tool: "Bash",
					Input: json.RawMessage(fmt.Sprintf(`{"command": %q, "description": "Touch"}`, "touch "+notes))}}
			}
			spec.Args = []string{"--mcp-config", filepath.Join(s.root, "mcp.json"), "--strict-mcp-config", "--permission-mode", mode, "go"}
			spec.Timeout = 3 * time.Minute
			term := startTerminal(t, s, spec, filepath.Join(s.root, "mcp.json"))
			var sc string
			for i := 0; i < 40; i++ {
				sc = term.screen()
				if strings.Contains(sc, "veto-measure") || strings.Contains(sc, "Done.") {
					break
				}
				time.Sleep(time.Second)
			}
			time.Sleep(3 * time.Second)
			sc = term.screen()
			term.end()
			_, err := os.Stat(notes)
			t.Logf("%s: ran unasked: %v; the dialog shows the question: %v\n%s", mode, err == nil, strings.Contains(sc, "veto-measure"), sc)
		})
	}
}

// TestMeasureCodexAsk: measuring, not checking: the real Codex TUI (under
// tmux, approval_policy VETO_MEASURE_CODEX_POLICY, default untrusted)
// meets a PreToolUse hook (a script, not veto) that answers "ask"; what
// the screen shows, whether the call runs, and which hook events come
// (PermissionRequest among them). VETO_MEASURE_CODEX=ask or none (the
// hook says nothing: Codex's own approval prompt, if any, is what asks).
func TestMeasureCodexAsk(t *testing.T) {
	what := os.Getenv("VETO_MEASURE_CODEX")
	if what == "" {
		t.Skip("VETO_MEASURE_CODEX=ask or none")
	}
	need(t, "tmux")
	node := clients(t)
	s := newSandbox(t)
	codexUser(t, s)
	policy := os.Getenv("VETO_MEASURE_CODEX_POLICY")
	if policy == "" {
		policy = "untrusted"
	}
	cfgPath := filepath.Join(s.home, ".codex", "config.toml")
	cfg, _ := os.ReadFile(cfgPath)
	c := strings.Replace(string(cfg), `approval_policy = "never"`, `approval_policy = "`+policy+`"`, 1)
	c = strings.Replace(c, `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)
	os.WriteFile(cfgPath, []byte(c), 0o644)
	hookLog := filepath.Join(s.root, "hooks.log")
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse",
		"permissionDecision": "ask", "permissionDecisionReason": "veto-measure asks a person"}})
	reply := ""
	if what == "ask" {
		reply = "echo " + shellQuote(string(out)) + "\n"
	}
	s.write("bin/askhook", "#!/bin/sh\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+"\n"+reply, 0o755)
	s.write("bin/loghook", "#!/bin/sh\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+"\n", 0o755)
	entry := func(cmd string) []any {
		return []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 5}}}}
	}
	hooks := map[string]any{"PreToolUse": entry(filepath.Join(s.bin, "askhook")), "PostToolUse": entry(filepath.Join(s.bin, "loghook")),
		"PermissionRequest": entry(filepath.Join(s.bin, "loghook"))}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	s.write("home/src/project/.codex/hooks.json", string(b), 0o644)
	notes := filepath.Join(s.ws, "RELEASE.txt")
	spec := codexRun(t, s, node, []Call{{Name: "touch the release notes", Tool: "exec_command",
		Input: json.RawMessage(fmt.Sprintf(`{"cmd": %q}`, "touch "+notes))}})
	// The pane stays when Codex ends, with its exit status.
	s.write("bin/codex-then", "#!/bin/sh\n"+shellQuote(spec.Program)+" --dangerously-bypass-hook-trust go\necho CODEX EXITED $?\nsleep 120\n", 0o755)
	spec.Program, spec.Args = filepath.Join(s.bin, "codex-then"), nil
	term := startTerminal(t, s, spec, "codex")
	last := ""
	for i := 0; i < 30; i++ {
		sc := term.screen()
		if sc != last {
			t.Logf("screen:\n%s", sc)
			last = sc
		}
		time.Sleep(2 * time.Second)
	}
	o := term.end()
	_, err := os.Stat(notes)
	hl, _ := os.ReadFile(hookLog)
	t.Logf("ran: %v; the model got %+v\nhooks:\n%s", err == nil, o.Results, hl)
}

// TestCopilotCLIQuestionWithBothRegistrations: veto registered for Copilot
// CLI and for Claude Code (whose hooks Copilot CLI runs too, after its
// own, and, measured, after the dialog's answer): a question. The test
// says what the person meets, the dialog or a refusal, and checks the
// call never runs unasked and an answer is recorded only when it ran
// (1.0.102: the dialog asks, and a yes 15 s later is refused by the
// second registration).
func TestCopilotCLIQuestionWithBothRegistrations(t *testing.T) {
	for _, yes := range []bool{true, false} {
		t.Run(map[bool]string{true: "yes", false: "no"}[yes], func(t *testing.T) { bothRegistrations(t, yes) })
	}
}

func bothRegistrations(t *testing.T, yes bool) {
	need(t, "tmux")
	node := clients(t)
	s := newSandbox(t)
	for _, c := range []string{"claude-code", "copilot-cli"} {
		if code, out, errOut := s.veto("init", c); code != 0 {
			t.Fatalf("veto init %s: exit %d\n%s%s", c, code, out, errOut)
		}
	}
	copilotUser(t, s)
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
		"rules:\n  - id: release-needs-person\n    match: {tool: create}\n"+
		"    ask: 'args.path.endsWith(\"/RELEASE.txt\")'\n    reason: release_needs_person\n"+
		"    message: Writing the release notes needs a person's approval.\n", 0o644)
	notes := filepath.Join(s.ws, "RELEASE.txt")
	spec := copilotRun(t, s, node, []Call{{Name: "write the release notes", Tool: "create",
		Input: json.RawMessage(`{"path": "` + notes + `", "file_text": "ran\n"}`)}})
	spec.Args = []string{"-i", "go", "--allow-all-paths", "--allow-all-tools", "--no-color"}
	term := startTerminal(t, s, spec, "copilot")
	var sc string
	asked := false
	for i := 0; i < 60; i++ {
		sc = term.screen()
		if strings.Contains(sc, "Do you want to allow this tool call?") {
			asked = true
			break
		}
		if strings.Contains(sc, "Done.") {
			break
		}
		time.Sleep(time.Second)
	}
	if asked {
		if yes {
			// The person takes a while: longer than veto's hook timeout.
			time.Sleep(15 * time.Second)
			term.keys("Enter")
		} else {
			term.keys("Escape")
		}
		term.waitFor("Done.", 30*time.Second)
		time.Sleep(2 * time.Second)
	}
	o := term.end()
	s.finish()
	_, err := os.Stat(notes)
	ran := err == nil
	if ran && !(asked && yes) {
		t.Fatal("the call ran unasked")
	}
	r := o.Results[callID(0)]
	byCall, text := vetoLog(t, s)
	answers := 0
	for _, evs := range byCall {
		for _, e := range evs {
			if e.Kind == "approval_granted" && e.Actor.Agent == "prompt:copilot-cli" {
				answers++
			}
		}
	}
	t.Logf("the dialog asked: %v; the call ran: %v; answers recorded: %d; the model got %q\n%s\n%s", asked, ran, answers, r.Content, sc, text)
	if !asked && !strings.HasPrefix(r.Content, copilotDenied) {
		t.Errorf("neither asked nor refused: %+v", r)
	}
	if answers != map[bool]int{true: 1, false: 0}[ran] {
		t.Errorf("%d answers recorded; the call ran: %v", answers, ran)
	}
}

// TestMeasureCopilotCLIACP: measuring, not checking: Copilot CLI as an
// Agent Client Protocol server (--acp) under a minimal host
// (testdata/acp-client.mjs) that rejects every permission request (or
// answers with the option kind VETO_ACP_ANSWER): what a preToolUse hook's
// "ask" becomes, and what the hook's environment says of the mode.
func TestMeasureCopilotCLIACP(t *testing.T) {
	if os.Getenv("VETO_MEASURE_ACP") == "" {
		t.Skip("VETO_MEASURE_ACP=1")
	}
	need(t, "node")
	node := clients(t)
	s := newSandbox(t)
	copilotUser(t, s)
	hookLog := filepath.Join(s.root, "hooks.log")
	s.write("bin/askhook", "#!/bin/sh\nenv | sort | grep -v -e KEY -e TOKEN >> "+shellQuote(hookLog+".env")+"\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+
		"\necho '{\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"veto-measure asks a person\"}'\n", 0o755)
	s.write("bin/loghook", "#!/bin/sh\ncat >> "+shellQuote(hookLog)+"\necho >> "+shellQuote(hookLog)+"\n", 0o755)
	hooks := fmt.Sprintf(`{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": %q, "timeoutSec": 5}],
		"postToolUse": [{"type": "command", "bash": %q, "timeoutSec": 5}]}}`, filepath.Join(s.bin, "askhook"), filepath.Join(s.bin, "loghook"))
	s.write("home/src/project/.github/hooks/measure.json", hooks, 0o644)
	notes := filepath.Join(s.ws, "NOTES.md")
	spec := copilotRun(t, s, node, []Call{{Name: "write a new file", Tool: "create",
		Input: json.RawMessage(`{"path": "` + notes + `", "file_text": "ran\n"}`)}})
	acpLog := filepath.Join(s.root, "acp.log")
	host, _ := filepath.Abs("testdata/acp-client.mjs")
	program := spec.Program
	spec.Program = "node"
	spec.Args = append([]string{host, acpLog, program, "--acp", "--allow-all-paths"}, strings.Fields(os.Getenv("VETO_MEASURE_ACP_ARGS"))...)
	spec.Env = append(spec.Env, "VETO_ACP_ANSWER="+os.Getenv("VETO_ACP_ANSWER"))
	o := play(t, spec)
	b, _ := os.ReadFile(notes)
	hl, _ := os.ReadFile(hookLog)
	env, _ := os.ReadFile(hookLog + ".env")
	al, _ := os.ReadFile(acpLog)
	var perm []string
	for _, l := range strings.Split(string(al), "\n") {
		if (strings.Contains(l, `"method"`) && !strings.Contains(l, "session/update")) || strings.Contains(l, `"outcome"`) || strings.Contains(l, `"error"`) {
			perm = append(perm, l)
		}
	}
	t.Logf("exit %d; stderr %.1500s\nnotes: %q; the model got %+v\nhooks:\n%s\nthe permission requests and answers:\n%s\nthe hook's environment:\n%s",
		o.Exit, o.Stderr, b, o.Results, hl, strings.Join(perm, "\n"), env)
}
