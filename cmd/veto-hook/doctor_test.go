package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor runs veto doctor on the real binaries, registered with every
// client as veto init registers them: all is well, then each way a
// registration, the policy or the state can break is a problem named with
// its fix, and exit 1.
func TestDoctor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds veto")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "github.com/vetohq/veto/cmd/veto", "github.com/vetohq/veto/cmd/veto-hook")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"VETO_MANAGED_POLICY="+filepath.Join(dir, "none.yaml"), "VETO_STATE=", "VETO_SOCKET=", "VETO_NO_SERVER=1", "CODEX_HOME=")
	veto := func(args ...string) (int, string) {
		cmd := exec.Command(filepath.Join(bin, "veto"), args...)
		cmd.Env, cmd.Dir = env, ws
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	for _, c := range []string{"claude-code", "gemini-cli", "copilot-cli", "cursor", "codex", "pi", "opencode"} {
		if code, out := veto("init", c); code != 0 {
			t.Fatalf("init %s: %d %s", c, code, out)
		}
	}
	code, out := veto("doctor")
	if code != 0 || strings.Contains(out, "PROBLEM") || strings.Count(out, "blocking form") != 7 {
		t.Fatalf("doctor on a sound install: exit %d\n%s", code, out)
	}

	expectProblem := func(name, want, fix string) {
		t.Helper()
		code, out := veto("doctor")
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "fix: "+fix) {
			t.Fatalf("%s: exit %d, want a problem with %q and fix %q:\n%s", name, code, want, fix, out)
		}
	}

	// A Claude Code entry without its fail-closed switch.
	settings := filepath.Join(ws, ".claude", "settings.json")
	b, _ := os.ReadFile(settings)
	os.WriteFile(settings, bytes.ReplaceAll(b, []byte(`"onFailure": "block",`), nil), 0o644)
	expectProblem("no onFailure", `lacks onFailure: "block"`, "veto init claude-code")
	os.WriteFile(settings, b, 0o644)

	// pi's extension naming a hook veto init does not write: never run.
	ext := filepath.Join(ws, ".pi", "extensions", "veto.ts")
	b, _ = os.ReadFile(ext)
	os.WriteFile(ext, bytes.ReplaceAll(b, []byte(`veto-hook","pi"]`), []byte(`veto-hook","pi","--approve"]`)), 0o644)
	expectProblem("pi's hook changed", "the hook is not one veto init writes", "veto init pi")
	os.WriteFile(ext, b, 0o644)

	// OpenCode's plugin, likewise.
	plugin := filepath.Join(ws, ".opencode", "plugins", "veto.ts")
	b, _ = os.ReadFile(plugin)
	os.WriteFile(plugin, bytes.ReplaceAll(b, []byte(`veto-hook","opencode"]`), []byte(`veto-hook","opencode","--approve"]`)), 0o644)
	expectProblem("OpenCode's hook changed", "the hook is not one veto init writes", "veto init opencode")
	os.WriteFile(plugin, b, 0o644)

	// A policy that does not load.
	os.MkdirAll(filepath.Join(ws, ".veto"), 0o755)
	os.WriteFile(filepath.Join(ws, ".veto", "veto.yaml"), []byte("files:\n  protcted: [x]\n"), 0o644)
	expectProblem("broken policy", "the policy does not load", "veto validate")
	os.Remove(filepath.Join(ws, ".veto", "veto.yaml"))

	// A state file that is not a database.
	state := filepath.Join(dir, "state", "veto", "veto.db")
	os.MkdirAll(filepath.Dir(state), 0o700)
	os.WriteFile(state, bytes.Repeat([]byte("not a database "), 400), 0o600)
	expectProblem("damaged state", "does not open", "move it aside")
	os.Remove(state)

	// The registered program gone: the client would let every call run.
	os.Remove(filepath.Join(bin, "veto-hook"))
	expectProblem("missing program", "does not exist", "install veto there again")
}
