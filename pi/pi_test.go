package pi_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/pi"
)

// TestDecode decodes each payload of testdata/events.txtar, as veto's pi
// extension sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, pi.Adapter{}.Decode) }

// TestReplies: the denial is {"block":true,"reason":…} with exit 2; an
// allow and an approve are {"block":false}.
func TestReplies(t *testing.T) { agenttest.Replies(t, pi.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Add([]byte(`{"v":1,"event":"tool_call","sessionId":"s","cwd":"/w","toolName":"bash","toolCallId":"c","input":{"command":"ls"},"hasUI":true}`))
	f.Add([]byte(`{"v":1,"event":"answer","sessionId":"s","toolName":"write","toolCallId":"c","answer":"refused"}`))
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, pi.Adapter{}.Decode, b) })
}

// TestAsk: a question is put to the person only where pi has a UI, with
// veto's question and never the call's arguments; the reply blocks for an
// extension that does not know "ask".
func TestAsk(t *testing.T) {
	v := veto.Verdict{Tool: "write", Ask: true, Rule: "files.overwrite_unread", Reason: "overwrite_unread", Message: "The file was never read in this run."}
	cases := []struct {
		name  string
		event string
		ask   bool
	}{
		{"with a UI", `{"v":1,"event":"tool_call","sessionId":"s","toolName":"write","toolCallId":"c","input":{"path":"CANARY-PATH","content":"CANARY"},"hasUI":true}`, true},
		{"print mode", `{"v":1,"event":"tool_call","sessionId":"s","toolName":"write","toolCallId":"c","input":{"path":"CANARY-PATH","content":"CANARY"},"hasUI":false}`, false},
		{"no hasUI", `{"v":1,"event":"tool_call","sessionId":"s","toolName":"write","toolCallId":"c","input":{"path":"CANARY-PATH"}}`, false},
		{"a result", `{"v":1,"event":"tool_result","sessionId":"s","toolName":"write","toolCallId":"c","hasUI":true}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := pi.Adapter{}.Decode([]byte(c.event))
			if err != nil {
				t.Fatal(err)
			}
			r, ok := pi.Adapter{}.Ask(&ev, v)
			if ok != c.ask {
				t.Fatalf("asked %v, want %v", ok, c.ask)
			}
			if !ok {
				return
			}
			want := `{"ask":true,"block":true,"reason":"veto asks a person about this write call (rule files.overwrite_unread, reason overwrite_unread): The file was never read in this run."}` + "\n"
			if r.Exit != 0 || r.Stdout != want || r.Stderr != "" {
				t.Fatalf("reply %d %q %q, want 0 %q", r.Exit, r.Stdout, r.Stderr, want)
			}
			if strings.Contains(r.Stdout, "CANARY") {
				t.Fatal("the question quotes the call's arguments")
			}
		})
	}
	if _, ok := (pi.Adapter{}).Ask(nil, v); ok {
		t.Fatal("asked without an event")
	}
	var _ agent.Asker = pi.Adapter{}
}
