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

// opencodePort is the scripted endpoint's port for OpenCode, whose
// provider is set in its config before the run (the namespace is new:
// every port is free).
const opencodePort = 18744

// opencodeRuntime installs OpenCode with npm ci into
// e2e/runtimes/opencode, at the version its lock file pins (opencode-ai
// and its platform package, which holds the binary), unless node_modules
// already holds it.
func opencodeRuntime(t *testing.T) string {
	t.Helper()
	return npmCI(t, filepath.Join("runtimes", "opencode"))
}

// opencodeBin is the OpenCode binary npm installed (the platform
// package's; the wrapper in opencode-ai/bin finds and runs it).
func opencodeBin(dir string) string {
	return filepath.Join(dir, "node_modules", ".bin", "opencode")
}

// opencodeUser points OpenCode at the scripted endpoint: a provider of
// the Anthropic Messages API (@ai-sdk/anthropic, which OpenCode bundles)
// in the user's opencode.json ($XDG_CONFIG_HOME/opencode), its key read
// from the environment, nothing shared or updated; and gives the user's
// veto policy a rule that asks a person before RELEASE.txt is written.
func opencodeUser(t *testing.T, s *sandbox) {
	cfg := fmt.Sprintf(`{
  "autoupdate": false,
  "share": "disabled",
  "model": "e2e/claude-e2e",
  "small_model": "e2e/claude-e2e",
  "provider": {"e2e": {"npm": "@ai-sdk/anthropic", "name": "e2e",
    "options": {"baseURL": "http://127.0.0.1:%d/v1", "apiKey": "{env:OPENCODE_E2E_API_KEY}"},
    "models": {"claude-e2e": {"name": "e2e", "tool_call": true, "limit": {"context": 200000, "output": 8192}}}}}
}`, opencodePort)
	s.write("config/opencode/opencode.json", cfg+"\n", 0o644)
	// OpenCode installs @opencode-ai/plugin into every config directory
	// (the project's .opencode and its global one) in the background,
	// and waits for it before it loads the plugins: without a network
	// that fails only after about 70 s (measured: "background dependency
	// install failed", ECONNREFUSED). It skips the install when
	// node_modules is there and the lock file lists the package, so the
	// sandbox holds what the install would have left; veto's plugin
	// imports nothing from the package.
	for _, d := range []string{"config/opencode", "home/src/project/.opencode"} {
		s.write(d+"/package.json", `{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}`+"\n", 0o644)
		s.write(d+"/package-lock.json", `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}}`+"\n", 0o644)
		s.write(d+"/node_modules/.keep", "", 0o644)
	}
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: [\""+s.tmp+"\"]\n"+
		"rules:\n  - id: release-needs-person\n    match: {tool: write}\n"+
		"    ask: 'args.filePath.contains(\"RELEASE\")'\n    reason: release_needs_person\n"+
		"    message: Writing the release notes needs a person's approval.\n", 0o644)
}

// opencodeRun is the spec of one `opencode run` in the sandbox: the
// project's plugins (veto init's .opencode/plugins/veto.ts) loaded, the
// model the scripted endpoint, nothing downloaded.
func opencodeRun(t *testing.T, s *sandbox, dir string, calls []Call) runSpec {
	args := []string{"run", "--model", "e2e/claude-e2e", "--format", "json", "go"}
	if os.Getenv("VETO_E2E_OPENCODE_LOGS") == "1" { // OpenCode's own log on stderr, to see where a run waits
		args = append(args, "--print-logs", "--log-level", "DEBUG")
	}
	return runSpec{
		Program: opencodeBin(dir),
		Args:    args,
		Env: append(s.env(), "OPENCODE_E2E_API_KEY="+s.apiKey,
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			"OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
			"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
			// OpenCode keeps its own state in $XDG_STATE_HOME/opencode and
			// cannot start without it: it gets a directory of its own, and
			// veto's state stays where the sandbox's veto looks (a case that
			// breaks veto's state breaks only veto's).
			"XDG_STATE_HOME="+filepath.Join(s.root, "opencode-state"), "VETO_STATE="+filepath.Join(s.state, "veto", "veto.db")),
		Dir:      s.ws,
		BaseEnv:  "OPENCODE_E2E_BASE_URL", // unread: opencode.json names the port
		API:      "anthropic",
		Port:     opencodePort,
		Calls:    calls,
		Canaries: map[string]string{"the SSH key": s.sshKey, "the .env secret": s.envSecret, "the API key": s.apiKey},
		Timeout:  4 * time.Minute,
	}
}

