package claudeagentsdk_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/claudeagentsdk"
)

// TestDecode decodes each payload of testdata/events.txtar, as veto's
// module sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, claudeagentsdk.Adapter{}.Decode) }

// TestReplies: the denial is {"block":true,"reason":…} with exit 2; an
// allow and an approve are {"block":false}.
func TestReplies(t *testing.T) { agenttest.Replies(t, claudeagentsdk.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Add([]byte(`{"veto_protocol":1,"veto_can_ask":true,"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`))
	f.Add([]byte(`{"veto_protocol":1,"session_id":"s","hook_event_name":"PermissionDenied","tool_name":"Write","tool_use_id":"t","veto_answer":"refused"}`))
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, claudeagentsdk.Adapter{}.Decode, b) })
}

// TestAsk: a question goes to the host's canUseTool only where the host
// gave one (veto_can_ask), with veto's question and never the call's
// arguments.
func TestAsk(t *testing.T) {
	v := veto.Verdict{Tool: "Write", Ask: true, Rule: "files.overwrite_unread", Reason: "overwrite_unread", Message: "The file was never read in this run."}
	const call = `"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write","tool_use_id":"t","tool_input":{"file_path":"CANARY-PATH","content":"CANARY"}`
	cases := []struct {
		name, event string
		ask         bool
	}{
		{"the host can ask", `{"veto_protocol":1,"veto_can_ask":true,` + call + `}`, true},
		{"no canUseTool", `{"veto_protocol":1,"veto_can_ask":false,` + call + `}`, false},
		{"the SDK's permission mode is not the module's word", `{"veto_protocol":1,"permission_mode":"veto:can-ask",` + call + `}`, false},
		{"a result", `{"veto_protocol":1,"veto_can_ask":true,"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Write","tool_use_id":"t"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := claudeagentsdk.Adapter{}.Decode([]byte(c.event))
			if err != nil {
				t.Fatal(err)
			}
			r, ok := claudeagentsdk.Adapter{}.Ask(&ev, v)
			if ok != c.ask {
				t.Fatalf("asked %v, want %v", ok, c.ask)
			}
			if !ok {
				return
			}
			want := `{"ask":true,"block":true,"reason":"veto asks a person about this Write call (rule files.overwrite_unread, reason overwrite_unread): The file was never read in this run."}` + "\n"
			if r.Exit != 0 || r.Stdout != want || r.Stderr != "" {
				t.Fatalf("reply %d %q %q, want 0 %q", r.Exit, r.Stdout, r.Stderr, want)
			}
			if strings.Contains(r.Stdout, "CANARY") {
				t.Fatal("the question quotes the call's arguments")
			}
		})
	}
	if _, ok := (claudeagentsdk.Adapter{}).Ask(nil, v); ok {
		t.Fatal("asked without an event")
	}
}
