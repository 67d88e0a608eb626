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
		API:      "anthropic",
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
	Time    string `json:"time"`
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
	playScenarios(t, clientRun{display: "Claude Code", name: "claude-code", file: "claude-code.json",
		spec:        func(t *testing.T, s *sandbox, calls []Call) runSpec { return claudeRun(t, s, node, calls) },
		failIsError: true, sharedIDs: true})
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