var opencodeClient = clientRun{display: "OpenCode", name: "opencode", file: "opencode.json", setup: opencodeUser, sharedIDs: true}

// TestOpenCode plays the scenarios in the real OpenCode (opencode run),
// with veto's plugin installed by veto init opencode in the project: what
// ran, what was refused with veto's reason, the world after, veto's log.
func TestOpenCode(t *testing.T) {
	need(t)
	dir := opencodeRuntime(t)
	cr := opencodeClient
	cr.spec = func(t *testing.T, s *sandbox, calls []Call) runSpec { return opencodeRun(t, s, dir, calls) }
	playScenarios(t, cr)
}

// TestOpenCodeFailsClosed: every failure of veto blocks the call in
// OpenCode; the plugin itself is the fail-closed switch (only veto's
// exact allow lets a call run), and its limit bounds an answer that does
// not come.
func TestOpenCodeFailsClosed(t *testing.T) {
	need(t)
	dir := opencodeRuntime(t)
	cr := opencodeClient
	cr.spec = func(t *testing.T, s *sandbox, calls []Call) runSpec { return opencodeRun(t, s, dir, calls) }
	write := func(marker string) Call {
		return Call{Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"filePath": %q, "content": "ran\n"}`, marker))}
	}
	failClosed(t, cr, write, nil, failure{name: "a hook slower than the plugin's 1 s limit",
		setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
			s.write("bin/hang", "#!/bin/sh\nexec sleep 30\n", 0o755)
			editSettings(t, s, cr, `"timeoutMs":5000`, `"timeoutMs":1000`)
			editSettings(t, s, cr, `veto-hook","opencode"]`, `hang","opencode"]`)
			return nil
		}, says: map[string]string{"opencode": "veto did not answer within 1000 ms"}})
}

// TestOpenCodePlugin checks veto's plugin outside OpenCode, in the Bun
// that OpenCode is built on (its binary, run as bun with BUN_BE_BUN=1),
// against the real veto-hook in a sandbox and against stand-in hooks:
// only veto's exact allow lets a call run; a denial, a missing, hanging,
// crashing or garbled hook each throw, with the cause and never the
// call's input in the message; a result is recorded as an observation.
func TestOpenCodePlugin(t *testing.T) {
	need(t)
	dir := opencodeRuntime(t)
	s := newSandbox(t)
	defer s.finish()
	plugin, err := filepath.Abs(filepath.Join("..", "integrations", "opencode", "veto.ts"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "opencode-plugin-check.ts"))
	if err != nil {
		t.Fatal(err)
	}
	s.write("bin/garbled", "#!/bin/sh\ncat >/dev/null\necho 'not json'\n", 0o755)
	s.write("bin/crash", "#!/bin/sh\ncat >/dev/null\necho 'boom' >&2\nexit 3\n", 0o755)
	s.write("bin/hang", "#!/bin/sh\nexec sleep 30\n", 0o755)
	s.write("bin/allow-more", "#!/bin/sh\ncat >/dev/null\necho '{\"block\":false,\"extra\":1}'\n", 0o755)
	cmd := exec.Command(opencodeBin(dir), script, plugin, s.ws, s.bin, filepath.Join(s.home, ".ssh", "id_rsa"))
	cmd.Env = append(s.env(), "BUN_BE_BUN=1", "VETO_URL=", "VETO_TOKEN_FILE=")
	cmd.Dir = s.ws
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the plugin's checks: %v", err)
	}
	if strings.Contains(string(out), s.sshKey) {
		t.Fatal("the SSH key is in the checks' output")
	}
	if n := strings.Count(string(out), "\nok "); n < 10 {
		t.Fatalf("%d checks passed, want every one", n)
	}
	byCall, _ := vetoLog(t, s)
	kinds := func(id string) string {
		var k []string
		for _, e := range byCall[id] {
			if e.Kind != "probe" {
				k = append(k, e.Kind)
			}
		}
		return strings.Join(k, " ")
	}
	if got := kinds("chk-read"); got != "invocation_allowed observation" {
		t.Errorf("veto log for the allowed read: %q, want invocation_allowed observation", got)
	}
	if got := kinds("chk-key"); got != "invocation_denied" {
		t.Errorf("veto log for the key's read: %q, want invocation_denied", got)
	}
}

// opencodeServeAddr is where veto serve listens for OpenCode in its
// namespace.
const opencodeServeAddr = "127.0.0.1:8183"

// TestOpenCodeThroughServe plays OpenCode's scenarios with veto as a
// service: veto init opencode --url writes the plugin to ask veto serve
// (POST URL/v1/hooks/opencode/command) with an agent's token read from
// the file init made, and veto serve, started in OpenCode's namespace on
// the sandbox's state, answers every event. The same calls run or are
// refused.
func TestOpenCodeThroughServe(t *testing.T) {
	need(t)
	dir := opencodeRuntime(t)
	cr := opencodeClient
	cr.display = "OpenCode (through veto serve)"
	cr.initArgs = []string{"--url", "http://" + opencodeServeAddr}
	cr.spec = func(t *testing.T, s *sandbox, calls []Call) runSpec {
		spec := opencodeRun(t, s, dir, calls)
		spec.Serve = []string{filepath.Join(s.bin, "veto"), "serve", "--listen", opencodeServeAddr, "--workspace-root", s.ws}
		spec.ServeEnv = s.env()
		if b, err := os.ReadFile(filepath.Join(s.config, "veto", "tokens", "opencode.token")); err == nil {
			spec.Canaries["the hook's token"] = strings.TrimSpace(string(b))
		}
		return spec
	}
	playScenarios(t, cr)
}

// TestOpenCodeQuestion: a rule's question is refused in OpenCode, which
// has no prompt for a plugin: the model reads veto's question (the rule,
// that a person must approve it) and that OpenCode cannot ask one here;
// the file is not written, and veto's log holds the question and no
// observation.
func TestOpenCodeQuestion(t *testing.T) {
	need(t)
	dir := opencodeRuntime(t)
	s := newSandbox(t)
	if code, out, errOut := s.veto("init", "opencode"); code != 0 {
		t.Fatalf("veto init opencode: exit %d\n%s%s", code, out, errOut)
	}
	opencodeUser(t, s)
	release := filepath.Join(s.ws, "RELEASE.txt")
	calls := []Call{{Name: "a question", Tool: "write", Input: json.RawMessage(fmt.Sprintf(`{"filePath": %q, "content": "CANARY-RELEASE\n"}`, release))}}
	o := play(t, opencodeRun(t, s, dir, calls))
	s.finish()
	r, ok := o.Results[callID(0)]
	t.Logf("OpenCode ran %s; the model got (is_error %v): %s", o.Duration.Round(100*time.Millisecond), r.IsError, r.Content)
	if os.Getenv("VETO_E2E_OPENCODE_LOGS") == "1" {
		t.Logf("OpenCode's stderr:\n%s", o.Stderr)
	}
	if !ok || !r.IsError {
		t.Fatalf("no refusal reached the model (answered %v)\nstderr: %.3000s", ok, o.Stderr)
	}
	for _, want := range []string{"until a person approves it", "(rule release-needs-person, reason release_needs_person)",
		"OpenCode gives veto's plugin no prompt to ask a person"} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("the refusal does not say %q", want)
		}
	}
	if strings.Contains(r.Content, "CANARY-RELEASE") {
		t.Error("the refusal quotes the call's content")
	}
	if _, err := os.Stat(release); err == nil {
		t.Error("the file was written")
	}
	byCall, _ := vetoLog(t, s)
	var kinds []string
	for _, e := range byCall[callID(0)] {
		if e.Kind != "probe" {
			kinds = append(kinds, e.Kind+"/"+e.Rule)
		}
	}
	if got := strings.Join(kinds, " "); got != "invocation_denied/release-needs-person" {
		t.Errorf("veto log for the call: %q, want invocation_denied/release-needs-person", got)
	}
}
