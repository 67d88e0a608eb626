package geminicli_test

import (
	"testing"

	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/geminicli"
)

// TestDecode decodes each payload of testdata/events.txtar, as the client
// sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, geminicli.Adapter{}.Decode) }

// TestReplies: the denial is exit 2 with the reason on stderr and {"decision":"deny","reason":…} on stdout; an allow is {}; approving is {"decision":"allow"}.
func TestReplies(t *testing.T) { agenttest.Replies(t, geminicli.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, geminicli.Adapter{}.Decode, b) })
}

// TestBeforeAndAfterShareTheCallID: Gemini CLI names no call, and its
// BeforeTool and AfterTool carry different timestamps; the call's decision
// and its observation still get one id.
func TestBeforeAndAfterShareTheCallID(t *testing.T) {
	before := `{"session_id":"s1","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-12-01T10:00:00.000Z","tool_name":"read_file","tool_input":{"absolute_path":"/w/a.go","limit":5}}`
	after := `{"session_id":"s1","cwd":"/w","hook_event_name":"AfterTool","timestamp":"2026-12-01T10:00:03.000Z","tool_name":"read_file","tool_input":{"limit":5, "absolute_path":"/w/a.go"},"tool_response":{"llmContent":"x","error":null}}`
	other := `{"session_id":"s2","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"2026-12-01T10:00:00.000Z","tool_name":"read_file","tool_input":{"absolute_path":"/w/a.go","limit":5}}`
	var ids []string
	for _, ev := range []string{before, after, other} {
		e, err := geminicli.Adapter{}.Decode([]byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.Call.ID)
	}
	if ids[0] != ids[1] || ids[0] == ids[2] || ids[0] == "" {
		t.Fatalf("ids %q: want before and after equal, another session's different", ids)
	}
}
