package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// clientRun is how one client plays a scenario file.
type clientRun struct {
	display, name string // the client's own name; veto init's
	file          string // the scenario file in testdata
	spec          func(t *testing.T, s *sandbox, calls []Call) runSpec
	setup         func(t *testing.T, s *sandbox) // after veto init, before the run
	// failIsError: a command that fails comes back to the model as an
	// error (Claude Code); else as output that says so (Gemini CLI).
	failIsError bool
	// sharedIDs: veto's events carry the model's tool call id (Claude
	// Code's tool_use_id); else the calls are matched to the decisions
	// in order, and each observation to its decision by veto's id.
	sharedIDs bool
	// denied: a refused call comes back to the model not as an error but
	// as a result that starts with this (Copilot CLI's "Denied by
	// preToolUse hook: "); "": as an error.
	denied string
	// knownGaps are veto's known bugs the run shows, each with where it
	// is filed: by scenario name (its observation is missing or has
	// another outcome), or "ids" (observations carry other ids than their
	// decisions). A gap is logged, not failed; once it is no longer seen
	// the test fails until it is removed here.
	knownGaps map[string]string
	// initArgs are veto init's flags after the client's name.
	initArgs []string
	// after, when set, checks more of the run once the table is checked
	// (pi: the refusal entries in its session file).
	after func(t *testing.T, s *sandbox, calls []Call)
}

// inOrder are the events of the kinds keep takes, in the order veto
// recorded them.
func inOrder(byCall map[string][]logEvent, keep func(kind string) bool) []logEvent {
	var evs []logEvent
	for _, es := range byCall {
		for _, e := range es {
			if keep(e.Kind) {
				evs = append(evs, e)
			}
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if a.Run == b.Run {
			return a.Seq < b.Seq
		}
		ta, _ := time.Parse(time.RFC3339Nano, a.Time)
		tb, _ := time.Parse(time.RFC3339Nano, b.Time)
		return ta.Before(tb)
	})
	return evs
}

