package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/sqlite"
)

// A failure of the hook itself, set up in a sandbox veto init wrote.
type failure struct {
	name  string
	setup func(t *testing.T, s *sandbox, cr clientRun) (undo func())
	// readOnly are the sandbox's directories (relative to its root) made
	// read-only in the namespace.
	readOnly []string
	// says is text the model must get back when the call is blocked: who
	// blocked it and why (by client name; "" : anything).
	says map[string]string
	// control, when set, says why the call is expected to run: a
	// measurement of the client without veto's registration.
	control string
}

// settingsPath is the project settings file veto init wrote for cr.
func settingsPath(s *sandbox, cr clientRun) string {
	switch cr.name {
	case "codex":
		return filepath.Join(s.ws, ".codex", "hooks.json")
	case "copilot-cli":
		return filepath.Join(s.ws, ".github", "hooks", "veto.json")
	case "pi":
		return filepath.Join(s.ws, ".pi", "extensions", "veto.ts")
	case "claude-agent-sdk":
		return filepath.Join(s.ws, "veto-claude-agent-sdk.ts")
	case "opencode":
		return filepath.Join(s.ws, ".opencode", "plugins", "veto.ts")
	}
	return filepath.Join(s.ws, map[string]string{"claude-code": ".claude", "gemini-cli": ".gemini"}[cr.name], "settings.json")
}

// editSettings replaces text in the client's settings.
func editSettings(t *testing.T, s *sandbox, cr clientRun, from, to string) {
	t.Helper()
	p := settingsPath(s, cr)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(from)) {
		t.Fatalf("the settings hold no %q:\n%s", from, b)
	}
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte(from), []byte(to)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newState creates veto's state file, as a first call would.
func newState(t *testing.T, s *sandbox) string {
	t.Helper()
	p := filepath.Join(s.state, "veto", "veto.db")
	st, err := sqlite.Open(context.Background(), p, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return p
}

// lockState holds an exclusive lock on veto's state until undone.
func lockState(t *testing.T, s *sandbox) (undo func()) {
	t.Helper()
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
}

// writeFile is a client's call writing a new file with its file tool.
func writeFile(tool string) func(marker string) Call {
	return func(marker string) Call {
		return Call{Tool: tool, Input: json.RawMessage(fmt.Sprintf(`{"file_path": %q, "content": "ran\n"}`, marker))}
	}
}

func hideHook(t *testing.T, s *sandbox) {
	t.Helper()
	if err := os.Rename(filepath.Join(s.bin, "veto-hook"), filepath.Join(s.bin, "veto-hook.moved")); err != nil {
		t.Fatal(err)
	}
}

// failures are the ways veto can break under a client.
var failures = []failure{
	{name: "the hook program is missing", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		hideHook(t, s)
		return nil
	}, says: map[string]string{"claude-code": `blocking because onFailure is "block"`, "gemini-cli": "veto-hook: No such file or directory",
		"codex": "veto: its hook exited 127 instead of answering", "copilot-cli": "(hook errored)", "pi": "veto-hook could not be started: ENOENT",
		"opencode": "veto-hook could not be started: ENOENT", "claude-agent-sdk": "veto-hook could not be started: ENOENT"}},
	{name: "the client name is mistyped", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		typo := strings.Split(cr.name, "-")[0] // veto-hook claude
		if typo == cr.name {
			typo = cr.name[:len(cr.name)-1] // veto-hook code
		}
		if cr.name == "pi" { // its hook is an argument vector
			editSettings(t, s, cr, `veto-hook","pi"]`, `veto-hook","p"]`)
			return nil
		}
		if cr.name == "claude-agent-sdk" { // so is the SDK module's
			editSettings(t, s, cr, `veto-hook","claude-agent-sdk"]`, `veto-hook","claude-agent"]`)
			return nil
		}
		if cr.name == "opencode" { // as pi's
			editSettings(t, s, cr, `veto-hook","opencode"]`, `veto-hook","opencod"]`)
			return nil
		}
		editSettings(t, s, cr, "veto-hook "+cr.name, "veto-hook "+typo)
		return nil
	}, says: map[string]string{"claude-code": `blocking because onFailure is "block"`, "gemini-cli": "veto-hook: want a client",
		"codex": "veto: its hook exited 64 instead of answering", "copilot-cli": "(hook errored)", "pi": "veto-hook: want a client",
		"opencode": "veto-hook: want a client", "claude-agent-sdk": "veto-hook: want a client"}},
	{name: "the policy file is broken", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		s.write("home/src/project/.veto/veto.yaml", "files: [this is not\n  a policy\n", 0o644)
		return nil
	}, says: map[string]string{"": "veto's policy does not load"}},
	{name: "the state is locked", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		return lockState(t, s)
	}, says: map[string]string{"": "is locked by another writer past the busy timeout"}},
	// veto-hook reads the timeout the settings give it now and answers
	// within half of it: the state locked, veto refuses in 500 ms.
	{name: "the client's timeout lowered by hand to 1 s, the state locked", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		from, to := `"timeout": 5,`, `"timeout": 1,`
		switch cr.name {
		case "gemini-cli":
			from, to = `"timeout": 5000`, `"timeout": 1000`
		case "copilot-cli":
			from, to = `"timeoutSec": 5,`, `"timeoutSec": 1,`
		case "pi", "opencode", "claude-agent-sdk":
			from, to = `"timeoutMs":5000`, `"timeoutMs":1000`
		}
		editSettings(t, s, cr, from, to)
		return lockState(t, s)
	}, says: map[string]string{"": "is locked by another writer past the busy timeout",
		// pi's extension gives veto-hook 500 ms: on a loaded machine its
		// own deadline ("veto did not decide within …") may come first.
		"pi": "so the call is", "opencode": "so the call is", "claude-agent-sdk": "so the call is"}},
	{name: "the state is read-only", readOnly: []string{"state"}, setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		newState(t, s)
		return nil
	}, says: map[string]string{"": "cannot be reached (SQLite cannot open it), so the call is blocked (state_unavailable)"}},
	{name: "the state cannot be opened", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
		// Its directory is a file.
		os.RemoveAll(s.state)
		s.write("state", "not a directory\n", 0o644)
		return nil
	}, says: map[string]string{"": "is not a usable path, so the call is blocked (state_unavailable)"}},
}

