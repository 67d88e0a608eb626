package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto/internal/browsertest"
	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/presence/presencetest"
)

// TestClaudeCodeWaitsForApprovalOnThePage: in the real Claude Code's print
// mode, a call veto's policy asks a person about waits. The session stops
// with the call pending (defer), and stays so when resumed before anyone
// answered; the person approves it on veto's page (veto ui, in headless
// Chromium), and the resumed session runs it, once. veto log holds the
// questions, the approval by the person and the allow that used it.
func TestClaudeCodeWaitsForApprovalOnThePage(t *testing.T) {
	need(t)
	chrome := chromiumPath(t)
	s, first, resume, notes := askingSession(t)

	// 1. The call waits: the session ends with it pending, not run.
	o := play(t, first)
	waits(t, "the first run", o, notes)
	// 2. Resumed before anyone answered: it waits still.
	o = play(t, resume)
	waits(t, "the run resumed before an answer", o, notes)

	// 3. The person approves it on the page.
	answerOnPage(t, s, chrome, callID(0), "approve")

	// 4. Resumed: the call runs, once, and the session ends.
	o = play(t, resume)
	r, answered := o.Results[callID(0)]
	var res claudeResult
	json.Unmarshal([]byte(o.Stdout), &res)
	b, err := os.ReadFile(notes)
	switch {
	case err != nil:
		t.Fatalf("approved, the call did not run: %v (stop reason %q)\n%.2000s", err, res.StopReason, o.Stderr)
	case string(b) != "ran\n":
		t.Fatalf("the release notes hold %q", b)
	case !answered || r.IsError:
		t.Fatalf("the model did not get the call's result: %+v", r)
	case res.StopReason == "tool_deferred":
		t.Fatal("approved, the session still waits")
	}
	s.finish()
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}

	byCall, text := vetoLog(t, s)
	var questions, allows, observations int
	var approvedBy string
	for _, e := range byCall[callID(0)] {
		switch {
		case e.Kind == "invocation_denied" && e.Awaiting == "approval" && e.Reason == "release_needs_person":
			questions++
		case e.Kind == "approval_granted":
			approvedBy = e.Actor.Kind + ":" + e.Actor.ID
		case e.Kind == "invocation_allowed" && e.Approval > 0:
			allows++
		case e.Kind == "observation" && e.Outcome == "succeeded":
			observations++
		case e.Kind == "invocation_allowed" || e.Kind == "invocation_denied":
			t.Errorf("another decision of the call: %+v", e)
		}
	}
	if questions != 2 || allows != 1 || observations != 1 || approvedBy != "user:root" {
		t.Errorf("veto log: %d questions (want 2), %d allows by approval (want 1), %d observations (want 1), approved by %q (want user:root)\n%s",
			questions, allows, observations, approvedBy, text)
	}
	if strings.Contains(text, "ran\\n") {
		t.Error("veto log holds the call's content")
	}
	if code, out, errOut := s.veto("log", "verify"); code != 0 {
		t.Errorf("veto log verify: exit %d: %s%s", code, out, errOut)
	}
	printTable("Claude Code, a call that waits for a person", []row{
		{n: 1, tool: "Write", verdict: "waits", name: "asked: the session stops with the call pending (defer)"},
		{n: 2, tool: "Write", verdict: "waits", name: "resumed before an answer: still pending"},
		{n: 3, tool: "Write", verdict: "approved", name: "approved on veto's page (Chromium) by " + approvedBy},
		{n: 4, tool: "Write", verdict: "allowed", ran: true, name: "resumed: allowed by the approval, ran once"},
	}, "")
}

// askingSession is a sandbox whose user policy asks a person before the
// release notes are written, and the runs of a Claude Code session in
// print mode whose one call writes them: the first, and its resumption.
func askingSession(t *testing.T, more ...Call) (s *sandbox, first, resume runSpec, notes string) {
	t.Helper()
	node := clients(t)
	s = newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-code"); code != 0 {
		t.Fatalf("veto init claude-code: exit %d\n%s%s", code, out, errOut)
	}
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
		"rules:\n  - id: release-needs-person\n    match: {tool: Write}\n"+
		"    ask: 'args.file_path.endsWith(\"/RELEASE.txt\")'\n    reason: release_needs_person\n"+
		"    message: Writing the release notes needs a person's approval.\n", 0o644)
	notes = filepath.Join(s.ws, "RELEASE.txt")
	call := Call{Name: "write the release notes", Tool: "Write",
		Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, notes))}
	const session = "6f2c1a9e-4b7d-4c3e-9a8f-0d1e2f3a4b5c"
	first = claudeRun(t, s, node, append([]Call{call}, more...))
	flags := first.Args[2:] // after -p go
	first.Args = append(append([]string{"-p", "go"}, flags...), "--output-format", "json", "--session-id", session)
	resume = first
	resume.Args = append(append([]string{"-p", "--resume", session}, flags...), "--output-format", "json")
	return s, first, resume, notes
}

