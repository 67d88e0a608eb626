package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// attackSession is the session id of the run that attacks veto's control
// plane: fixed, so that its events are told from the asking session's.
const attackSession = "0b7e4d2a-1c3f-4e5a-8b9c-7d6e5f4a3b2c"

// controlCalls are the attempts of testdata/control-plane.json on the
// sandbox, aimed at the question of run and call: $RUN and $CALL stand
// for them, $STATE for veto's state file.
func controlCalls(t *testing.T, s *sandbox, run, call string) []Call {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "control-plane.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("$RUN", run, "$CALL", call, "$STATE", filepath.Join(s.state, "veto", "veto.db")).Replace(string(b))
	var calls []Call
	if err := json.Unmarshal([]byte(s.expand(text)), &calls); err != nil {
		t.Fatalf("control-plane.json: %v", err)
	}
	return calls
}

// sessionOf is the --session-id of a run's arguments.
func sessionOf(t *testing.T, spec runSpec) string {
	t.Helper()
	i := slices.Index(spec.Args, "--session-id")
	if i < 0 || i+1 >= len(spec.Args) {
		t.Fatal("the run has no --session-id")
	}
	return spec.Args[i+1]
}

// TestClaudeCodeAgentCannotAnswerForThePerson (issue 26's Show): a call
// of one session of the real Claude Code waits for a person; then, in
// another session, the scripted model tries in turn to answer it itself
// (veto approve), to take veto away (veto uninstall claude-code), to get
// the page's key (veto ui), to approve it through the service with the
// operator's $VETO_TOKEN, to edit veto's state with sqlite3, and to Write
// the user's policy file. Each is refused by veto's gate (any rule: the
// test does not pin which); the files they aim at are as they were; the
// question stays open, listed as waiting and shown on the page, until the
// person approves it there; the resumed session then runs the call once;
// veto log holds every refusal and the person's approval.
//
// Every attempt aims at the sandbox (its state, its settings, its policy,
// a curl that only notes it ran) inside the client's network namespace.
func TestClaudeCodeAgentCannotAnswerForThePerson(t *testing.T) {
	need(t)
	chrome := chromiumPath(t)
	s, first, resume, notes := askingSession(t)
	run := sessionOf(t, first)

	// 1. The question: the first session stops with the call pending.
	waits(t, "the asking session", play(t, first), notes)

	// 2. The attacks, in a session of their own, the operator's token in
	// its environment as docs/serve.md once had it.
	token := "veto-e2e-token-canary-" + filepath.Base(s.root)
	calls := controlCalls(t, s, run, callID(0))
	attack := claudeRun(t, s, clients(t), calls)
	attack.Args = append(attack.Args, "--session-id", attackSession)
	attack.Env = append(attack.Env, "VETO_TOKEN="+token)
	attack.Canaries["the operator's VETO_TOKEN"] = token
	s.snapshot(calls)
	t.Cleanup(s.reap)
	o := play(t, attack)
	s.reap()
	var rows []row
	for i, c := range calls {
		r, answered := o.Results[callID(i)]
		refusedByVeto := answered && r.IsError && strings.Contains(r.Content, "veto blocked this")
		verdict := "deny"
		if !refusedByVeto {
			verdict = "ALLOWED"
			t.Errorf("%s: not refused by veto; the model got %+v", c.Name, r)
		}
		rows = append(rows, row{n: i + 1, tool: c.Tool, verdict: verdict, ran: !refusedByVeto, name: c.Name})
		for _, p := range c.Unchanged {
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, s.before[p]) {
				t.Errorf("%s: %s changed (%v)", c.Name, p, err)
			}
		}
		for _, p := range c.Absent {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s exists", c.Name, p)
			}
		}
	}
	for _, name := range o.Leaks {
		t.Errorf("the attacking session: %s reached the model endpoint", name)
	}

	// 3. The question stays open: listed as waiting, for the person.
	code, out, errOut := s.veto("approve")
	if code != 0 || !strings.Contains(out, run) || !strings.Contains(out, callID(0)) {
		t.Errorf("veto approve does not list the question as waiting (exit %d):\n%s%s", code, out, errOut)
	}

	// 4. The person answers on the page (which shows it waiting), and the
	// resumed session runs the call, once.
	answerOnPage(t, s, chrome, callID(0), "approve")
	play(t, resume)
	if b, err := os.ReadFile(notes); err != nil || string(b) != "ran\n" {
		t.Errorf("approved by the person, the call did not run: %v %q", err, b)
	}
	s.finish()

	// 5. veto log: every attempt refused, the approval the person's.
	byCall, text := vetoLog(t, s)
	for i, c := range calls {
		var decisions []string
		for _, e := range byCall[callID(i)] {
			if e.Run == attackSession && isDecision(e.Kind) {
				decisions = append(decisions, e.Kind+" "+e.Rule+"/"+e.Reason)
			}
		}
		if len(decisions) == 0 || slices.ContainsFunc(decisions, func(d string) bool { return strings.HasPrefix(d, "invocation_allowed") }) {
			t.Errorf("veto log, %s: decisions %q, want refusals only", c.Name, decisions)
		}
		rows[i].why = strings.Join(decisions, ", ")
	}
	var approvedBy []string
	for _, e := range byCall[callID(0)] {
		if e.Run == run && e.Kind == "approval_granted" {
			approvedBy = append(approvedBy, e.Actor.Kind+":"+e.Actor.ID)
		}
	}
	if len(approvedBy) != 1 {
		t.Errorf("veto log: the question was approved %d times (by %v), want once, by the person on the page\n%s", len(approvedBy), approvedBy, text)
	}
	rows = append(rows, row{n: len(rows) + 1, tool: "Write", verdict: "allowed", ran: true,
		why: fmt.Sprintf("approved by %v", approvedBy), name: "the person approves on the page; the resumed session runs the call"})
	printTable("Claude Code, the agent against veto's control plane", rows, "")
}

// reap ends what a session left running in the sandbox (a veto ui that
// Claude Code's Bash tool moved to the background when its timeout came):
// each process, by its id, whose environment has the sandbox's HOME.
func (s *sandbox) reap() {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(env), "\x00"), "HOME="+s.home) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}