// failClosed breaks veto each way it can break and checks the real client
// blocks the call: write makes the call that writes a new file, marker,
// which veto allows when it runs. ranAnyway are the failures the client is
// known to let through (by name, with why), and extra are the client's own
// cases.
func failClosed(t *testing.T, cr clientRun, write func(marker string) Call, ranAnyway map[string]string, extra ...failure) {
	var rows []row
	for i, fc := range append(failures, extra...) {
		t.Run(fc.name, func(t *testing.T) {
			s := newSandbox(t)
			if code, out, errOut := s.veto("init", cr.name); code != 0 {
				t.Fatalf("veto init %s: exit %d\n%s%s", cr.name, code, out, errOut)
			}
			if cr.setup != nil {
				cr.setup(t, s)
			}
			marker := filepath.Join(s.ws, "failclosed.txt")
			call := write(marker)
			call.Name = fc.name
			calls := []Call{call}
			if undo := fc.setup(t, s, cr); undo != nil {
				defer undo()
			}
			spec := cr.spec(t, s, calls)
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
				verdict = "RAN"
			}
			rows = append(rows, row{n: i + 1, tool: call.Tool, verdict: verdict, ran: ran,
				why: fmt.Sprintf("exit %d, %s", o.Exit, o.Duration.Round(100*time.Millisecond)), name: fc.name})
			t.Logf("the model got (is_error %v): %.500s", r.IsError, r.Content)
			for _, name := range o.Leaks {
				t.Errorf("%s reached the model endpoint", name)
			}
			says, ok := fc.says[cr.name]
			if !ok {
				says = fc.says[""]
			}
			why, known := ranAnyway[fc.name]
			switch {
			case fc.control != "" && ran:
				t.Logf("CONTROL (%s): the call ran, as expected", fc.control)
			case fc.control != "":
				t.Errorf("CONTROL (%s): the call was blocked, yet it should run", fc.control)
			case !answered && !ran:
				t.Logf("no result reached the endpoint; exit %d\nstdout: %.2000s\nstderr: %.2000s", o.Exit, o.Stdout, o.Stderr)
			case !answered:
				t.Errorf("the call ran and no result reached the endpoint")
			case ran && known:
				t.Logf("KNOWN GAP (%s): the call ran", why)
			case ran:
				t.Errorf("the call ran (is_error %v: %.500s)", r.IsError, r.Content)
			case known:
				t.Errorf("the known gap %q is no longer seen: the call was blocked; remove it", why)
			case !refused(cr, r):
				t.Errorf("the call did not run, yet the result is not a refusal")
			case !strings.Contains(r.Content, says):
				t.Errorf("the model's result does not say %q", says)
			}
			if t.Failed() {
				t.Logf("exit %d\nstdout: %.3000s\nstderr: %.3000s", o.Exit, o.Stdout, o.Stderr)
			}
		})
	}
	printTable(cr.display+", fail closed", rows, fmt.Sprintf(" (%d cases)", len(rows)))
}

