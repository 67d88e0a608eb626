package claudecode_test

import (
	"testing"

	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/claudecode"
)

var adapter = claudecode.Adapter{ProjectDir: "/home/dev/app"}

// TestDecode decodes each payload of testdata/events.txtar, as Claude Code
// sends it or malformed, into what testdata says.
func TestDecode(t *testing.T) { agenttest.Events(t, adapter.Decode) }

// TestReplies: the denial is exit 2 with the reason on stderr and nothing
// on stdout; an allow prints nothing; approving is the hookSpecificOutput
// allow.
func TestReplies(t *testing.T) { agenttest.Replies(t, adapter) }

func FuzzDecode(f *testing.F) {
	agenttest.Seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) { agenttest.Fuzz(t, adapter.Decode, b) })
}