// TestClaudeCodeRefusedOnThePage: the person refuses the waiting call on
// the page; the resumed session gets veto's refusal (approval_refused) as
// the call's result, the call never runs, and the session ends.
func TestClaudeCodeRefusedOnThePage(t *testing.T) {
	need(t)
	chrome := chromiumPath(t)
	s, first, resume, notes := askingSession(t)
	waits(t, "the first run", play(t, first), notes)
	answerOnPage(t, s, chrome, callID(0), "deny")
	o := play(t, resume)
	var res claudeResult
	json.Unmarshal([]byte(o.Stdout), &res)
	r, answered := o.Results[callID(0)]
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("refused by the person, the call ran")
	}
	if !answered || !r.IsError || !strings.Contains(r.Content, "approval_refused") || res.StopReason == "tool_deferred" {
		t.Fatalf("the model got %+v, the session %+v; want veto's refusal and the session's end", r, res)
	}
	s.finish()
	byCall, text := vetoLog(t, s)
	var refused bool
	for _, e := range byCall[callID(0)] {
		if e.Kind == "invocation_denied" && e.Reason == "approval_refused" && e.Approval > 0 {
			refused = true
		}
	}
	if !refused {
		t.Errorf("veto log has no refusal naming the person's answer:\n%s", text)
	}
	printTable("Claude Code, a call a person refuses", []row{
		{n: 1, tool: "Write", verdict: "waits", name: "asked: the session stops with the call pending (defer)"},
		{n: 2, tool: "Write", verdict: "refused", name: "refused on veto's page (Chromium)"},
		{n: 3, tool: "Write", verdict: "blocked", name: "resumed: refused with approval_refused, never ran"},
	}, "")
}

// TestClaudeCodeWaitsBesideAnotherCall: the model asks for the call that
// needs a person and another in one message. The other runs. The first is
// never run without the person: held, when veto sees in the transcript
// that it was asked alone, as Claude Code streams each tool_use into an
// entry of its own (then approved on the page, it runs once on resume);
// or refused, when veto cannot see that (an entry holding both, where
// Claude Code would ignore defer, or none in time). Which one depends on
// when Claude Code writes the entry; both were seen on this machine, and
// the test says which.
func TestClaudeCodeWaitsBesideAnotherCall(t *testing.T) {
	need(t)
	chrome := chromiumPath(t)
	other := Call{Name: "write the changelog", Tool: "Write", With: true}
	s, first, resume, notes := askingSession(t, other)
	changelog := filepath.Join(s.ws, "CHANGELOG.txt")
	first.Calls[1].Input = json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, changelog))
	resume.Calls = first.Calls
	o := play(t, first)
	if _, err := os.Stat(changelog); err != nil {
		t.Fatalf("the call beside the asked one did not run: %v", err)
	}
	var res claudeResult
	json.Unmarshal([]byte(o.Stdout), &res)
	if res.StopReason != "tool_deferred" {
		// Refused: the model got veto's question as a refusal, and the
		// call did not run.
		r := o.Results[callID(0)]
		if _, err := os.Stat(notes); err == nil || !r.IsError || !strings.Contains(r.Content, "release_needs_person") {
			t.Fatalf("neither held nor refused: the model got %+v, the session %+v", r, res)
		}
		t.Logf("refused (veto could not see in the transcript that it was asked alone)")
		s.finish()
		return
	}
	t.Logf("held (asked alone, by the transcript)")
	waits(t, "the first run", o, notes)
	answerOnPage(t, s, chrome, callID(0), "approve")
	play(t, resume)
	if b, err := os.ReadFile(notes); err != nil || string(b) != "ran\n" {
		t.Fatalf("approved, the held call did not run: %v %q", err, b)
	}
	s.finish()
	byCall, text := vetoLog(t, s)
	count := func(id, kind string) (n int) {
		for _, e := range byCall[id] {
			if e.Kind == kind {
				n++
			}
		}
		return n
	}
	if count(callID(0), "observation") != 1 || count(callID(1), "observation") != 1 || count(callID(1), "invocation_allowed") != 1 {
		t.Errorf("each call ran once: %d and %d observations, %d allows of the second\n%s",
			count(callID(0), "observation"), count(callID(1), "observation"), count(callID(1), "invocation_allowed"), text)
	}
}

