package copilotcli_test

import (
	"testing"

	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/copilotcli"
)

// TestDecode decodes each payload of testdata/events.txtar, as the client
// sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, copilotcli.Adapter{}.Decode) }

// TestReplies: the denial is {"permissionDecision":"deny","permissionDecisionReason":…} on stdout, exit 0; an allow prints nothing; approving is {"permissionDecision":"allow"}.
func TestReplies(t *testing.T) { agenttest.Replies(t, copilotcli.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, copilotcli.Adapter{}.Decode, b) })
}
