package wire_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto/hook/wire"
)

// recorder is a Fallback that notes what it was handed and answers exit 7.
type recorder struct {
	args  []string
	event []byte
	calls int
}

func (r *recorder) run(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
	r.args, r.event, r.calls = args, event, r.calls+1
	io.WriteString(stdout, "fallback\n")
	return 7, true
}

func privateDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "vw") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VETO_FULL", self) // the veto veto-hook would run: this build
	return dir
}

// served is held while serveOnce's answer runs: a test reads what its
// answer saw under it.
var served sync.Mutex

// serveOnce answers each connection on sock with answer(request).
func serveOnce(t *testing.T, sock string, answer func(wire.Request) string) {
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			var rq wire.Request
			json.NewDecoder(c).Decode(&rq)
			served.Lock()
			a := answer(rq)
			served.Unlock()
			io.WriteString(c, a)
			c.Close()
		}
	}()
}

const event = `{"hook_event_name":"PreToolUse","tool_name":"Read"}`

func TestRunAsksTheServerElseHandsOn(t *testing.T) {
	dir := privateDir(t)
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	t.Setenv("VETO_STATE", "/state.db")
	run := func(answer func(wire.Request) string, args ...string) (code int, out string, fb *recorder, started []string) {
		fb = &recorder{}
		var o bytes.Buffer
		code = wire.Run(append([]string{"gemini-cli"}, args...), strings.NewReader(event), &o, &o, fb.run,
			func(s string) error { started = append(started, s); return nil })
		return code, o.String(), fb, started
	}

	// No server: handed on whole, with the flags, and one is started.
	code, out, fb, started := run(nil, "--approve")
	if code != 7 || out != "fallback\n" || string(fb.event) != event || !strings.HasPrefix(strings.Join(fb.args, " "), "hook gemini-cli --approve --timeout ") {
		t.Fatalf("no server: %d %q %q %q", code, out, fb.event, fb.args)
	}
	if len(started) != 1 || started[0] != sock {
		t.Fatalf("started %q, want the server on %s", started, sock)
	}

	// A server: its answer, byte for byte; the request carries the event,
	// the flags and this environment.
	var got wire.Request
	serveOnce(t, sock, func(rq wire.Request) string {
		got = rq
		return `{"exit":2,"stdout":"{\"decision\":\"deny\"}\n","stderr":"no\n"}` + "\n"
	})
	code, out, fb, started = run(nil, "--approve", "--timeout", "3s")
	if code != 2 || out != "{\"decision\":\"deny\"}\nno\n" || fb.calls != 0 || len(started) != 0 {
		t.Fatalf("served: %d %q fallback %d started %v", code, out, fb.calls, started)
	}
	served.Lock()
	seen := got
	served.Unlock()
	if seen.V != 1 || seen.Client != "gemini-cli" || !seen.Approve || seen.TimeoutMS > 3000 || seen.TimeoutMS < 2500 || seen.State != "/state.db" ||
		string(seen.Event) != event || !wire.SameEnv(seen.Env, wire.EnvNow()) {
		t.Fatalf("request %+v", seen)
	}
}

func TestRunHandsOnWhatTheServerCannotAnswer(t *testing.T) {
	for name, answer := range map[string]string{
		"mismatch": `{"mismatch":true}` + "\n",
		"garbage":  "not json\n",
		"nothing":  "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := privateDir(t)
			sock := filepath.Join(dir, "hook.sock")
			t.Setenv("VETO_SOCKET", sock)
			t.Setenv("VETO_NO_SERVER", "")
			serveOnce(t, sock, func(wire.Request) string { return answer })
			fb := &recorder{}
			started := 0
			var o bytes.Buffer
			code := wire.Run([]string{"claude-code"}, strings.NewReader(event), &o, &o, fb.run, func(string) error { started++; return nil })
			if code != 7 || fb.calls != 1 || started != 0 {
				t.Fatalf("exit %d, fallback %d, started %d: want the fallback and no new server", code, fb.calls, started)
			}
		})
	}
}