// playScenarios plays a client's scenario file in a fresh sandbox and
// checks, call by call, what the endpoint got back, the world and veto
// log; then prints the client's table.
func playScenarios(t *testing.T, cr clientRun) {
	start := time.Now()
	s := newSandbox(t)
	if code, out, errOut := s.veto(append([]string{"init", cr.name}, cr.initArgs...)...); code != 0 {
		t.Fatalf("veto init %s: exit %d\n%s%s", cr.name, code, out, errOut)
	}
	if cr.setup != nil {
		cr.setup(t, s)
	}
	calls := loadCalls(t, s, cr.file)
	s.snapshot(calls)
	o := play(t, cr.spec(t, s, calls))
	s.finish()
	if o.Err != "" {
		t.Errorf("%s", o.Err)
	}
	if o.Exit != 0 {
		t.Errorf("%s exited %d", cr.display, o.Exit)
	}
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	t.Logf("%s offered %d tools: %s", cr.display, len(o.Tools), strings.Join(o.Tools, ", "))
	if len(o.Unknown) > 0 {
		t.Logf("requests the endpoint does not script: %v", o.Unknown)
	}
	byCall, logText := vetoLog(t, s)
	for name, c := range map[string]string{"the API key": s.apiKey, "the SSH key": s.sshKey, "the .env secret": s.envSecret} {
		if strings.Contains(logText, c) {
			t.Errorf("%s is in veto log's output", name)
		}
	}
	if code, out, errOut := s.veto("log", "verify"); code != 0 {
		t.Errorf("veto log verify: exit %d: %s%s", code, out, errOut)
	}

	// Without shared ids the calls are matched, in order and by tool, to
	// the decisions and the observations veto made.
	decided, observed := inOrder(byCall, isDecision), inOrder(byCall, func(k string) bool { return k == "observation" })
	mismatched := 0
	seen := map[string]bool{} // the known gaps seen

	var rows []row
	for i, c := range calls {
		id := callID(i)
		r, answered := o.Results[id]
		var decisions, observations []logEvent
		if cr.sharedIDs {
			for _, e := range byCall[id] {
				switch {
				case isDecision(e.Kind):
					decisions = append(decisions, e)
				case e.Kind == "observation":
					observations = append(observations, e)
				}
			}
		} else if len(decided) > 0 && decided[0].Tool == c.Tool {
			decisions, decided = decided[:1], decided[1:]
			if decisions[0].Kind == "invocation_allowed" && len(observed) > 0 && observed[0].Tool == c.Tool {
				observations, observed = observed[:1], observed[1:]
				if observations[0].CallID != decisions[0].CallID {
					mismatched++
				}
			}
		}
		logID := id
		if len(decisions) > 0 {
			logID = decisions[0].CallID
		}
		rw := row{n: i + 1, tool: c.Tool, verdict: "none", name: c.Name}
		if len(decisions) == 1 {
			d := decisions[0]
			if d.Tool != c.Tool {
				rw.tool = c.Tool + " (veto: " + d.Tool + ")"
			}
			rw.verdict = map[bool]string{true: "allow", false: "DENY"}[d.Kind == "invocation_allowed"]
			if d.Rule != "" {
				rw.why = d.Rule + "/" + d.Reason
			} else {
				rw.why = d.Reason
			}
		}
		// Ran: veto observed it, or it was allowed and the client sent
		// back its output (a call that ran without an observation).
		rw.ran = len(observations) > 0
		if rw.ran {
			rw.outcome = observations[0].Outcome
		} else if rw.verdict == "allow" && answered && !r.IsError {
			rw.ran, rw.outcome = true, "not observed"
		}
		rows = append(rows, rw)

		fail := func(format string, args ...any) {
			t.Errorf("#%d %s (%s): %s\n  the client sent back (is_error %v): %.600s", i+1, c.Name, c.Tool, fmt.Sprintf(format, args...), r.IsError, r.Content)
		}
		if !answered {
			fail("the endpoint got no result for %s", id)
			continue
		}
		if len(decisions) != 1 {
			fail("veto log holds %d decisions for %s, want 1", len(decisions), logID)
		}
		switch c.Want {
		case "allow", "fail":
			if rw.verdict != "allow" {
				fail("veto's verdict is %s, want allow", rw.verdict)
			}
			if wantErr := c.Want == "fail" && cr.failIsError; r.IsError != wantErr {
				fail("is_error is %v, want %v", r.IsError, wantErr)
			}
			if c.Output != "" && !strings.Contains(r.Content, c.Output) {
				fail("the output does not hold %q", c.Output)
			}
			want := map[string]string{"allow": "succeeded", "fail": "failed"}[c.Want]
			if len(observations) != 1 || observations[0].Outcome != want {
				if gap, known := cr.knownGaps[c.Name]; known {
					seen[c.Name] = true
					t.Logf("KNOWN GAP (%s): #%d %s: veto log holds %d observations (%v), want one, %s", gap, i+1, c.Name, len(observations), observations, want)
				} else {
					fail("veto log holds %d observations (%v) for %s, want one, %s", len(observations), observations, logID, want)
				}
			}
		case "deny":
			if rw.verdict != "DENY" {
				fail("veto's verdict is %s, want deny", rw.verdict)
			}
			if !refused(cr, r) {
				fail("the client sent back a result that is not a refusal")
			}
			if c.Rule != "" && !strings.HasPrefix(rw.why, c.Rule+"/") {
				fail("decided by %s, want rule %s", rw.why, c.Rule)
			}
			// veto's reason text, whole: it names the rule.
			if d := decisions; len(d) == 1 && d[0].Rule != "" && !strings.Contains(r.Content, d[0].Rule) {
				fail("veto's reason (rule %s) is not in what the model got", d[0].Rule)
			}
			if len(observations) != 0 {
				fail("a refused call has %d observations", len(observations))
			}
			// The explanation reaches the model whole, with what to do
			// instead, whatever words the call's description shares with
			// it: not the generic text the leak guard falls back to.
			if !strings.Contains(strings.ToLower(r.Content), "ask the user") || strings.Contains(r.Content, "refused this call (") {
				fail("the denial's explanation did not reach the model whole")
			}
		default:
			t.Fatalf("#%d: want is allow, fail or deny, not %q", i+1, c.Want)
		}
		for _, p := range c.Unchanged {
			if b, _ := os.ReadFile(p); !bytes.Equal(b, s.before[p]) {
				fail("%s changed", p)
			}
		}
		for _, p := range c.Absent {
			if _, err := os.Stat(p); err == nil {
				fail("%s exists: the call ran", p)
			}
		}
		for p, want := range c.Holds {
			if b, _ := os.ReadFile(p); !strings.Contains(string(b), want) {
				fail("%s does not hold %q", p, want)
			}
		}
	}
	for name, gap := range cr.knownGaps {
		if name != "ids" && !seen[name] {
			t.Errorf("the known gap %q (%s) is no longer seen; remove it", name, gap)
		}
	}
	if !cr.sharedIDs {
		if len(decided) > 0 || len(observed) > 0 {
			t.Errorf("veto log holds %d decisions and %d observations no call was matched to", len(decided), len(observed))
		}
		gap, known := cr.knownGaps["ids"]
		switch {
		case mismatched > 0 && known:
			t.Logf("KNOWN GAP (%s): %d calls' observations carry another id than their decisions", gap, mismatched)
		case mismatched > 0:
			t.Errorf("%d calls' observations carry another id than their decisions", mismatched)
		case known:
			t.Errorf("the known gap %q is no longer seen: every observation carries its decision's id; remove it", gap)
		}
	}
	if refs := s.git(s.remote, "for-each-ref"); refs != s.refsBefore {
		t.Errorf("the remote's refs moved:\nbefore %s\nafter %s", s.refsBefore, refs)
	}
	if cr.after != nil {
		cr.after(t, s, calls)
	}
	if t.Failed() {
		t.Logf("%s stdout: %.4000s\nstderr: %.4000s", cr.display, o.Stdout, o.Stderr)
	}
	printTable(cr.display, rows, fmt.Sprintf(" (%d scenarios, client run %s, %d requests, whole test %s)",
		len(calls), o.Duration.Round(100*time.Millisecond), o.Requests, time.Since(start).Round(100*time.Millisecond)))
}

