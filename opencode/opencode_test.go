package opencode_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/opencode"
)

// TestDecode decodes each payload of testdata/events.txtar, as veto's
// OpenCode plugin sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, opencode.Adapter{}.Decode) }

// TestReplies: the denial is {"block":true,"reason":…} with exit 2; an
// allow and an approve are {"block":false}.
func TestReplies(t *testing.T) { agenttest.Replies(t, opencode.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Add([]byte(`{"v":1,"event":"tool_call","sessionId":"s","cwd":"/w","toolName":"bash","toolCallId":"c","input":{"command":"ls"}}`))
	f.Add([]byte(`{"v":1,"event":"tool_result","sessionId":"s","toolName":"write","toolCallId":"c","isError":true}`))
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, opencode.Adapter{}.Decode, b) })
}

// TestAsk: OpenCode has no prompt for a plugin, so a question is refused
// with the blocking reply: veto's question, what the person must do, and
// never the call's arguments.
func TestAsk(t *testing.T) {
	v := veto.Verdict{Tool: "write", Ask: true, Rule: "files.overwrite_unread", Reason: "overwrite_unread", Message: "The file was never read in this run."}
	ev, err := opencode.Adapter{}.Decode([]byte(`{"v":1,"event":"tool_call","sessionId":"s","toolName":"write","toolCallId":"c","input":{"filePath":"CANARY-PATH","content":"CANARY"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := opencode.Adapter{}.Ask(&ev, v)
	if !ok {
		t.Fatal("a question on a tool call was not answered")
	}
	if r.Exit != 2 || r.Stderr != "" || !strings.HasPrefix(r.Stdout, `{"block":true,"reason":"veto blocked this write call until a person approves it (rule files.overwrite_unread, reason overwrite_unread)`) ||
		!strings.Contains(r.Stdout, opencode.NoPrompt) {
		t.Fatalf("reply %d %q %q", r.Exit, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "CANARY") || strings.Contains(r.Stdout, `"ask"`) {
		t.Fatal("the refusal quotes the call's arguments, or asks")
	}
	res, _ := opencode.Adapter{}.Decode([]byte(`{"v":1,"event":"tool_result","sessionId":"s","toolName":"write","toolCallId":"c"}`))
	if _, ok := (opencode.Adapter{}).Ask(&res, v); ok {
		t.Fatal("answered a question on a result")
	}
	if _, ok := (opencode.Adapter{}).Ask(nil, v); ok {
		t.Fatal("answered without an event")
	}
	var _ agent.Asker = opencode.Adapter{}
}