// E27
func TestRunWithoutAnyAnswerBlocks(t *testing.T) {
	t.Setenv("VETO_NO_SERVER", "1")
	const reason = "veto-hook could not reach the hook server nor run veto, so the call is blocked."
	// Each client's blocking reply, written here from its hook protocol
	// rather than taken from the table veto-hook answers with.
	want := map[string]struct {
		exit   int
		stdout string // JSON, compared as a value; "" for none
		stderr string
	}{
		"claude-code": {2, "", reason + "\n"},
		"gemini-cli":  {2, `{"decision":"deny","reason":"` + reason + `"}`, reason + "\n"},
		"copilot-cli": {0, `{"permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}`, ""},
		"cursor":      {0, `{"continue":true,"permission":"deny","user_message":"` + reason + `","agent_message":"` + reason + `"}`, ""},
		"codex": {2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` +
			reason + `"}}`, reason + "\n"},
		// veto's pi extension runs the call only on {"block":false}.
		"pi": {2, `{"block":true,"reason":"` + reason + `"}`, ""},
		// So do veto's OpenCode plugin and Claude Agent SDK module.
		"opencode":         {2, `{"block":true,"reason":"` + reason + `"}`, ""},
		"claude-agent-sdk": {2, `{"block":true,"reason":"` + reason + `"}`, ""},
	}
	if len(wire.Clients) != len(want) {
		t.Fatalf("veto-hook speaks to %v; this test knows the replies of %d clients", wire.Clients, len(want))
	}
	for _, c := range wire.Clients {
		w, ok := want[c]
		if !ok {
			t.Fatalf("%s: no reply written for this client", c)
		}
		var o, e bytes.Buffer
		code := wire.Run([]string{c}, strings.NewReader(event), &o, &e,
			func([]string, []byte, io.Writer, io.Writer) (int, bool) { return 0, false }, nil)
		if code != w.exit || e.String() != w.stderr {
			t.Errorf("%s: exit %d stderr %q; want exit %d stderr %q", c, code, e.String(), w.exit, w.stderr)
		}
		if w.stdout == "" {
			if o.Len() != 0 {
				t.Errorf("%s: stdout %q, want none", c, o.String())
			}
			continue
		}
		var got, exp any
		if err := json.Unmarshal(o.Bytes(), &got); err != nil {
			t.Errorf("%s: stdout %q is not JSON: %v", c, o.String(), err)
			continue
		}
		if err := json.Unmarshal([]byte(w.stdout), &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s: stdout %s, want %s", c, o.String(), w.stdout)
		}
	}
}

// An event over the limit is not sent to the server but handed on, cut at
// one byte over, so veto can block it.
func TestRunHandsOnAnEventTooLong(t *testing.T) {
	dir := privateDir(t)
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	asked := false
	serveOnce(t, sock, func(wire.Request) string { asked = true; return `{"exit":0}` + "\n" })
	wasAsked := func() bool { served.Lock(); defer served.Unlock(); return asked }
	fb := &recorder{}
	big := strings.Repeat(" ", wire.MaxEvent+100)
	wire.Run([]string{"claude-code"}, strings.NewReader(big), io.Discard, io.Discard, fb.run, nil)
	if wasAsked() || len(fb.event) != wire.MaxEvent+1 {
		t.Fatalf("asked %v, handed %d bytes", wasAsked(), len(fb.event))
	}
}

// A server that does not answer within the timeout is given up on.
func TestAskGivesUpAfterTheDeadline(t *testing.T) {
	dir := privateDir(t)
	sock := filepath.Join(dir, "hook.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			time.Sleep(2 * time.Second)
			c.Close()
		}
	}()
	_, err = wire.Ask(sock, wire.Request{V: 1, Event: []byte(event)}, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("Ask = %v, want a timeout", err)
	}
	if _, err := wire.Ask(filepath.Join(dir, "none.sock"), wire.Request{V: 1, Event: []byte(event)}, time.Second); err != wire.ErrNoServer {
		t.Fatalf("Ask of no socket = %v, want ErrNoServer", err)
	}
}

