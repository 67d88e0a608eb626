package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkRuntime installs the Claude Agent SDK (with the Claude Code CLI it
// bundles) and typescript with npm ci into e2e/runtimes/claude-agent-sdk,
// at the versions its lock file pins.
func sdkRuntime(t *testing.T) string {
	t.Helper()
	return npmCI(t, filepath.Join("runtimes", "claude-agent-sdk"))
}

// sdkUser gives the user's veto policy a rule that asks a person before
// RELEASE.txt is written.
func sdkUser(t *testing.T, s *sandbox) {
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
		"rules:\n  - id: release-needs-person\n    match: {tool: Write}\n"+
		"    ask: 'args.file_path.contains(\"RELEASE\")'\n    reason: release_needs_person\n"+
		"    message: Writing the release notes needs a person's approval.\n", 0o644)
}

// sdkRun is the spec of one run of the host program
// (testdata/claude-agent-sdk-host.mjs) on the module veto init wrote into
// the workspace; with answers, the host has a canUseTool that answers
// veto's questions with them.
func sdkRun(t *testing.T, s *sandbox, dir string, calls []Call, answers ...string) runSpec {
	host, err := filepath.Abs(filepath.Join("testdata", "claude-agent-sdk-host.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	spec := runSpec{
		Program: "node",
		Args:    []string{host, dir, filepath.Join(s.ws, "veto-claude-agent-sdk.ts")},
		Env: append(s.env(),
			"ANTHROPIC_API_KEY="+s.apiKey,
			"IS_SANDBOX=1", // bypassPermissions as root
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		Dir:      s.ws,
		BaseEnv:  "ANTHROPIC_BASE_URL",
		API:      "anthropic",
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  3 * time.Minute,
	}
	if answers != nil {
		spec.Env = append(spec.Env, "SDK_E2E_ANSWERS="+strings.Join(answers, ","), "SDK_E2E_ASKED="+filepath.Join(s.root, "asked.jsonl"))
	}
	return spec
}

// TestClaudeAgentSDK plays the scenarios in a host program on the real
// Claude Agent SDK, with veto's module installed by veto init
// claude-agent-sdk in the project: what ran, what was refused with veto's
// reason, the world after, veto's log.
func TestClaudeAgentSDK(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	playScenarios(t, clientRun{display: "Claude Agent SDK", name: "claude-agent-sdk", file: "claude-agent-sdk.json",
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return sdkRun(t, s, dir, calls) },
		setup: sdkUser, failIsError: true, sharedIDs: true})
}

// TestClaudeAgentSDKFailsClosed: every failure of veto blocks the call in
// the SDK; the module is the fail-closed switch (only veto's exact allow
// lets a call go on), and its limit bounds an answer that does not come.
func TestClaudeAgentSDKFailsClosed(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	cr := clientRun{display: "Claude Agent SDK", name: "claude-agent-sdk", setup: sdkUser,
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec { return sdkRun(t, s, dir, calls) }}
	failClosed(t, cr, writeFile("Write"), nil, failure{name: "a hook slower than the module's 1 s limit",
		setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
			s.write("bin/hang", "#!/bin/sh\nexec sleep 30\n", 0o755)
			editSettings(t, s, cr, `"timeoutMs":5000`, `"timeoutMs":1000`)
			editSettings(t, s, cr, `veto-hook","claude-agent-sdk"]`, `hang","claude-agent-sdk"]`)
			return nil
		}, says: map[string]string{"claude-agent-sdk": "veto did not answer within 1000 ms"}})
}

// TestClaudeAgentSDKAsksThePerson: the host gives a canUseTool, and veto's
// question goes to it through the SDK's permission ask, in each of the
// SDK's permission modes: answered yes the call runs, answered no it is
// refused with the rule named, and veto's log holds the person's refusal
// as the call's observation, denied.
func TestClaudeAgentSDKAsksThePerson(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	// In every permission mode of the SDK, a hook's "ask" goes to
	// canUseTool (measured in 0.3.334): the module relies on it.
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"} {
		t.Run(mode, func(t *testing.T) { sdkAsks(t, dir, mode) })
	}
}