// claudeResult is what claude -p --output-format json prints at the end.
type claudeResult struct {
	StopReason string `json:"stop_reason"`
	IsError    bool   `json:"is_error"`
	Deferred   *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"deferred_tool_use"`
}

// waits checks a run ended with the script's first call pending, not run.
func waits(t *testing.T, what string, o outcome, file string) {
	t.Helper()
	var res claudeResult
	if err := json.Unmarshal([]byte(o.Stdout), &res); err != nil {
		t.Fatalf("%s: claude's output is not its JSON result: %v\n%.2000s\n%.2000s", what, err, o.Stdout, o.Stderr)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s: the call ran before a person approved it", what)
	}
	if o.Exit != 0 || res.StopReason != "tool_deferred" || res.Deferred == nil || res.Deferred.ID != callID(0) {
		t.Fatalf("%s: exit %d, %+v; want the call %s pending; the model got %+v\n%.2000s", what, o.Exit, res, callID(0), o.Results[callID(0)], o.Stderr)
	}
	if r, ok := o.Results[callID(0)]; ok {
		t.Fatalf("%s: the model got a result for the pending call: %+v", what, r)
	}
}

// answerOnPage starts veto ui on the sandbox's state, opens the URL it
// prints in headless Chromium and clicks button (approve or deny) on the
// call's question.
func answerOnPage(t *testing.T, s *sandbox, chrome, call, button string) {
	t.Helper()
	forgetTestBinary(t)
	cmd := exec.Command(filepath.Join(s.bin, "veto"), "ui", "--listen", "127.0.0.1:0")
	cmd.Dir, cmd.Env = s.ws, s.env()
	// As a person runs it: on a terminal of the test's (a pseudo-terminal
	// whose master the test holds), where alone the page's key is shown.
	stdout, err := os.Create(filepath.Join(t.TempDir(), "ui.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	term, err := presencetest.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	m, err := term.Expect(regexp.MustCompile(`open (http://127\.0\.0\.1:[0-9]+/ui/login\?k=[^\s]+)`), 20*time.Second)
	if err != nil {
		term.Close()
		t.Fatalf("veto ui showed no URL on its terminal: %v\nits stderr: %s", err, stderr.String())
	}
	url := m[1]
	if b, _ := os.ReadFile(stdout.Name()); strings.Contains(string(b), "k=") {
		t.Fatalf("veto ui printed the page's key on stdout: %q", b)
	}
	ctx := browsertest.New(t, chrome, 60*time.Second)
	q := fmt.Sprintf(`#questions article.question[data-call=%q][data-rule="release-needs-person"]`, call)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(q)); err != nil {
		t.Fatalf("the page does not show the call waiting: %v", err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(q+" button."+button), chromedp.WaitNotPresent(q)); err != nil {
		t.Fatalf("approving on the page: %v", err)
	}
	for name, c := range map[string]string{"the API key": s.apiKey, "the SSH key": s.sshKey, "the .env secret": s.envSecret, "the call's content": "ran\\n"} {
		if strings.Contains(html, c) {
			t.Errorf("the page shows %s", name)
		}
	}
}

// chromiumPath finds Debian's Chromium (.ci/run installs it).
func chromiumPath(t *testing.T) string { return browsertest.Chromium(t) }

// forgetTestBinary removes this test binary from the registry of guarded
// clients. Tests that run veto-hook straight from the test binary get it
// noted as the client (the hook's nearest ancestor that is not a shell),
// and veto ui, started by the test, is then refused as run by a guarded
// client, as it should be. A person's veto ui is never under the agent's
// client, so the test binary stops being one before it plays the person.
func forgetTestBinary(t *testing.T) {
	t.Helper()
	for _, dir := range presence.RegistryDirs() {
		ents, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d-*", os.Getpid())))
		for _, e := range ents {
			if err := os.Remove(e); err != nil {
				t.Fatalf("the test binary stays a guarded client: %v", err)
			}
		}
	}
}