// The server runs elsewhere: a relative state file or setting would name
// another file there, so such a call goes to veto hook, and no server is
// started for it.
func TestRunKeepsRelativePathsHere(t *testing.T) {
	dir := privateDir(t)
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	asked := false
	serveOnce(t, sock, func(wire.Request) string { asked = true; return `{"exit":0}` + "\n" })
	wasAsked := func() bool { served.Lock(); defer served.Unlock(); return asked }
	for _, c := range []struct {
		args []string
		env  string
	}{
		{[]string{"claude-code", "--state", "veto.db"}, ""},
		{[]string{"claude-code"}, "VETO_STATE=state/veto.db"},
		{[]string{"claude-code"}, "VETO_MANAGED_POLICY=policy.yaml"},
		{[]string{"claude-code"}, "XDG_CONFIG_HOME=.config"},
	} {
		if c.env != "" {
			k, v, _ := strings.Cut(c.env, "=")
			t.Setenv(k, v)
		}
		fb := &recorder{}
		started := 0
		wire.Run(c.args, strings.NewReader(event), io.Discard, io.Discard, fb.run, func(string) error { started++; return nil })
		if wasAsked() || fb.calls != 1 || started != 0 {
			t.Fatalf("%v %s: asked %v, fallback %d, started %d", c.args, c.env, wasAsked(), fb.calls, started)
		}
		if c.env != "" {
			k, _, _ := strings.Cut(c.env, "=")
			t.Setenv(k, "")
		}
	}
	// Absolute, the same call is the server's.
	wire.Run([]string{"claude-code", "--state", filepath.Join(dir, "veto.db")}, strings.NewReader(event), io.Discard, io.Discard, (&recorder{}).run, nil)
	if !wasAsked() {
		t.Fatal("an absolute state was not sent to the server")
	}
}

// Each build and each set of settings has its own socket, so a server is
// never shared by calls it would refuse.
func TestSocketPathFollowsTheSettings(t *testing.T) {
	t.Setenv("VETO_SOCKET", "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	base := wire.SocketPath()
	if filepath.Dir(base) != "/run/user/1000/veto" || !strings.HasPrefix(filepath.Base(base), "hook-") {
		t.Fatalf("socket %s", base)
	}
	if wire.SocketPath() != base {
		t.Fatal("the socket path is not stable")
	}
	for _, k := range wire.EnvKeys {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, "/other/"+k)
			if wire.SocketPath() == base {
				t.Fatalf("%s changed, the socket did not", k)
			}
		})
	}
	t.Setenv("VETO_SOCKET", "/tmp/x/hook.sock")
	if wire.SocketPath() != "/tmp/x/hook.sock" {
		t.Fatal("VETO_SOCKET is not used as given")
	}
}

