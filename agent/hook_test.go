package agent_test

import (
	"testing"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/agent/agenttest"
)

func decodeHook(b []byte) (agent.Event, error) {
	h, err := agent.DecodeHook(b)
	if err != nil {
		return agent.Event{}, err
	}
	return h.Event("some-client", "/p")
}

// FuzzDecodeHook: a Claude-shaped event decodes the same way twice, into
// an error or a valid event.
func FuzzDecodeHook(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		`{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":"{\"command\":\"ls\"}","tool_use_id":"t","is_interrupt":true}`,
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_use_id":"t","agent_id":"a"}`,
		`{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`,
		`{"session_id":"s","hook_event_name":"Stop"}`, `{}`, `null`, ``, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, decodeHook, b) })
}
