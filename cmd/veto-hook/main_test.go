package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real binaries, as veto init installs them: the first call finds no
// server, is answered by veto hook, and starts one; the next is answered
// by the server (shown by taking veto away); removing the socket's
// directory ends the server.
func TestStartsServerOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds veto")
	}
	dir, err := os.MkdirTemp("", "vh") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "github.com/vetohq/veto/cmd/veto", "github.com/vetohq/veto/cmd/veto-hook")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	sock := filepath.Join(dir, "run", "hook.sock")
	env := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "VETO_MANAGED_POLICY="+filepath.Join(dir, "none.yaml"),
		"VETO_SOCKET="+sock, "VETO_STATE="+filepath.Join(dir, "state", "veto.db"), "VETO_NO_SERVER=", "VETO_FULL=",
		"ANTHROPIC_API_KEY=canary-anthropic-"+filepath.Base(dir), "CLAUDE_CODE_MESSAGING_TOKEN=canary-token")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(sock)) }) // ends a server left running by a failure
	call := func(id, tool, input string, extra ...string) (int, string) {
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
		cmd := exec.Command(filepath.Join(bin, "veto-hook"), "claude-code")
		cmd.Env = append(env, extra...)
		cmd.Stdin = strings.NewReader(ev)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String()
	}
	if code, out := call("t1", "Bash", `{"command":"git reset --hard"}`); code != 2 || !strings.Contains(out, "reason git_destructive") {
		t.Fatalf("first call: %d %q", code, out)
	}
	up := false
	for i := 0; i < 100 && !up; i++ {
		_, err := os.Stat(sock)
		up = err == nil
		time.Sleep(50 * time.Millisecond)
	}
	if !up {
		t.Fatal("no server listens 5 s after the first call")
	}
	// The server holds none of the client's secrets.
	environ, err := os.ReadFile(filepath.Join("/proc", serverPID(t, sock), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte("canary")) || !bytes.Contains(environ, []byte("VETO_STATE=")) {
		t.Fatalf("the server's environment: %q", environ)
	}

	// veto cannot be run (a copy of its first pages, not executable: the
	// same build for veto-hook to ask the server of): only the server can
	// answer now.
	noVeto := "VETO_FULL=" + unrunnable(t, filepath.Join(bin, "veto"), filepath.Join(dir, "veto-unrunnable"))
	if code, out := call("t2", "Read", `{"file_path":"`+ws+`/main.go"}`, noVeto); code != 0 || out != "" {
		t.Fatalf("second call, from the server: %d %q", code, out)
	}
	if code, out := call("t3", "Bash", `{"command":"git reset --hard"}`, noVeto); code != 2 || !strings.Contains(out, "reason git_destructive") {
		t.Fatalf("deny from the server: %d %q", code, out)
	}
	// Another environment: the server will not answer, veto cannot run:
	// veto-hook blocks the call itself.
	if code, out := call("t4", "Read", `{"file_path":"`+ws+`/main.go"}`, noVeto, "TMPDIR="+dir); code != 2 || !strings.Contains(out, "could not reach the hook server nor run veto") {
		t.Fatalf("no server for this environment, no veto: %d %q", code, out)
	}

	// An upgrade replaces veto: the old server exits, and the next call
	// starts the new one.
	veto := filepath.Join(bin, "veto")
	raw, err := os.ReadFile(veto)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(veto+".new", raw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(veto+".new", veto); err != nil {
		t.Fatal(err)
	}
	waitGone(t, sock, "its program was replaced")
	if code, _ := call("t5", "Read", `{"file_path":"`+ws+`/main.go"}`); code != 0 {
		t.Fatalf("after the upgrade: exit %d", code)
	}
	for i := 0; i < 100 && !serverRuns(sock); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !serverRuns(sock) {
		t.Fatal("no server started after the upgrade")
	}

	os.RemoveAll(filepath.Dir(sock))
	waitGone(t, sock, "its socket was removed")
}

// unrunnable writes the first 64 KiB of the program at from to to, not
// executable: a file of the same build (wire.BuildOf) that cannot be run.
func unrunnable(t *testing.T, from, to string) string {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b[:64<<10], 0o644); err != nil {
		t.Fatal(err)
	}
	return to
}

// waitGone waits up to 5 s for the server on sock to exit.
func waitGone(t *testing.T, sock, why string) {
	t.Helper()
	// The server looks once a second; a loaded machine (the race
	// detector's run beside others) is given time to let it go.
	for i := 0; i < 400; i++ {
		if !serverRuns(sock) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the server still runs 20 s after %s", why)
}

// serverPID is the process started with sock in its arguments.
func serverPID(t *testing.T, sock string) string {
	ps, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range ps {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(sock)) && bytes.Contains(b, []byte("serve-hooks")) {
			return filepath.Base(filepath.Dir(p))
		}
	}
	t.Fatal("no server process")
	return ""
}

// serverRuns reports whether a process was started with sock in its
// arguments.
func serverRuns(sock string) bool {
	ps, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range ps {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(sock)) {
			return true
		}
	}
	return false
}