// The build is the Go build ID stamped in the program file, which no
// missing VCS stamp makes collide: a copy of the same bytes is the same
// build, runnable or not; another program is another; no file, none.
func TestBuildIsTheProgramsBuildID(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := wire.BuildOf(self)
	if err != nil || !strings.HasPrefix(b, "go:") || len(b) < 20 || b != wire.Build() {
		t.Fatalf("BuildOf(self) = %q, %v; Build() = %q", b, err, wire.Build())
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy")
	os.WriteFile(cp, raw[:64<<10], 0o644)
	if c, _ := wire.BuildOf(cp); c != b {
		t.Fatalf("a copy's build %q, want %q", c, b)
	}
	i := bytes.Index(raw, []byte(strings.TrimPrefix(b, "go:")))
	if i < 0 {
		t.Fatal("the build ID is not in the file")
	}
	raw[i] ^= 1 // another build ID: another build
	other := filepath.Join(dir, "other")
	os.WriteFile(other, raw[:64<<10], 0o644)
	if o, err := wire.BuildOf(other); err != nil || o == b || !strings.HasPrefix(o, "go:") {
		t.Fatalf("BuildOf(other) = %q, %v", o, err)
	}
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	if o, err := wire.BuildOf(script); err != nil || o == b || !strings.HasPrefix(o, "file:") {
		t.Fatalf("BuildOf(script) = %q, %v", o, err)
	}
	if _, err := wire.BuildOf(filepath.Join(dir, "none")); err == nil {
		t.Fatal("a build for no file")
	}
	t.Setenv("VETO_FULL", cp)
	if v, ok := wire.VetoBuild(); !ok || v != b {
		t.Fatalf("VetoBuild = %q %v, want %q", v, ok, b)
	}
	t.Setenv("VETO_FULL", filepath.Join(dir, "none"))
	if _, ok := wire.VetoBuild(); ok {
		t.Fatal("a build for no veto")
	}
}

// What finding the build costs veto-hook on every call.
func BenchmarkVetoBuild(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv("VETO_FULL", self)
	for i := 0; i < b.N; i++ {
		if _, ok := wire.VetoBuild(); !ok {
			b.Fatal("no build")
		}
	}
}

// A server keeps only what its answers depend on.
func TestServerEnvKeepsOnlyWhatAnswersNeed(t *testing.T) {
	got := wire.ServerEnv([]string{"HOME=/h", "ANTHROPIC_API_KEY=canary-1", "XDG_RUNTIME_DIR=/run/u", "PATH=/bin",
		"CLAUDE_CODE_MESSAGING_TOKEN=canary-2", "VETO_STATE=/s.db", "USER=u", "TMPDIR=/t", "AWS_SECRET_ACCESS_KEY=canary-3", "=odd", "NOEQUALS"})
	want := "HOME=/h XDG_RUNTIME_DIR=/run/u VETO_STATE=/s.db USER=u TMPDIR=/t"
	if strings.Join(got, " ") != want {
		t.Fatalf("ServerEnv = %q, want %q", got, want)
	}
}

// A socket is asked only in a directory of this user's that no one else
// can enter: one reached through a symlink, one others may enter or list,
// or one owned by another user is never asked, and the call is handed to
// veto hook.
func TestRunNeverAsksASocketOutsideAPrivateDirectory(t *testing.T) {
	t.Setenv("VETO_NO_SERVER", "")
	try := func(t *testing.T, sockDir string) (asked bool, fb *recorder) {
		t.Helper()
		t.Setenv("VETO_SOCKET", filepath.Join(sockDir, "hook.sock"))
		fb = &recorder{}
		code := wire.Run([]string{"claude-code"}, strings.NewReader(event), io.Discard, io.Discard, fb.run, func(string) error {
			t.Error("a server was started for a socket veto-hook may not use")
			return nil
		})
		if asked := fb.calls == 0; asked && code != 0 {
			t.Fatalf("exit %d without the fallback", code)
		}
		return fb.calls == 0, fb
	}
	listen := func(t *testing.T, dir string) {
		t.Helper()
		serveOnce(t, filepath.Join(dir, "hook.sock"), func(wire.Request) string { return `{"exit":0}` + "\n" })
	}

	t.Run("private", func(t *testing.T) {
		dir := privateDir(t)
		listen(t, dir)
		if asked, _ := try(t, dir); !asked {
			t.Fatal("the socket in a private directory was not asked")
		}
	})
	t.Run("symlinked", func(t *testing.T) {
		dir := privateDir(t)
		listen(t, dir)
		link := filepath.Join(privateDir(t), "l")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		if asked, fb := try(t, link); asked || fb.calls != 1 {
			t.Fatalf("a socket reached through a symlinked directory was asked (fallback %d)", fb.calls)
		}
	})
	for _, mode := range []os.FileMode{0o710, 0o701, 0o750, 0o705, 0o770, 0o777, 0o720, 0o702} {
		t.Run("mode-"+mode.String(), func(t *testing.T) {
			dir := privateDir(t)
			listen(t, dir)
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
			if asked, _ := try(t, dir); asked {
				t.Fatalf("a socket in a directory of mode %v was asked", mode)
			}
		})
	}
	t.Run("another-users", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to give a directory to another user")
		}
		dir := privateDir(t)
		listen(t, dir)
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if asked, _ := try(t, dir); asked {
			t.Fatal("a socket in another user's directory was asked")
		}
	})
	t.Run("not-a-directory", func(t *testing.T) {
		file := filepath.Join(privateDir(t), "f")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := wire.Private(file); err == nil {
			t.Fatal("a regular file was taken for a private directory")
		}
	})
}