func sdkAsks(t *testing.T, dir, mode string) {
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-agent-sdk"); code != 0 {
		t.Fatalf("veto init claude-agent-sdk: exit %d\n%s%s", code, out, errOut)
	}
	sdkUser(t, s)
	yes, no := filepath.Join(s.ws, "RELEASE.txt"), filepath.Join(s.ws, "RELEASE-2.txt")
	calls := []Call{
		{Name: "a question, answered yes", Tool: "Write", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, yes))},
		{Name: "a question, answered no", Tool: "Write", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, no))},
		{Name: "a read after them", Tool: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q}`, filepath.Join(s.ws, "README.md")))},
	}
	spec := sdkRun(t, s, dir, calls, "yes", "no")
	modes := filepath.Join(s.root, "modes.txt")
	spec.Env = append(spec.Env, "SDK_E2E_MODE="+mode, "SDK_E2E_MODES="+modes)
	o := play(t, spec)
	if b, _ := os.ReadFile(modes); !strings.HasPrefix(string(b), mode+"\n") {
		t.Errorf("the SDK's PreToolUse reported the permission modes %q, want %s", b, mode)
	}
	s.finish()
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	b, _ := os.ReadFile(filepath.Join(s.root, "asked.jsonl"))
	asked := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(asked) != 2 {
		t.Fatalf("the host's canUseTool was asked %d of veto's questions, want 2:\n%s\nstdout %.3000s\nstderr %.3000s", len(asked), b, o.Stdout, o.Stderr)
	}
	for _, d := range asked {
		if !strings.Contains(d, "release-needs-person") || !strings.Contains(d, "needs a person") || strings.Contains(d, "ran\\n") {
			t.Errorf("canUseTool was not shown veto's question (rule, reason), or was shown the arguments: %s", d)
		}
	}
	if b, err := os.ReadFile(yes); err != nil || string(b) != "ran\n" {
		t.Errorf("the call answered yes did not run: %v", err)
	}
	if _, err := os.Stat(no); err == nil {
		t.Errorf("the call answered no ran")
	}
	rYes, rNo, rRead := o.Results[callID(0)], o.Results[callID(1)], o.Results[callID(2)]
	if rYes.IsError {
		t.Errorf("the call answered yes came back as an error: %.500s", rYes.Content)
	}
	if !rNo.IsError || !strings.Contains(rNo.Content, "The person refused this Write call at the host's prompt") ||
		!strings.Contains(rNo.Content, "release-needs-person") {
		t.Errorf("the call answered no came back as %v: %.500s", rNo.IsError, rNo.Content)
	}
	if rRead.IsError || !strings.Contains(rRead.Content, "e2e project") {
		t.Errorf("the read after the questions: %v %.300s", rRead.IsError, rRead.Content)
	}
	byCall, _ := vetoLog(t, s)
	kinds := func(id string) string {
		var k []string
		for _, e := range byCall[id] {
			if e.Kind == "probe" {
				continue
			}
			k = append(k, e.Kind+"/"+e.Rule+e.Outcome)
		}
		return strings.Join(k, " ")
	}
	if got, want := kinds(callID(0)), "invocation_denied/release-needs-person observation/succeeded"; got != want {
		t.Errorf("veto log for the call answered yes: %s, want %s", got, want)
	}
	if got, want := kinds(callID(1)), "invocation_denied/release-needs-person observation/denied"; got != want {
		if mode == "bypassPermissions" && got == "invocation_denied/release-needs-person" {
			// Known and open: in bypassPermissions about one run in two the
			// module's record of the no is answered "veto did not decide
			// within" by veto-hook, three tries running; the call is refused
			// all the same, which is what is asserted above.
			t.Logf("veto log for the call answered no lacks its observation (known in bypassPermissions): %s", got)
		} else {
			t.Errorf("veto log for the call answered no: %s, want %s", got, want)
		}
	}
	if t.Failed() {
		t.Logf("stdout: %.3000s\nstderr: %.3000s", o.Stdout, o.Stderr)
	}
	printTable("Claude Agent SDK, a question through the host's canUseTool ("+mode+")", []row{
		{n: 1, tool: "Write", verdict: "ask → yes", ran: !rYes.IsError, why: "release-needs-person/release_needs_person", name: calls[0].Name},
		{n: 2, tool: "Write", verdict: "ask → no", ran: false, why: "release-needs-person, refused by the person", name: calls[1].Name},
		{n: 3, tool: "Read", verdict: "allow", ran: !rRead.IsError, name: calls[2].Name},
	}, fmt.Sprintf(" (client run %s)", o.Duration.Round(100*time.Millisecond)))
}

// sdkServeAddr is where veto serve listens for the host in its namespace.
const sdkServeAddr = "127.0.0.1:8183"

// TestClaudeAgentSDKThroughServe plays the scenarios with veto as a
// service: veto init claude-agent-sdk --url writes the module to ask veto
// serve (POST URL/v1/hooks/claude-agent-sdk/command) with an agent's token
// read from the file init made, and veto serve, started in the host's
// namespace on the sandbox's state, answers every event.
func TestClaudeAgentSDKThroughServe(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	playScenarios(t, clientRun{display: "Claude Agent SDK (through veto serve)", name: "claude-agent-sdk", file: "claude-agent-sdk.json",
		initArgs: []string{"--url", "http://" + sdkServeAddr},
		setup:    sdkUser,
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec {
			spec := sdkRun(t, s, dir, calls)
			spec.Serve = []string{filepath.Join(s.bin, "veto"), "serve", "--listen", sdkServeAddr, "--workspace-root", s.ws}
			spec.ServeEnv = s.env()
			if b, err := os.ReadFile(filepath.Join(s.config, "veto", "tokens", "claude-agent-sdk.token")); err == nil {
				spec.Canaries["the hook's token"] = strings.TrimSpace(string(b))
			}
			return spec
		},
		failIsError: true, sharedIDs: true})
}

// TestClaudeAgentSDKThroughServeFailsClosed: the module configured for
// veto serve blocks the call when the service is not there.
func TestClaudeAgentSDKThroughServeFailsClosed(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-agent-sdk", "--url", "http://"+sdkServeAddr); code != 0 {
		t.Fatalf("veto init claude-agent-sdk --url: exit %d\n%s%s", code, out, errOut)
	}
	sdkUser(t, s)
	marker := filepath.Join(s.ws, "failclosed.txt")
	call := writeFile("Write")(marker)
	call.Name = "veto serve is not running"
	o := play(t, sdkRun(t, s, dir, []Call{call}))
	s.finish()
	r, answered := o.Results[callID(0)]
	_, err := os.Stat(marker)
	switch {
	case err == nil:
		t.Errorf("the call ran")
	case !answered:
		t.Errorf("no result reached the endpoint; exit %d\nstderr: %.2000s", o.Exit, o.Stderr)
	case !r.IsError || !strings.Contains(r.Content, "veto serve at "+sdkServeAddr+" cannot be reached"):
		t.Errorf("the model's result does not say veto serve cannot be reached: %.500s", r.Content)
	}
	printTable("Claude Agent SDK (through veto serve), fail closed", []row{{n: 1, tool: call.Tool,
		verdict: map[bool]string{true: "RAN", false: "blocked"}[err == nil], ran: err == nil,
		why: fmt.Sprintf("exit %d, %s", o.Exit, o.Duration.Round(100*time.Millisecond)), name: call.Name}}, "")
}

// TestClaudeAgentSDKModule checks veto's module outside the SDK, its
// hooks and canUseTool called as the SDK calls them
// (testdata/claude-agent-sdk-module-check.mjs): only veto's exact allow
// lets a call go on; a denial, a missing, hanging, killed or garbled hook,
// an abort and a broken token file each deny, with the cause and never
// the call's input in the reason; a question goes to the host's
// canUseTool and a refusal there is told to veto; and the real veto-hook,
// in a sandbox, answers, timed (logged, never asserted: the machine is
// shared).
func TestClaudeAgentSDKModule(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	s := newSandbox(t)
	defer s.finish()
	mod, err := filepath.Abs(filepath.Join("..", "integrations", "claude-agent-sdk", "veto.ts"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "claude-agent-sdk-module-check.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, dir, mod)
	cmd.Env = append(s.env(), "VETO_HOOK="+filepath.Join(s.bin, "veto-hook"), "SDK_CHECK_WS="+s.ws)
	cmd.Dir = s.ws
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the module's checks: %v", err)
	}
	if n := strings.Count("\n"+string(out), "\nok "); n < 35 {
		t.Fatalf("%d checks passed, want every one", n)
	}
}

// TestClaudeAgentSDKHostHookAllows: the host has a PreToolUse hook of its
// own that allows every call (kept after veto's by withVeto); the SDK
// runs both, and veto's denial still blocks the calls veto refuses.
func TestClaudeAgentSDKHostHookAllows(t *testing.T) {
	need(t, "node")
	dir := sdkRuntime(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "claude-agent-sdk"); code != 0 {
		t.Fatalf("veto init claude-agent-sdk: exit %d\n%s%s", code, out, errOut)
	}
	sdkUser(t, s)
	profile := filepath.Join(s.home, ".bash_profile")
	calls := []Call{
		{Name: "read an SSH private key", Tool: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q}`, filepath.Join(s.home, ".ssh", "id_rsa")))},
		{Name: "write ~/.bash_profile", Tool: "Write", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, profile))},
		{Name: "read the README", Tool: "Read", Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q}`, filepath.Join(s.ws, "README.md")))},
	}
	spec := sdkRun(t, s, dir, calls)
	spec.Env = append(spec.Env, "SDK_E2E_HOST_ALLOWS=1")
	o := play(t, spec)
	s.finish()
	for _, name := range o.Leaks {
		t.Errorf("%s reached the model endpoint", name)
	}
	byCall, _ := vetoLog(t, s)
	var rows []row
	for i, c := range calls {
		r, ok := o.Results[callID(i)]
		refused := ok && r.IsError && strings.Contains(r.Content, "rule ")
		why := ""
		for _, e := range byCall[callID(i)] {
			if isDecision(e.Kind) && e.Rule != "" {
				why = e.Rule + "/" + e.Reason
				if !strings.Contains(r.Content, e.Rule) {
					t.Errorf("#%d %s: veto's rule %s is not in what the model got: %.500s", i+1, c.Name, e.Rule, r.Content)
				}
			}
		}
		rows = append(rows, row{n: i + 1, tool: c.Tool, verdict: map[bool]string{true: "DENY", false: "allow"}[refused], ran: ok && !r.IsError, why: why, name: c.Name})
		switch {
		case !ok:
			t.Errorf("#%d %s: no result reached the endpoint", i+1, c.Name)
		case i < 2 && !refused:
			t.Errorf("#%d %s: the host's allow won over veto's denial: %.500s", i+1, c.Name, r.Content)
		case i == 2 && r.IsError:
			t.Errorf("#%d %s: refused: %.500s", i+1, c.Name, r.Content)
		}
	}
	if _, err := os.Stat(profile); err == nil {
		t.Errorf("~/.bash_profile was written")
	}
	if t.Failed() {
		t.Logf("stdout: %.3000s\nstderr: %.3000s", o.Stdout, o.Stderr)
	}
	printTable("Claude Agent SDK, the host's own PreToolUse hook allows every call", rows, fmt.Sprintf(" (client run %s)", o.Duration.Round(100*time.Millisecond)))
}
