package hook_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
)

// BenchmarkHookReply is everything veto-hook does for one PreToolUse
// event but start the process: load the policy, open the SQLite state,
// decide, record, close.
func BenchmarkHookReply(b *testing.B) {
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	b.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	a := hook.AdapterFor("claude-code")
	o := hook.Options{State: filepath.Join(dir, "state", "veto.db")}
	i := 0
	for b.Loop() {
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` +
			ws + `/main.go"},"tool_use_id":"t` + strconv.Itoa(i) + `"}`
		r, err := hook.Reply(context.Background(), a, strings.NewReader(ev), o)
		if err != nil || r.Exit != 0 {
			b.Fatalf("%+v %v", r, err)
		}
		i++
	}
}

// BenchmarkServedRequest is what veto-hook waits for when the server
// answers: connect, send the event, the server decides and records in
// SQLite, the answer comes back.
func BenchmarkServedRequest(b *testing.B) {
	benchServed(b, func(ws string) []toolInput {
		return []toolInput{{"Read", `{"file_path":"` + ws + `/main.go"}`}}
	})
}

// BenchmarkServedMix is BenchmarkServedRequest on the mix of go run
// ./bench: Bash, Read, Bash, Edit, Bash.
func BenchmarkServedMix(b *testing.B) {
	benchServed(b, func(ws string) []toolInput {
		main := ws + "/main.go"
		return []toolInput{
			{"Bash", `{"command":"go test ./... 2>&1 | tail -20"}`},
			{"Read", `{"file_path":"` + main + `"}`},
			{"Bash", `{"command":"git status --short && git diff --stat"}`},
			{"Edit", `{"file_path":"` + main + `","old_string":"package main","new_string":"package main"}`},
			{"Bash", `{"command":"rg -n 'TODO' src | head"}`},
		}
	})
}

// toolInput is a tool and its input, JSON.
type toolInput struct{ tool, input string }

// benchServed asks a server of this build for PreToolUse events of the
// inputs in turn, each call an id of its own; every one must be allowed.
func benchServed(b *testing.B, inputs func(ws string) []toolInput) {
	srv := startServer(b)
	ws, sock, state := srv.ws, srv.sock, os.Getenv("VETO_STATE")
	ins := inputs(ws)
	i := 0
	for b.Loop() {
		in := ins[i%len(ins)]
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"` + in.tool + `","tool_input":` + in.input + `,"tool_use_id":"t` + strconv.Itoa(i) + `"}`
		rs, err := wire.Ask(sock, wire.Request{V: 1, Build: wire.Build(), Client: "claude-code", State: state, Env: wire.EnvNow(), Event: []byte(ev)}, 2*time.Second)
		if err != nil || rs.Exit != 0 {
			b.Fatalf("%s: %+v %v", in.tool, rs, err)
		}
		i++
	}
}
