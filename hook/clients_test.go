package hook_test

import (
	"slices"
	"testing"

	_ "github.com/vetohq/veto/adapters" // every client's adapter, registered
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/hook"
)

// Every client of the table has an adapter in agent's registry (linked by
// package adapters, which these tests import and package hook does not),
// and nothing else does; the commands take the table's names.
func TestEveryClientHasAnAdapter(t *testing.T) {
	for _, c := range clients.All {
		if hook.AdapterFor(c.Name) == nil {
			t.Errorf("%s: no adapter", c.Name)
		}
	}
	if got := agent.Registered(); !slices.Equal(got, clients.Names()) {
		t.Errorf("adapters registered for %v, the table's clients %v", got, clients.Names())
	}
	if !slices.Equal(hook.Clients, clients.Names()) {
		t.Errorf("hook.Clients %v, the table %v", hook.Clients, clients.Names())
	}
	if hook.AdapterFor("no-such-client") != nil {
		t.Error("an unknown client has an adapter")
	}
}
