package cursor_test

import (
	"testing"

	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/cursor"
)

// TestDecode decodes each payload of testdata/events.txtar, as the client
// sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, cursor.Adapter{}.Decode) }

// TestReplies: the denial is {"permission":"deny",…} with the reason for the user and the agent, exit 0; an allow (approving or not) is {"continue":true,"permission":"allow"}.
func TestReplies(t *testing.T) { agenttest.Replies(t, cursor.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, cursor.Adapter{}.Decode, b) })
}
