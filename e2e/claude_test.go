package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// claudeRun is the spec of one Claude Code run in the sandbox.
func claudeRun(t *testing.T, s *sandbox, node string, calls []Call) runSpec {
	claude := filepath.Join(node, "node_modules", ".bin", "claude")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mcp, _ := json.Marshal(map[string]any{"mcpServers": mcpServers(self)})
	s.write("mcp.json", string(mcp), 0o644)
	return runSpec{
		Program: claude,
		Args: []string{"-p", "go", "--dangerously-skip-permissions", "--max-turns", "60",
			"--mcp-config", filepath.Join(s.root, "mcp.json"), "--strict-mcp-config"},
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
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return claudeRun(t, s, node, calls) },
		setup: describeNotes, failIsError: true, sharedIDs: true})
}
