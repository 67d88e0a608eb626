package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/sqlite"
)

// inProcess is veto-hook's fallback without a veto binary: veto hook's
// answer, made in this process.
func inProcess(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
	r, _ := hook.Reply(context.Background(), hook.AdapterFor(args[1]), bytes.NewReader(event),
		hook.Options{State: os.Getenv("VETO_STATE"), Timeout: 2 * time.Second})
	io.WriteString(stdout, r.Stdout)
	io.WriteString(stderr, r.Stderr)
	return r.Exit, true
}

func TestServerAnswersAndFallsBack(t *testing.T) {
	srv := startServer(t)
	ws, sock, state := srv.ws, srv.sock, os.Getenv("VETO_STATE")
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %v %v, want 0700", fi.Mode(), err)
	}
	if _, err := hook.Listen(sock); err == nil || !strings.Contains(err.Error(), "already listens") {
		t.Fatalf("a second server on the same socket: %v", err)
	}

	call := func(id, tool, input string) (int, string) {
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
		var out, errb bytes.Buffer
		code := wire.Run([]string{"claude-code"}, strings.NewReader(ev), &out, &errb, inProcess, nil)
		return code, out.String() + errb.String()
	}
	n0 := hook.Served()
	if code, out := call("t1", "Read", `{"file_path":"`+ws+`/main.go"}`); code != 0 || out != "" {
		t.Fatalf("read via the server: %d %q", code, out)
	}
	code, out := call("t2", "Bash", `{"command":"git reset --hard"}`)
	if code != 2 || !strings.Contains(out, "rule shell.analyzer, reason git_destructive") {
		t.Fatalf("deny via the server: %d %q", code, out)
	}
	if hook.Served()-n0 != 2 {
		t.Fatalf("the server answered %d of 2", hook.Served()-n0)
	}

	// A policy file that changes is read again: the cached gate is not used.
	os.MkdirAll(filepath.Join(ws, ".veto"), 0o755)
	os.WriteFile(filepath.Join(ws, ".veto", "veto.yaml"), []byte("sequence:\n  max_calls: {Read: 1}\n"), 0o644)
	if code, out := call("t2b", "Read", `{"file_path":"`+ws+`/main.go"}`); code != 2 || !strings.Contains(out, "rule sequence.max_calls") {
		t.Fatalf("after a policy change: %d %q", code, out)
	}
	os.Remove(filepath.Join(ws, ".veto", "veto.yaml"))
	if hook.Served()-n0 != 3 {
		t.Fatalf("the server answered %d of 3", hook.Served()-n0)
	}
	n0++

	// Another environment: this process answers, the same way.
	t.Setenv("TMPDIR", filepath.Join(srv.dir, "othertmp"))
	if code, out := call("t3", "Bash", `{"command":"git reset --hard"}`); code != 2 || !strings.Contains(out, "git_destructive") {
		t.Fatalf("in-process answer: %d %q", code, out)
	}
	if hook.Served()-n0 != 2 {
		t.Fatal("the server answered a request made under another environment")
	}
	os.Unsetenv("TMPDIR")

	// Garbage on the socket is dropped; the server goes on.
	if c, err := net.Dial("unix", sock); err == nil {
		c.Write([]byte("not json\n"))
		c.Close()
	}
	if code, _ := call("t4", "Read", `{"file_path":"`+ws+`/main.go"}`); code != 0 || hook.Served()-n0 != 3 {
		t.Fatalf("after garbage: %d, served %d", code, hook.Served()-n0)
	}

	// The server stops: its socket goes, this process answers.
	srv.stop(t)
	if code, out := call("t5", "Bash", `{"command":"git reset --hard"}`); code != 2 || !strings.Contains(out, "git_destructive") {
		t.Fatalf("without a server: %d %q", code, out)
	}

	// Both wrote one run, in order: the chain holds.
	s, err := sqlite.Open(context.Background(), state, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(context.Background(), "s", 0)
	if err != nil || len(evs) < 5 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

func TestSocketDirectoryMustBePrivate(t *testing.T) {
	dir, err := os.MkdirTemp("", "vh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	if _, err := hook.Listen(filepath.Join(open, "hook.sock")); err == nil || !strings.Contains(err.Error(), "no one else can enter") {
		t.Fatalf("listen in a shared directory: %v", err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o777 {
		t.Fatalf("Listen changed the shared directory's mode to %v", fi.Mode().Perm())
	}
}

// A socket in a directory others can enter may be anyone's: veto-hook
// never asks it, so a fake server answering allow is not heard. (E26 is
// pinned by TestHookAsksOnlyASocketInItsOwnPrivateDirectory.)
func TestHookNeverAsksASharedSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "vh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	shared := filepath.Join(dir, "shared")
	os.Mkdir(shared, 0o755)
	sock := filepath.Join(shared, "hook.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	asked := make(chan bool, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		asked <- true
		c.Write([]byte(`{"exit":0,"stdout":"","stderr":""}` + "\n"))
		c.Close()
	}()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	t.Setenv("VETO_SOCKET", sock)
	t.Setenv("VETO_STATE", filepath.Join(dir, "state", "veto.db"))
	ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git reset --hard"},"tool_use_id":"x"}`
	var out, errb bytes.Buffer
	if code := wire.Run([]string{"claude-code"}, strings.NewReader(ev), &out, &errb, inProcess, nil); code != 2 {
		t.Fatalf("exit %d, want 2 (denied in process)", code)
	}
	select {
	case <-asked:
		t.Fatal("veto-hook asked a socket in a shared directory")
	default:
	}
}

// A veto-hook of another build is not answered (veto hook answers it), and
// the server stays for the clients of its own build.
func TestServerRefusesAnotherBuild(t *testing.T) {
	srv := startServer(t)
	ev := []byte(`{"session_id":"s","cwd":"` + srv.ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` +
		srv.ws + `/main.go"},"tool_use_id":"t"}`)
	rq := wire.Request{V: 1, Build: wire.Build() + "-other", Client: "claude-code", Env: wire.EnvNow(), Event: ev}
	if _, err := wire.Ask(srv.sock, rq, 2*time.Second); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Fatalf("another build was answered: %v", err)
	}
	rq.Build = wire.Build()
	if rs, err := wire.Ask(srv.sock, rq, 2*time.Second); err != nil || rs.Exit != 0 {
		t.Fatalf("its own build after: %+v %v", rs, err)
	}
	select {
	case <-srv.finished:
		t.Fatal("the server stopped")
	default:
	}
	// Its build is what veto serve-hooks --status compares with its own.
	if b, ok := hook.ServerBuild(srv.sock); !ok || b != wire.Build() {
		t.Fatalf("ServerBuild = %q %v, want %q", b, ok, wire.Build())
	}
	if _, ok := hook.ServerBuild(filepath.Join(srv.dir, "run", "none.sock")); ok {
		t.Fatal("a build from a socket nothing listens on")
	}
}

// What the server answers is byte for byte what veto hook answers in its
// own process, for every client: two states, the same events.
func TestServedRepliesAreVetoHooks(t *testing.T) {
	srv := startServer(t)
	dir, ws, sock := srv.dir, srv.ws, srv.sock

	events := map[string][]string{
		clients.ClaudeCode.Name: {
			`{"session_id":"s","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"WS/main.go"},"tool_use_id":"a"}`,
			`{"session_id":"s","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git reset --hard"},"tool_use_id":"b"}`,
			`{"session_id":"s","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"~/.ssh/id_rsa"},"tool_use_id":"c"}`,
			`not json`,
		},
		clients.GeminiCLI.Name: {
			`{"session_id":"g","cwd":"WS","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`,
			`{"session_id":"g","cwd":"WS","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"WS/main.go"}}`,
		},
		clients.CopilotCLI.Name: {
			`{"sessionId":"c","cwd":"WS","toolName":"bash","toolArgs":"{\"command\":\"git push --force\"}"}`,
		},
		clients.Cursor.Name: {
			`{"conversation_id":"k","hook_event_name":"beforeShellExecution","command":"git reset --hard","cwd":"WS","workspace_roots":["WS"]}`,
		},
		clients.Codex.Name: {
			`{"session_id":"x","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["bash","-lc","git reset --hard"]}}`,
		},
		clients.Pi.Name: {
			`{"v":1,"event":"tool_call","sessionId":"p","cwd":"WS","toolName":"bash","toolCallId":"p1","input":{"command":"git reset --hard"}}`,
			`{"v":1,"event":"tool_call","sessionId":"p","cwd":"WS","toolName":"read","toolCallId":"p2","input":{"path":"WS/main.go"}}`,
		},
		clients.OpenCode.Name: {
			`{"v":1,"event":"tool_call","sessionId":"o","cwd":"WS","toolName":"bash","toolCallId":"o1","input":{"command":"git reset --hard"}}`,
			`{"v":1,"event":"tool_call","sessionId":"o","cwd":"WS","toolName":"read","toolCallId":"o2","input":{"filePath":"WS/main.go"}}`,
		},
		clients.ClaudeAgentSDK.Name: {
			`{"veto_protocol":1,"session_id":"a","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git reset --hard"},"tool_use_id":"a1"}`,
			`{"veto_protocol":1,"session_id":"a","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"WS/main.go"},"tool_use_id":"a2"}`,
		},
	}
	for _, c := range clients.All {
		if len(events[c.Name]) == 0 {
			t.Errorf("%s: no events to compare", c.Name)
		}
	}
	n, denied, allowed := 0, 0, 0
	for client, evs := range events {
		for _, ev := range evs {
			ev = strings.ReplaceAll(ev, "WS", ws)
			served := filepath.Join(dir, "served.db")
			rs, err := wire.Ask(sock, wire.Request{V: 1, Build: wire.Build(), Client: client, State: served, Env: wire.EnvNow(), Event: []byte(ev)}, 5*time.Second)
			if err != nil && json.Valid([]byte(ev)) {
				t.Fatalf("%s: %v", client, err)
			}
			if err != nil {
				continue // not JSON: never sent; veto hook answers it
			}
			r, _ := hook.Reply(context.Background(), hook.AdapterFor(client), strings.NewReader(ev),
				hook.Options{State: filepath.Join(dir, "own.db"), Timeout: 2 * time.Second})
			if rs.Exit != r.Exit || rs.Stdout != r.Stdout || rs.Stderr != r.Stderr {
				t.Errorf("%s %s:\nserved %d %q %q\nveto   %d %q %q", client, ev, rs.Exit, rs.Stdout, rs.Stderr, r.Exit, r.Stdout, r.Stderr)
			}
			n++
			switch all := rs.Stdout + rs.Stderr; {
			case strings.Contains(all, "reason git_") || strings.Contains(all, "reason credential_path"):
				denied++
			case !strings.Contains(all, "deny") && !strings.Contains(all, "block"):
				allowed++
			}
		}
	}
	if n < 8 || denied < 4 || allowed < 2 {
		t.Fatalf("compared %d replies, %d denied by a rule, %d allowed", n, denied, allowed)
	}
}

// A request under way when the server is told to stop is still answered,
// as it would have been, before the server returns.
func TestServerFinishesRequestsUnderWay(t *testing.T) {
	srv := startServer(t)
	dir, ws, sock := srv.dir, srv.ws, srv.sock

	ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + ws + `/main.go"},"tool_use_id":"t"}`
	b, _ := json.Marshal(wire.Request{V: 1, Build: wire.Build(), Client: "claude-code", State: filepath.Join(dir, "veto.db"), Env: wire.EnvNow(), Event: []byte(ev)})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(b[:len(b)/2])
	time.Sleep(50 * time.Millisecond) // the server has accepted and is reading
	srv.cancel()
	select {
	case <-srv.finished:
		t.Fatal("the server returned with a request under way")
	case <-time.After(100 * time.Millisecond):
	}
	c.Write(append(b[len(b)/2:], '\n'))
	var rs wire.Response
	if err := json.NewDecoder(c).Decode(&rs); err != nil || rs.Exit != 0 || rs.Stdout != "" || rs.Stderr != "" {
		t.Fatalf("answer %+v %v, want the allow veto hook gives", rs, err)
	}
	srv.stop(t)
}

// The newline veto-hook writes after its request, left in the socket when
// a read ends at the request's closing brace, is not veto-hook going away:
// the decision goes on and is answered. Requests of every length around
// the reader's buffer sizes (its first read is 4096 bytes; encoding/json's
// was 512) are decided, none cancelled.
func TestServerAnswersWhateverTheRequestsLength(t *testing.T) {
	srv := startServer(t)
	ws, sock, state := srv.ws, srv.sock, os.Getenv("VETO_STATE")
	base := wire.Request{V: 1, Build: wire.Build(), Client: "claude-code", State: state, Env: wire.EnvNow()}
	for _, size := range []int{513, 1537, 3585, 4096, 4097, 4098, 7681, 8193, 8194, 12289, 16385} {
		pad := 0
		for ; ; pad++ {
			ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` +
				ws + `/main.go"},"tool_use_id":"t` + strconv.Itoa(size) + `","pad":"` + strings.Repeat("x", pad) + `"}`
			rq := base
			rq.Event = []byte(ev)
			// The closing brace at byte size, the newline after it.
			if n := len(wire.AppendRequest(nil, &rq)) - 1; n < size {
				continue
			} else if n > size {
				if pad == 0 && size < 4096 {
					break // shorter than the least request here (its paths are long)
				}
				t.Fatalf("no padding makes a request of %d bytes", size)
			}
			rs, err := wire.Ask(sock, rq, 2*time.Second)
			if err != nil || rs.Exit != 0 || strings.Contains(rs.Stderr, "did not decide") {
				t.Fatalf("a request of %d bytes: %+v %v", size, rs, err)
			}
			break
		}
	}
}