// loadCalls reads a scenario file with the sandbox's paths in it.
func loadCalls(t *testing.T, s *sandbox, name string) []Call {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var calls []Call
	if err := json.Unmarshal([]byte(s.expand(string(b))), &calls); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return calls
}

// logEvent is the part of a stored event the suite reads.
type logEvent struct {
	Run     string `json:"run"`
	Seq     int    `json:"seq"`
	Time    string `json:"time"`
	Kind    string `json:"kind"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Outcome string `json:"outcome"`
	// A question's and its answer's.
	Awaiting string `json:"awaiting"`
	Approval int    `json:"approval"`
	Actor    struct {
		Kind  string `json:"kind"`
		ID    string `json:"id"`
		Agent string `json:"agent"`
	} `json:"actor"`
	For struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	} `json:"for"`
}

// vetoLog is every event veto log prints, by call id.
func vetoLog(t *testing.T, s *sandbox) (map[string][]logEvent, string) {
	t.Helper()
	code, out, errOut := s.veto("log", "--all", "--json")
	if code != 0 {
		t.Fatalf("veto log: exit %d: %s", code, errOut)
	}
	byCall := map[string][]logEvent{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e logEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("veto log: a line that is not an event: %v", err)
		}
		byCall[e.CallID] = append(byCall[e.CallID], e)
	}
	return byCall, out
}

// row is one line of a client's table.
type row struct {
	n             int
	tool, verdict string
	ran           bool
	outcome       string // the observation's, when not succeeded
	why, name     string
}

// printTable prints a client's table of calls to stdout, which go test
// -v (as .ci/run runs it) shows.
func printTable(client string, rows []row, extra string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "\n%s%s\n", client, extra)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTOOL\tVERDICT\tRAN\tRULE/REASON\tSCENARIO")
	for _, r := range rows {
		ran := "no"
		if r.ran {
			ran = "yes"
			if r.outcome != "" && r.outcome != "succeeded" {
				ran += " (" + r.outcome + ")"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.n, r.tool, r.verdict, ran, r.why, r.name)
	}
	tw.Flush()
	fmt.Print(b.String())
}

// isDecision reports whether an event kind is a decision.
func isDecision(kind string) bool {
	return kind == "invocation_allowed" || kind == "invocation_denied" || kind == "tool_denied"
}

// refused reports whether r is how cr hands the model a refused call.
func refused(cr clientRun, r ToolResult) bool {
	if cr.denied != "" {
		return strings.HasPrefix(r.Content, cr.denied)
	}
	return r.IsError
}