// TestClaudeCodeFailsClosed: every failure blocks in Claude Code, whose
// onFailure block (written by veto init) covers a hook that cannot start
// or exits oddly; without it a missing program lets the call run.
func TestClaudeCodeFailsClosed(t *testing.T) {
	need(t)
	node := clients(t)
	cr := clientRun{display: "Claude Code", name: "claude-code",
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec { return claudeRun(t, s, node, calls) }}
	failClosed(t, cr, writeFile("Write"), nil, failure{name: "a hook that hangs past the client's 1 s timeout",
		setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
			s.write("bin/hang", "#!/bin/sh\nexec sleep 30\n", 0o755)
			editSettings(t, s, cr, `"timeout": 5,`, `"timeout": 1,`)
			editSettings(t, s, cr, "veto-hook "+cr.name, "hang "+cr.name)
			return nil
		}, says: map[string]string{"claude-code": "timed out"}}, failure{name: "the hook program is missing, without onFailure",
		control: "Claude Code's default: a hook that cannot start is no objection", setup: func(t *testing.T, s *sandbox, cr clientRun) func() {
			editSettings(t, s, cr, `"onFailure": "block",`, "")
			hideHook(t, s)
			return nil
		}})
}

// TestGeminiCLIFailsClosed: Gemini CLI has no fail-closed switch, yet
// 0.61.0 blocks the call on a hook that cannot start (exit 127) or exits
// with veto-hook's usage code (64), its stderr as the reason: any exit
// but 0 and 1 denies. A hook that times out lets the call run.
func TestGeminiCLIFailsClosed(t *testing.T) {
	need(t, "node")
	node := clients(t)
	cr := clientRun{display: "Gemini CLI", name: "gemini-cli", setup: geminiUser,
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec { return geminiRun(t, s, node, calls) }}
	failClosed(t, cr, writeFile("write_file"), nil)
}

// TestCodexFailsClosed: Codex takes any hook failure but exit 2 as no
// objection and has no switch to say otherwise; what veto answers blocks.
func TestCodexFailsClosed(t *testing.T) {
	need(t)
	node := clients(t)
	cr := clientRun{display: "Codex", name: "codex", setup: codexUser,
		spec: func(t *testing.T, s *sandbox, calls []Call) runSpec { return codexRun(t, s, node, calls) }}
	write := func(marker string) Call {
		return Call{Tool: "exec_command", Input: json.RawMessage(fmt.Sprintf(`{"cmd": %q}`, "echo ran > '"+marker+"'"))}
	}
	failClosed(t, cr, write, nil)
}
