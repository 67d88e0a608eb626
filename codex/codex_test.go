package codex_test

import (
	"testing"

	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/codex"
)

// TestDecode decodes each payload of testdata/events.txtar, as Codex
// sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, codex.Adapter{}.Decode) }

// TestReplies: the denial is Codex's strict hookSpecificOutput deny on
// stdout, the reason on stderr too, and exit 2; an allow prints nothing.
func TestReplies(t *testing.T) { agenttest.Replies(t, codex.Adapter{}) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, codex.Adapter{}.Decode, b) })
}
