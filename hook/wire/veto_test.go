package wire_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/hook/wire"
)

// fakeVeto writes an executable standing in for veto: it prints its
// arguments and its input, appends its arguments to log, and exits with
// the code in $FAKE_EXIT (or kills itself when it is "signal").
func fakeVeto(t *testing.T, dir, log string) string {
	t.Helper()
	p := filepath.Join(dir, "veto")
	script := "#!/bin/sh\necho \"args:$*\"\necho \"$*\" >> " + log + "\ncat\n" +
		"if [ \"$FAKE_EXIT\" = signal ]; then kill -9 $$; fi\nexit ${FAKE_EXIT:-0}\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// RunVeto runs veto with the event as its input and hands back its exit;
// a veto that cannot be found, run or that dies by a signal is no answer.
func TestRunVetoHandsBackVetosAnswer(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	full := fakeVeto(t, dir, log)
	t.Setenv("VETO_FULL", full)
	for _, tc := range []struct {
		exit string
		code int
		ok   bool
	}{{"0", 0, true}, {"2", 2, true}, {"7", 7, true}, {"signal", 0, false}} {
		t.Setenv("FAKE_EXIT", tc.exit)
		var o, e bytes.Buffer
		code, ok := wire.RunVeto([]string{"hook", "claude-code"}, []byte(`{"e":1}`), &o, &e)
		if code != tc.code || ok != tc.ok {
			t.Errorf("exit %s: %d %v, want %d %v", tc.exit, code, ok, tc.code, tc.ok)
		}
		if tc.ok && o.String() != "args:hook claude-code\n{\"e\":1}" {
			t.Errorf("exit %s: veto printed %q", tc.exit, o.String())
		}
	}
	t.Setenv("FAKE_EXIT", "")

	// Where veto is looked for: $VETO_FULL (which must be executable), else PATH.
	if p, err := wire.VetoPath(); err != nil || p != full {
		t.Fatalf("VetoPath = %q %v, want %q", p, err, full)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{plain, dir, filepath.Join(dir, "missing")} {
		t.Setenv("VETO_FULL", bad)
		if p, err := wire.VetoPath(); err == nil {
			t.Errorf("VETO_FULL=%s: found %q", bad, p)
		}
		if _, ok := wire.RunVeto([]string{"hook"}, nil, &bytes.Buffer{}, &bytes.Buffer{}); ok {
			t.Errorf("VETO_FULL=%s: an answer", bad)
		}
	}
	t.Setenv("VETO_FULL", "")
	t.Setenv("PATH", dir)
	if p, err := wire.VetoPath(); err != nil || p != full {
		t.Errorf("veto on PATH: %q %v", p, err)
	}
	t.Setenv("PATH", t.TempDir())
	if p, err := wire.VetoPath(); err == nil {
		t.Errorf("no veto anywhere, found %q", p)
	}
}

// Main hands a call it cannot send to a server to veto hook CLIENT, and a
// server it finds missing is started for the next call.
func TestMainFallsBackToVetoAndStartsAServer(t *testing.T) {
	dir := privateDir(t)
	log := filepath.Join(dir, "log")
	t.Setenv("VETO_FULL", fakeVeto(t, dir, log))
	t.Setenv("FAKE_EXIT", "2")
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	var o, e bytes.Buffer
	if code := wire.Main([]string{"claude-code"}, strings.NewReader(event), &o, &e); code != 2 || !strings.HasPrefix(o.String(), "args:hook claude-code --timeout ") {
		t.Fatalf("exit %d, stdout %q", code, o.String())
	}
	want := "serve-hooks --socket " + sock + " --idle " + wire.ServerIdle.String()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server started; veto ran with:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("VETO_FULL", filepath.Join(dir, "missing"))
	if err := wire.StartServer(sock); err == nil {
		t.Error("a server was started without veto")
	}
}

// Two environments are the same when they agree on every key an answer
// depends on, and only those.
func TestSameEnvComparesTheKeysAnswersDependOn(t *testing.T) {
	a := wire.EnvNow()
	b := map[string]string{}
	for k, v := range a {
		b[k] = v
	}
	b["UNRELATED"] = "x"
	if !wire.SameEnv(a, b) {
		t.Error("an unrelated variable made the environments differ")
	}
	for _, k := range wire.EnvKeys {
		c := map[string]string{}
		for k, v := range a {
			c[k] = v
		}
		c[k] += "/other"
		if wire.SameEnv(a, c) {
			t.Errorf("%s differs, yet the environments are the same", k)
		}
	}
}

// A socket that cannot be dialled for another reason than its absence
// (a path longer than a socket address holds) is that error, not "no
// server": nothing is started for it.
func TestAskReportsAnUndiallableSocket(t *testing.T) {
	dir := privateDir(t)
	deep := filepath.Join(dir, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := wire.Ask(filepath.Join(deep, "hook.sock"), wire.Request{V: 1, Event: []byte(event)}, time.Second)
	var pe *os.PathError
	if err == nil || err == wire.ErrNoServer || !errors.As(err, &pe) || pe.Op != "connect" {
		t.Fatalf("Ask of an undiallable socket = %v, want the connect error", err)
	}
	sock := filepath.Join(dir, "x.sock")
	asked := false
	serveOnce(t, sock, func(wire.Request) string { asked = true; return `{"exit":0}` + "\n" })
	if _, err := wire.Ask(sock, wire.Request{V: 1, Event: []byte("not json")}, time.Second); err == nil || asked {
		t.Fatalf("an event that is not JSON was sent: %v", err)
	}
}

// Run's command line: help, a stray argument, a timeout that is not
// positive, and a bad flag (its usage on the given stderr); without
// --approve the request does not approve.
func TestRunCommandLine(t *testing.T) {
	t.Setenv("VETO_NO_SERVER", "1")
	fallback := func([]string, []byte, io.Writer, io.Writer) (int, bool) { return 5, true }
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"claude-code", "-h"}, 0},
		{[]string{"claude-code", "stray"}, 64},
		{[]string{"claude-code", "--timeout", "0s"}, 64},
		{[]string{"claude-code", "--timeout", "-1s"}, 64},
		{[]string{"claude-code", "--no-such-flag"}, 64},
		{[]string{"claude-code", "--timeout", "1ns"}, 2}, // the budget is spent before veto hook could start
		{[]string{}, 64},
		{[]string{"emacs"}, 64},
	} {
		var e bytes.Buffer
		if code := wire.Run(tc.args, strings.NewReader(event), io.Discard, &e, fallback, nil); code != tc.code {
			t.Errorf("%q: exit %d, want %d (%s)", tc.args, code, tc.code, e.String())
		}
		if tc.code == 64 && e.Len() == 0 {
			t.Errorf("%q: nothing said on stderr", tc.args)
		}
	}
	dir := privateDir(t)
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	var got wire.Request
	serveOnce(t, sock, func(rq wire.Request) string { got = rq; return `{"exit":0}` + "\n" })
	wire.Run([]string{"claude-code"}, strings.NewReader(event), io.Discard, io.Discard, fallback, nil)
	served.Lock()
	seen := got
	served.Unlock()
	if seen.V != 1 || seen.Approve || seen.TimeoutMS > 2000 || seen.TimeoutMS < 1500 {
		t.Fatalf("request %+v; want no approval and what is left of the 2s default budget", seen)
	}
}

