package hook_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/sqlite"
)

// decisions counts the decisions recorded for call id in run s.
func decisions(t *testing.T, state, id string) int {
	t.Helper()
	s, err := sqlite.Open(context.Background(), state, sqlite.Options{})
	check(t, err)
	defer s.Close()
	evs, err := s.Events(context.Background(), "s", 0)
	check(t, err)
	n := 0
	for _, e := range evs {
		if e.CallID == id && (e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied || e.Kind == veto.EventToolDenied) {
			n++
		}
	}
	return n
}

// A server that recorded its decision and did not give it: veto hook,
// told when veto-hook asked, answers with that decision, and records no
// second one. A decision with the same id recorded before the ask is
// another call's, and the call is decided.
func TestDecisionsAreIdempotentByCallID(t *testing.T) {
	srv := startServer(t)
	state := os.Getenv("VETO_STATE")
	event := func(id, tool, input string) string {
		return `{"session_id":"s","cwd":"` + srv.ws + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
	}
	fallback := func(ev string, asked time.Time) (int, string) {
		r, _ := hook.Reply(context.Background(), hook.AdapterFor("claude-code"), strings.NewReader(ev), hook.Options{State: state, Timeout: 2 * time.Second, AskedAt: asked})
		return r.Exit, r.Stdout + r.Stderr
	}
	served := func(ev string) (int, string) {
		var out bytes.Buffer
		noFallback := func([]string, []byte, io.Writer, io.Writer) (int, bool) {
			t.Error("the server did not answer")
			return 0, false
		}
		code := wire.Run([]string{"claude-code"}, strings.NewReader(ev), &out, &out, noFallback, nil)
		return code, out.String()
	}
	read := `{"file_path":"` + srv.ws + `/main.go"}`
	reset := `{"command":"git reset --hard"}`
	for _, c := range []struct {
		name         string
		id, tool, in string
		exit         int
	}{
		{"allowed", "a1", "Read", read, 0},
		{"denied", "d1", "Bash", reset, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := event(c.id, c.tool, c.in)
			asked := time.Now()
			code, out := served(ev) // the server records; its answer is lost
			if code != c.exit {
				t.Fatalf("served: %d %q", code, out)
			}
			code, out = fallback(ev, asked)
			if code != c.exit || (c.exit == 2 && !strings.Contains(out, "reason git_destructive")) {
				t.Fatalf("veto hook after the server: %d %q", code, out)
			}
			if n := decisions(t, state, c.id); n != 1 {
				t.Fatalf("%d decisions recorded for %s", n, c.id)
			}
			// Asked after that decision: it is not this call's.
			if code, out := fallback(ev, time.Now()); code != c.exit {
				t.Fatalf("a later call with the id: %d %q", code, out)
			}
			if n := decisions(t, state, c.id); n != 2 {
				t.Fatalf("%d decisions recorded for %s, want a second call decided", n, c.id)
			}
		})
	}
	// Another tool under the id is another call, whenever it was recorded.
	asked := time.Now()
	served(event("x1", "Read", read))
	if code, out := fallback(event("x1", "Bash", reset), asked); code != 2 || !strings.Contains(out, "git_destructive") {
		t.Fatalf("another tool under a recorded id: %d %q", code, out)
	}
}

// veto-hook tells veto hook when it asked a server that took the event
// and gave no answer, and only then.
func TestRunSaysWhenItAskedAServer(t *testing.T) {
	dir, err := os.MkdirTemp("", "vh") // short: a socket path has a length limit
	check(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	sock := filepath.Join(dir, "hook.sock")
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_NO_SERVER", "")
	self, _ := os.Executable()
	t.Setenv("VETO_FULL", self)
	var args []string
	fb := func(a []string, _ []byte, _, _ io.Writer) (int, bool) { args = a; return 0, true }
	ev := `{"hook_event_name":"PreToolUse","tool_name":"Read"}`

	wire.Run([]string{"claude-code"}, strings.NewReader(ev), io.Discard, io.Discard, fb, nil)
	if strings.Contains(strings.Join(args, " "), "asked-at") {
		t.Fatalf("no server, yet %v", args)
	}
	l, err := net.Listen("unix", sock)
	check(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Read(make([]byte, 4096))
			c.Close() // died before answering
		}
	}()
	before := time.Now().UnixNano()
	wire.Run([]string{"claude-code"}, strings.NewReader(ev), io.Discard, io.Discard, fb, nil)
	after := time.Now().UnixNano()
	if len(args) != 6 || args[2] != "--asked-at" || args[4] != "--timeout" {
		t.Fatalf("fallback args %v", args)
	}
	if at, err := strconv.ParseInt(args[3], 10, 64); err != nil || at < before || at > after {
		t.Fatalf("asked-at %s, asked between %d and %d", args[3], before, after)
	}
}

// A request read after veto-hook gave up on it (the server was stopped,
// then continued) is neither answered nor decided: veto hook decided it.
func TestServerDecidesNothingPastTheDeadline(t *testing.T) {
	srv := startServer(t)
	state := os.Getenv("VETO_STATE")
	ev := `{"session_id":"s","cwd":"` + srv.ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + srv.ws + `/main.go"},"tool_use_id":"late1"}`
	build, _ := wire.VetoBuild()
	rq := wire.Request{V: 1, Build: build, Client: "claude-code", State: state, Env: wire.EnvNow(), Event: []byte(ev),
		TimeoutMS: 2000, DeadlineNS: time.Now().Add(-time.Millisecond).UnixNano()}
	if rs, err := wire.Ask(srv.sock, rq, 2*time.Second); err == nil {
		t.Fatalf("answered past the deadline: %+v", rs)
	}
	rq.DeadlineNS = time.Now().Add(2 * time.Second).UnixNano()
	rq.Event = []byte(strings.Replace(ev, "late1", "ontime1", 1))
	if rs, err := wire.Ask(srv.sock, rq, 2*time.Second); err != nil || rs.Exit != 0 {
		t.Fatalf("in time: %+v %v", rs, err)
	}
	if decisions(t, state, "late1") != 0 || decisions(t, state, "ontime1") != 1 {
		t.Fatal("decided past the deadline, or not in time")
	}
}

// veto hook's deadline covers reading the event: a client that never
// closes stdin is refused within it, in its blocking form.
func TestReplyRefusesAnEventThatNeverEnds(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	go io.WriteString(w, `{"session_id":"s","hook_event_name":"PreToolUse"`) // and never more
	start := time.Now()
	rep, _ := hook.Reply(context.Background(), claudecode.Adapter{}, r, hook.Options{Timeout: 300 * time.Millisecond})
	if rep.Exit != 2 || !strings.Contains(rep.Stderr, "did not receive the whole hook event within 300ms") {
		t.Fatalf("reply %+v", rep)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("answered after %s", took)
	}
}