// One budget covers the whole answer: an input that is never closed, and
// a server that takes the event and never answers, are each refused in the
// client's blocking form within it, never handed on with a budget of
// their own.
func TestOneBudgetCoversTheAnswer(t *testing.T) {
	t.Run("stdin never closed", func(t *testing.T) {
		t.Setenv("VETO_NO_SERVER", "1")
		r, w := io.Pipe()
		defer w.Close()
		go io.WriteString(w, `{"hook_event_name":`) // and never more
		fb := &recorder{}
		var o, e bytes.Buffer
		start := time.Now()
		code := wire.Run([]string{"claude-code", "--timeout", "300ms"}, r, &o, &e, fb.run, nil)
		took := time.Since(start)
		if code != 2 || !strings.Contains(e.String(), "did not receive the whole hook event within 300ms") || fb.calls != 0 {
			t.Fatalf("exit %d %q %q, fallback %d", code, o.String(), e.String(), fb.calls)
		}
		if took > 2*time.Second {
			t.Errorf("answered after %s", took)
		}
	})
	t.Run("a server that never answers", func(t *testing.T) {
		dir := privateDir(t)
		sock := filepath.Join(dir, "hook.sock")
		t.Setenv("VETO_SOCKET", sock)
		t.Setenv("VETO_NO_SERVER", "")
		serveOnce(t, sock, func(wire.Request) string { time.Sleep(time.Second); return "" })
		fb := &recorder{}
		var o, e bytes.Buffer
		start := time.Now()
		code := wire.Run([]string{"claude-code", "--timeout", "300ms"}, strings.NewReader(event), &o, &e, fb.run, nil)
		took := time.Since(start)
		if code != 2 || !strings.Contains(e.String(), "did not decide within 300ms") || fb.calls != 0 {
			t.Fatalf("exit %d %q, fallback %d", code, e.String(), fb.calls)
		}
		if took > 900*time.Millisecond {
			t.Errorf("answered after %s, past the 300ms budget", took)
		}
	})
	t.Run("a veto hook that never answers", func(t *testing.T) {
		t.Setenv("VETO_NO_SERVER", "1")
		stuck := func(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
			io.WriteString(stdout, "partial")
			time.Sleep(3 * time.Second)
			return 0, true
		}
		var o, e bytes.Buffer
		start := time.Now()
		code := wire.Run([]string{"codex", "--timeout", "300ms"}, strings.NewReader(event), &o, &e, stuck, nil)
		took := time.Since(start)
		if code != 2 || !strings.Contains(e.String(), "did not decide within 300ms") || strings.Contains(o.String(), "partial") ||
			!strings.Contains(o.String(), `"permissionDecision":"deny"`) {
			t.Fatalf("exit %d %q %q", code, o.String(), e.String())
		}
		if took > 300*time.Millisecond+wire.Grace+200*time.Millisecond {
			t.Errorf("answered after %s, past the 300ms budget and its grace", took)
		}
	})
	t.Run("what is left goes to veto hook", func(t *testing.T) {
		t.Setenv("VETO_NO_SERVER", "1")
		fb := &recorder{}
		wire.Run([]string{"claude-code", "--timeout", "3s"}, strings.NewReader(event), io.Discard, io.Discard, fb.run, nil)
		args := strings.Join(fb.args, " ")
		left, err := time.ParseDuration(args[strings.LastIndex(args, " ")+1:])
		if !strings.HasPrefix(args, "hook claude-code --timeout 3s --timeout ") || err != nil || left > 3*time.Second || left < 2*time.Second {
			t.Fatalf("veto hook was given %q", args)
		}
	})
}
