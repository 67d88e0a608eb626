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
