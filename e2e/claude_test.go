package e2e

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto/sqlite"
)

// claudeRun is the spec of one Claude Code run in the sandbox.
func claudeRun(t *testing.T, s *sandbox, node string, calls []Call) runSpec {
	claude := filepath.Join(node, "node_modules", ".bin", "claude")
	return runSpec{
		Program: claude,
		Args:    []string{"-p", "go", "--dangerously-skip-permissions", "--max-turns", "60"},
		Env: append(s.env(),
			"ANTHROPIC_API_KEY="+s.apiKey,
			"IS_SANDBOX=1", // --dangerously-skip-permissions as root
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		Dir:      s.ws,
		BaseEnv:  "ANTHROPIC_BASE_URL",
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  3 * time.Minute,
	}
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
	Kind    string `json:"kind"`
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	Outcome string `json:"outcome"`
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
	n                 int
	tool, verdict     string
	ran               bool
	outcome           string // the observation's, when not succeeded
	why, name, result string
}

func printTable(t *testing.T, client string, rows []row, extra string) {
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
	// Printed whatever -v says: .ci/run shows the tables.
	fmt.Print(b.String())
}

// isDecision reports whether an event kind is a decision.
func isDecision(kind string) bool {
	return kind == "invocation_allowed" || kind == "invocation_denied" || kind == "tool_denied"
}

// TestClaudeCode plays the scenarios in the real Claude Code: what ran,
// what was refused with veto's reason, the world after, veto's log.
func TestClaudeCode(t *testing.T) {
	need(t)
	node := clients(t)
	start := time.Now()
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-code"); code != 0 {
		t.Fatalf("veto init claude-code: exit %d\n%s%s", code, out, errOut)
	}
	calls := loadCalls(t, s, "claude-code.json")
	s.snapshot(calls)
	o := play(t, claudeRun(t, s, node, calls))
	s.finish()
	if o.Err != "" {
		t.Errorf("%s", o.Err)
	}
	if o.Exit != 0 {
		t.Errorf("claude exited %d\nstdout: %s\nstderr: %s", o.Exit, o.Stdout, o.Stderr)
	}
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	t.Logf("Claude Code offered %d tools: %s", len(o.Tools), strings.Join(o.Tools, ", "))
	if len(o.Unknown) > 0 {
		t.Logf("requests the endpoint does not script: %v", o.Unknown)
	}
	byCall, _ := vetoLog(t, s)

	var rows []row
	for i, c := range calls {
		id := callID(i)
		r, answered := o.Results[id]
		ev := byCall[id]
		var decisions, observations []logEvent
		for _, e := range ev {
			switch {
			case isDecision(e.Kind):
				decisions = append(decisions, e)
			case e.Kind == "observation":
				observations = append(observations, e)
			}
		}
		rw := row{n: i + 1, tool: c.Tool, verdict: "none", name: c.Name, result: r.Content}
		if len(decisions) == 1 {
			d := decisions[0]
			rw.verdict = map[bool]string{true: "allow", false: "DENY"}[d.Kind == "invocation_allowed"]
			if d.Rule != "" {
				rw.why = d.Rule + "/" + d.Reason
			} else {
				rw.why = d.Reason
			}
		}
		rw.ran = len(observations) > 0
		if rw.ran {
			rw.outcome = observations[0].Outcome
		}
		rows = append(rows, rw)

		fail := func(format string, args ...any) {
			t.Errorf("#%d %s (%s): %s\n  the client sent back (is_error %v): %.600s", i+1, c.Name, c.Tool, fmt.Sprintf(format, args...), r.IsError, r.Content)
		}
		if !answered {
			fail("the endpoint got no tool_result for %s", id)
			continue
		}
		if len(decisions) != 1 {
			fail("veto log holds %d decisions for %s, want 1", len(decisions), id)
		}
		switch c.Want {
		case "allow", "fail":
			if rw.verdict != "allow" {
				fail("veto's verdict is %s, want allow", rw.verdict)
			}
			if r.IsError != (c.Want == "fail") {
				fail("is_error is %v, want %v", r.IsError, c.Want == "fail")
			}
			if c.Output != "" && !strings.Contains(r.Content, c.Output) {
				fail("the output does not hold %q", c.Output)
			}
			want := map[string]string{"allow": "succeeded", "fail": "failed"}[c.Want]
			if len(observations) != 1 || observations[0].Outcome != want {
				fail("veto log holds %d observations (%v) for %s, want one, %s", len(observations), observations, id, want)
			}
		case "deny":
			if rw.verdict != "DENY" {
				fail("veto's verdict is %s, want deny", rw.verdict)
			}
			if !r.IsError {
				fail("the client sent back a result that is not an error")
			}
			if c.Rule != "" && !strings.HasPrefix(rw.why, c.Rule+"/") {
				fail("decided by %s, want rule %s", rw.why, c.Rule)
			}
			// veto's reason text, whole: the rule and the reason code.
			if d := decisions; len(d) == 1 && d[0].Rule != "" && !strings.Contains(r.Content, d[0].Rule) {
				fail("veto's reason (rule %s) is not in what the model got", d[0].Rule)
			}
			if len(observations) != 0 {
				fail("a refused call has %d observations", len(observations))
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
	if refs := s.git(s.remote, "for-each-ref"); refs != s.refsBefore {
		t.Errorf("the remote's refs moved:\nbefore %s\nafter %s", s.refsBefore, refs)
	}
	if t.Failed() {
		t.Logf("claude stdout: %s\nstderr: %s", o.Stdout, o.Stderr)
	}
	printTable(t, "Claude Code", rows, fmt.Sprintf(" (%d scenarios, client run %s, %d requests, whole test %s)",
		len(calls), o.Duration.Round(100*time.Millisecond), o.Requests, time.Since(start).Round(100*time.Millisecond)))
}

// A failure of the hook itself, set up in a sandbox veto init wrote.
type failure struct {
	name  string
	setup func(t *testing.T, s *sandbox) (undo func())
	// readOnly are the sandbox's directories (relative to its root) made
	// read-only in the namespace.
	readOnly []string
	// ran: the call is expected to run (a measurement of the client's
	// default, not veto's registration).
	ran bool
	// says is text the model must get back when the call is blocked: who
	// blocked it and why.
	says string
}

// TestClaudeCodeFailsClosed breaks veto each way it can break and checks
// the real Claude Code blocks the call (a new file's Write, which veto
// allows when it runs).
func TestClaudeCodeFailsClosed(t *testing.T) {
	need(t)
	node := clients(t)
	settings := func(s *sandbox) string { return filepath.Join(s.ws, ".claude", "settings.json") }
	edit := func(t *testing.T, s *sandbox, from, to string) {
		b, err := os.ReadFile(settings(s))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(from)) {
			t.Fatalf("the settings hold no %q:\n%s", from, b)
		}
		if err := os.WriteFile(settings(s), bytes.ReplaceAll(b, []byte(from), []byte(to)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	newState := func(t *testing.T, s *sandbox) string {
		p := filepath.Join(s.state, "veto", "veto.db")
		st, err := sqlite.Open(context.Background(), p, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		return p
	}
	cases := []failure{
		{name: "the hook program is missing", setup: func(t *testing.T, s *sandbox) func() {
			if err := os.Rename(filepath.Join(s.bin, "veto-hook"), filepath.Join(s.bin, "veto-hook.moved")); err != nil {
				t.Fatal(err)
			}
			return nil
		}, says: `blocking because onFailure is "block"`},
		{name: "the client name is mistyped", setup: func(t *testing.T, s *sandbox) func() {
			edit(t, s, "veto-hook claude-code", "veto-hook claude")
			return nil
		}, says: `blocking because onFailure is "block"`},
		{name: "the policy file is broken", setup: func(t *testing.T, s *sandbox) func() {
			s.write("home/src/project/.veto/veto.yaml", "files: [this is not\n  a policy\n", 0o644)
			return nil
		}, says: "veto's policy does not load"},
		{name: "the state is locked", setup: func(t *testing.T, s *sandbox) func() {
			p := newState(t, s)
			db, err := sql.Open("sqlite", "file:"+p)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
				t.Fatal(err)
			}
			return func() {
				conn.ExecContext(context.Background(), "ROLLBACK")
				conn.Close()
				db.Close()
			}
		}, says: "veto did not decide within 2s, so the call is blocked"},
		{name: "the state is read-only", readOnly: []string{"state"}, setup: func(t *testing.T, s *sandbox) func() {
			newState(t, s)
			return nil
		}, says: "veto cannot open its state, so the call is blocked"},
		{name: "the state cannot be opened", setup: func(t *testing.T, s *sandbox) func() {
			// Its directory is a file.
			os.RemoveAll(s.state)
			s.write("state", "not a directory\n", 0o644)
			return nil
		}, says: "veto cannot open its state, so the call is blocked"},
		{name: "the hook program is missing, without onFailure (Claude Code's default)", ran: true,
			setup: func(t *testing.T, s *sandbox) func() {
				edit(t, s, `"onFailure": "block",`, "")
				if err := os.Rename(filepath.Join(s.bin, "veto-hook"), filepath.Join(s.bin, "veto-hook.moved")); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
	}
	var rows []row
	for i, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			s := newSandbox(t)
			if code, out, errOut := s.veto("init", "claude-code"); code != 0 {
				t.Fatalf("veto init claude-code: exit %d\n%s%s", code, out, errOut)
			}
			marker := filepath.Join(s.ws, "failclosed.txt")
			calls := []Call{{Name: fc.name, Tool: "Write", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, marker))}}
			if undo := fc.setup(t, s); undo != nil {
				defer undo()
			}
			spec := claudeRun(t, s, node, calls)
			for _, d := range fc.readOnly {
				spec.ReadOnly = append(spec.ReadOnly, filepath.Join(s.root, d))
			}
			o := play(t, spec)
			s.finish()
			r, answered := o.Results[callID(0)]
			_, err := os.Stat(marker)
			ran := err == nil
			verdict := "blocked"
			if ran {
				verdict = "ran"
			}
			rows = append(rows, row{n: i + 1, tool: "Write", verdict: verdict, ran: ran,
				why: fmt.Sprintf("claude exit %d, %s", o.Exit, o.Duration.Round(100*time.Millisecond)), name: fc.name})
			t.Logf("the model got (is_error %v): %.500s", r.IsError, r.Content)
			for _, name := range o.Leaks {
				t.Errorf("%s reached the model endpoint", name)
			}
			switch {
			case !answered && !ran:
				t.Logf("no tool_result reached the endpoint; claude exit %d\nstdout: %.2000s\nstderr: %.2000s", o.Exit, o.Stdout, o.Stderr)
			case !answered:
				t.Errorf("the call ran and no tool_result reached the endpoint")
			case ran != fc.ran:
				t.Errorf("the call ran: %v, want %v (is_error %v: %.500s)", ran, fc.ran, r.IsError, r.Content)
			case !ran && !r.IsError:
				t.Errorf("the call did not run, yet the result is not an error")
			case !ran && !strings.Contains(r.Content, fc.says):
				t.Errorf("the model's result does not say %q", fc.says)
			}
			if t.Failed() {
				t.Logf("claude exit %d\nstdout: %.3000s\nstderr: %.3000s", o.Exit, o.Stdout, o.Stderr)
			}
		})
	}
	printTable(t, "Claude Code, fail closed", rows, fmt.Sprintf(" (%d cases)", len(cases)))
}
