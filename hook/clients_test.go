package hook_test

import (
	"slices"
	"testing"

	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/hook"
)

// Every client of the table has an adapter, and nothing else does; the
// commands take the table's names.
func TestEveryClientHasAnAdapter(t *testing.T) {
	for _, c := range clients.All {
		if hook.AdapterFor(c.Name) == nil {
			t.Errorf("%s: no adapter", c.Name)
		}
	}
	if n := hook.Adapters(); n != len(clients.All) {
		t.Errorf("%d adapters for %d clients", n, len(clients.All))
	}
	if !slices.Equal(hook.Clients, clients.Names()) {
		t.Errorf("hook.Clients %v, the table %v", hook.Clients, clients.Names())
	}
	if hook.AdapterFor("no-such-client") != nil {
		t.Error("an unknown client has an adapter")
	}
}
