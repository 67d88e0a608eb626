package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// changedCanary is in the notes server's save description once it
// changes: a description the gateway has not pinned must never reach the
// model.
const changedCanary = "VETO-E2E-CHANGED-DESCRIPTION"

// TestClaudeCodeMCPGateway plays the real Claude Code in a project whose
// .mcp.json `veto init claude-code --mcp` wrapped, and no hook of veto's:
// veto mcp alone decides the calls of two servers, npm's reference
// filesystem server and the test binary's notes server (which logs every
// request it gets). An allowed call returns the server's result; a refused
// one never reaches the server (the file not written, the notes server's
// log); and after the notes server changes its save tool's description
// mid-session (it says so with notifications/tools/list_changed), a call of
// save is refused with the pin rule's reason and the new description never
// reaches the model.
func TestClaudeCodeMCPGateway(t *testing.T) {
	need(t, "node")
	start := time.Now()
	node := clients(t)
	refServers := npmCI(t, filepath.Join("..", "mcpgate", "testdata", "node"))
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := newSandbox(t)
	serverLog := filepath.Join(s.root, "notes-server.log")
	desc := filepath.Join(s.root, "notes-description.txt")
	// The project's servers as a person writes them. The filesystem server
	// may reach the whole HOME: what keeps the key and the dotfiles safe
	// is veto, not the server's roots.
	project, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"filesystem": map[string]any{"type": "stdio", "command": nodeBin,
			"args": []string{filepath.Join(refServers, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), s.home}},
		"notes": map[string]any{"type": "stdio", "command": self, "args": []string{},
			"env": map[string]string{mcpEnv: "1", mcpLogEnv: serverLog, mcpDescEnv: desc}},
	}}, "", "  ")
	s.write("home/src/project/.mcp.json", string(project), 0o644)
	code, out, errOut := s.veto("init", "claude-code", "--mcp")
	if code != 0 || !strings.Contains(out, "filesystem, notes") {
		t.Fatalf("veto init claude-code --mcp: exit %d\n%s%s", code, out, errOut)
	}
	var wrapped struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(s.ws, ".mcp.json"))
	if err := json.Unmarshal(b, &wrapped); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"filesystem", "notes"} {
		w := wrapped.MCPServers[name]
		if filepath.Base(w.Command) != "veto" || len(w.Args) < 3 || w.Args[0] != "mcp" || !slices.Contains(w.Args, name) {
			t.Fatalf("veto init --mcp left %s as %s %v", name, w.Command, w.Args)
		}
	}
	t.Logf(".mcp.json after veto init claude-code --mcp:\n%s", b)
	// Claude Code starts a project's .mcp.json servers only once they are
	// approved: in the user's settings, for a run without a terminal.
	s.write("home/.claude/settings.json", `{"enabledMcpjsonServers": ["filesystem", "notes"]}`, 0o644)

	calls := loadCalls(t, s, "claude-code-mcp.json")
	s.snapshot(calls)
	claude := filepath.Join(node, "node_modules", ".bin", "claude")
	o := play(t, runSpec{
		Program: claude,
		Args:    []string{"-p", "go", "--dangerously-skip-permissions", "--max-turns", "40"},
		Env: append(s.env(),
			"ANTHROPIC_API_KEY="+s.apiKey,
			"IS_SANDBOX=1", // --dangerously-skip-permissions as root
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		Dir:     s.ws,
		BaseEnv: "ANTHROPIC_BASE_URL",
		API:     "anthropic",
		Calls:   calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey,
			"the changed description": changedCanary},
		Timeout: 3 * time.Minute,
	})
	s.finish()
	if o.Err != "" {
		t.Errorf("%s", o.Err)
	}
	if o.Exit != 0 {
		t.Errorf("Claude Code exited %d", o.Exit)
	}
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	// Claude Code 2.1.332 defers MCP tools behind its ToolSearch (they are
	// not among the first request's tools) and runs them by name; what
	// each call did is checked below.
	t.Logf("Claude Code offered %d tools: %s", len(o.Tools), strings.Join(o.Tools, ", "))
	byCall, logText := vetoLog(t, s)
	for name, c := range map[string]string{"the API key": s.apiKey, "the SSH key": s.sshKey, "the .env secret": s.envSecret} {
		if strings.Contains(logText, c) {
			t.Errorf("%s is in veto log's output", name)
		}
	}
	if code, out, errOut := s.veto("log", "verify"); code != 0 {
		t.Errorf("veto log verify: exit %d: %s%s", code, out, errOut)
	}
	// Every event is the gateway's: no hook of veto's is registered.
	var runs []string
	for _, es := range byCall {
		for _, e := range es {
			if e.Run != "" && !slices.Contains(runs, e.Run) {
				runs = append(runs, e.Run)
			}
		}
	}
	slices.Sort(runs)
	for _, r := range runs {
		if !strings.HasPrefix(r, "mcp-filesystem-") && !strings.HasPrefix(r, "mcp-notes-") {
			t.Errorf("veto log holds a run %s that is not one of the gateways'", r)
		}
	}
	logged, _ := os.ReadFile(serverLog)
	t.Logf("the notes server's log:\n%s", logged)

	// The gateway's call ids are its own: calls, decisions and
	// observations are matched in order, by tool.
	decided, observed := inOrder(byCall, isDecision), inOrder(byCall, func(k string) bool { return k == "observation" })
	var rows []row
	for i, c := range calls {
		id := callID(i)
		r, answered := o.Results[id]
		var decision, observation *logEvent
		if len(decided) > 0 && decided[0].Tool == c.Tool {
			decision, decided = &decided[0], decided[1:]
			if decision.Kind == "invocation_allowed" && len(observed) > 0 && observed[0].Tool == c.Tool {
				observation, observed = &observed[0], observed[1:]
				if observation.CallID != decision.CallID {
					t.Errorf("#%d %s: its observation carries the id %s, its decision %s", i+1, c.Name, observation.CallID, decision.CallID)
				}
			}
		}
		rw := row{n: i + 1, tool: c.Tool, verdict: "none", name: c.Name}
		if decision != nil {
			rw.verdict = map[bool]string{true: "allow", false: "DENY"}[decision.Kind == "invocation_allowed"]
			rw.why = decision.Reason
			if decision.Rule != "" {
				rw.why = decision.Rule + "/" + decision.Reason
			}
		}
		if observation != nil {
			rw.ran, rw.outcome = true, observation.Outcome
		}
		// The notes server's own word: did the call reach it?
		var in struct {
			Path string `json:"path"`
		}
		json.Unmarshal(c.Input, &in)
		reached := strings.Contains(string(logged), "tools/call save "+in.Path+"\n")
		if strings.HasPrefix(c.Tool, "mcp__notes__") && reached {
			rw.ran = true
			if observation == nil {
				rw.outcome = "not observed"
			}
		}
		rows = append(rows, rw)

		fail := func(format string, args ...any) {
			t.Errorf("#%d %s (%s): %s\n  the client sent back (is_error %v): %.600s", i+1, c.Name, c.Tool, fmt.Sprintf(format, args...), r.IsError, r.Content)
		}
		if !answered {
			fail("the endpoint got no result for %s", id)
			continue
		}
		if decision == nil {
			fail("veto log holds no decision for it")
		}
		switch c.Want {
		case "allow":
			if rw.verdict != "allow" {
				fail("veto's verdict is %s, want allow", rw.verdict)
			}
			if r.IsError {
				fail("the client sent back an error")
			}
			if c.Output != "" && !strings.Contains(r.Content, c.Output) {
				fail("the output does not hold %q: the server's result did not come back", c.Output)
			}
			if observation == nil || observation.Outcome != "succeeded" {
				fail("veto log holds no observation that it succeeded (%v)", observation)
			}
			if strings.HasPrefix(c.Tool, "mcp__notes__") && !reached {
				fail("the notes server's log holds no call of it")
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
			if c.Reason != "" && !strings.HasSuffix(rw.why, "/"+c.Reason) && rw.why != c.Reason {
				fail("decided by %s, want reason %s", rw.why, c.Reason)
			}
			// veto's reason reaches the model whole: the rule, the reason
			// code, and what to do instead.
			if decision != nil && (!strings.Contains(r.Content, "reason "+decision.Reason) || !strings.Contains(r.Content, "ask the user")) {
				fail("veto's reason (%s) did not reach the model whole", rw.why)
			}
			if observation != nil {
				fail("a refused call has an observation")
			}
			if strings.HasPrefix(c.Tool, "mcp__notes__") && reached {
				fail("the refused call reached the notes server")
			}
		default:
			t.Fatalf("#%d: want is allow or deny, not %q", i+1, c.Want)
		}
		for _, p := range c.Unchanged {
			if b, _ := os.ReadFile(p); string(b) != string(s.before[p]) {
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
	if len(decided) > 0 || len(observed) > 0 {
		t.Errorf("veto log holds %d decisions and %d observations no call was matched to", len(decided), len(observed))
	}
	// The gateway heard of the change from the server, and the person is
	// shown it as awaiting approval.
	if !strings.Contains(string(logged), "sent notifications/tools/list_changed") {
		t.Errorf("the notes server never said its list changed")
	}
	code, out, errOut = s.veto("mcp", "pins", "--name", "notes")
	t.Logf("veto mcp pins --name notes: exit %d\n%s%s", code, out, errOut)
	if !strings.Contains(out, "changed") {
		t.Errorf("veto mcp pins does not show save as changed")
	}
	if t.Failed() {
		t.Logf("Claude Code stdout: %.4000s\nstderr: %.4000s", o.Stdout, o.Stderr)
	}

	// A new session: the changed tool stays refused until a person
	// approves it. The gateway lists it to no one, so Claude Code refuses
	// the call itself, or the gateway refuses it by its pin; either way it
	// never reaches the server.
	second := filepath.Join(s.ws, "SECOND-SESSION.md")
	again := []Call{{Name: "save a note in a new session (notes server, still changed)", Tool: "mcp__notes__save",
		Input: json.RawMessage(fmt.Sprintf(`{"path": %q, "text": "a note\n"}`, second)), Want: "deny"}}
	o2 := play(t, runSpec{Program: claude, Args: []string{"-p", "go", "--dangerously-skip-permissions", "--max-turns", "10"},
		Env: append(s.env(), "ANTHROPIC_API_KEY="+s.apiKey, "IS_SANDBOX=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
			"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		Dir: s.ws, BaseEnv: "ANTHROPIC_BASE_URL", API: "anthropic", Calls: again,
		Canaries: map[string]string{"the changed description": changedCanary, "the SSH key": s.sshKey}, Timeout: 3 * time.Minute})
	s.finish()
	r2 := o2.Results[callID(0)]
	t.Logf("a new session: the model got (is_error %v): %.300q", r2.IsError, r2.Content)
	for _, name := range o2.Leaks {
		t.Errorf("a new session: %s reached the model endpoint", name)
	}
	logged, _ = os.ReadFile(serverLog)
	if !r2.IsError || strings.Contains(string(logged), "tools/call save "+second+"\n") {
		t.Errorf("a new session: the changed tool's call was not refused before the server (is_error %v)", r2.IsError)
	}
	if _, err := os.Stat(second); err == nil {
		t.Errorf("a new session: %s exists: the call ran", second)
	}
	// Session one's refusal is one pin refusal; a second is this call's.
	rw := row{n: len(rows) + 1, tool: "mcp__notes__save", verdict: "none", why: "Claude Code: no such tool (not listed)", name: again[0].Name}
	byCall, _ = vetoLog(t, s)
	pinned := 0
	for _, e := range inOrder(byCall, isDecision) {
		if e.Tool == "mcp__notes__save" && e.Reason == "tool_definition_changed" {
			pinned++
		}
	}
	if pinned > 1 {
		rw.verdict, rw.why = "DENY", "mcp.pinned/tool_definition_changed"
	}
	rows = append(rows, rw)
	printTable("Claude Code through veto init claude-code --mcp", rows, fmt.Sprintf(" (%d scenarios, client run %s, %d requests, whole test %s)",
		len(calls), o.Duration.Round(100*time.Millisecond), o.Requests, time.Since(start).Round(100*time.Millisecond)))
}
