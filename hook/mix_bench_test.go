package hook_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/vetohq/veto/hook/wire"
)

// BenchmarkServedMix is BenchmarkServedRequest on the mix of go run
// ./bench: Bash, Read, Bash, Edit, Bash, each call an id of its own.
func BenchmarkServedMix(b *testing.B) {
	srv := startServer(b)
	ws, sock, state := srv.ws, srv.sock, os.Getenv("VETO_STATE")
	main := ws + "/main.go"
	inputs := []struct{ tool, input string }{
		{"Bash", `{"command":"go test ./... 2>&1 | tail -20"}`},
		{"Read", `{"file_path":"` + main + `"}`},
		{"Bash", `{"command":"git status --short && git diff --stat"}`},
		{"Edit", `{"file_path":"` + main + `","old_string":"package main","new_string":"package main"}`},
		{"Bash", `{"command":"rg -n 'TODO' src | head"}`},
	}
	i := 0
	for b.Loop() {
		in := inputs[i%len(inputs)]
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"` + in.tool + `","tool_input":` + in.input + `,"tool_use_id":"t` + strconv.Itoa(i) + `"}`
		rs, err := wire.Ask(sock, wire.Request{V: 1, Build: wire.Build(), Client: "claude-code", State: state, Env: wire.EnvNow(), Event: []byte(ev)}, 2*time.Second)
		if err != nil || rs.Exit != 0 {
			b.Fatalf("%s: %+v %v", in.tool, rs, err)
		}
		i++
	}
}