// StartServer reports a veto that cannot be started, and veto is found
// next to this program before PATH.
func TestStartServerAndVetoNextToThisProgram(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "veto")
	if err := os.WriteFile(bad, []byte("\x00\x01 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VETO_FULL", bad)
	if err := wire.StartServer(filepath.Join(dir, "s.sock")); err == nil {
		t.Fatal("a veto that cannot start was started")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(filepath.Dir(self), "veto")
	if _, err := os.Stat(next); err == nil {
		t.Skip("a veto already lies next to the test binary")
	}
	if err := os.WriteFile(next, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skipf("cannot write next to the test binary: %v", err)
	}
	defer os.Remove(next)
	t.Setenv("VETO_FULL", "")
	t.Setenv("PATH", t.TempDir())
	if p, err := wire.VetoPath(); err != nil || p != next {
		t.Fatalf("VetoPath = %q %v, want %s", p, err, next)
	}
}

// A test binary carries no module version and no VCS stamp, yet its build
// is its Go build ID, never "devel", the same on every call.
func TestBuildOfAnUnstampedBinary(t *testing.T) {
	if b := wire.Build(); !strings.HasPrefix(b, "go:") || len(b) < 10 || wire.Build() != b {
		t.Fatalf("Build() = %q, want the program's Go build ID", b)
	}
}
