package hook_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
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

// A call is decided once: asked again (the server recorded its answer and
// died before giving it, and veto-hook handed the event to veto hook; or
// veto hook decided while a stopped server waited, and the server went on)
// it is answered as recorded, and no second decision is recorded.
func TestDecisionsAreIdempotentByCallID(t *testing.T) {
	srv := startServer(t)
	state := os.Getenv("VETO_STATE")
	event := func(id, tool, input string) string {
		return `{"session_id":"s","cwd":"` + srv.ws + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
	}
	fallback := func(ev string) (int, string) {
		r, _ := hook.Reply(context.Background(), hook.AdapterFor("claude-code"), strings.NewReader(ev), hook.Options{State: state, Timeout: 2 * time.Second})
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
		name          string
		id, tool, in  string
		first, second func(string) (int, string)
		exit          int
	}{
		{"served, then veto hook: allowed", "a1", "Read", read, served, fallback, 0},
		{"served, then veto hook: denied", "d1", "Bash", reset, served, fallback, 2},
		{"veto hook, then served: allowed", "a2", "Read", read, fallback, served, 0},
		{"veto hook, then served: denied", "d2", "Bash", reset, fallback, served, 2},
		{"veto hook twice", "a3", "Read", read, fallback, fallback, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := event(c.id, c.tool, c.in)
			code, out := c.first(ev)
			if code != c.exit {
				t.Fatalf("first: %d %q", code, out)
			}
			code2, out2 := c.second(ev)
			if code2 != c.exit || (c.exit == 2 && !strings.Contains(out2, "reason git_destructive")) {
				t.Fatalf("asked again: %d %q, first %d %q", code2, out2, code, out)
			}
			if n := decisions(t, state, c.id); n != 1 {
				t.Fatalf("%d decisions recorded for %s", n, c.id)
			}
		})
	}
}
