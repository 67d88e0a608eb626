package tools

import (
	"maps"
	"slices"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
)

// Every client of the table has its tools here, and Defaults names each
// tool once.
func TestEveryClientHasTools(t *testing.T) {
	for _, c := range clients.All {
		if len(ForClient(c)) == 0 {
			t.Errorf("%s: no tool descriptors", c.Name)
		}
	}
	if len(ofClient) != len(clients.All) {
		t.Errorf("%d clients with tools, %d in the table", len(ofClient), len(clients.All))
	}
	seen := map[string]bool{}
	for _, d := range Defaults() {
		if seen[d.Name] {
			t.Errorf("%s: described twice", d.Name)
		}
		seen[d.Name] = true
	}
}

// A tool that two clients name alike is described once, by the first
// client: the other's description must say no more than that one (the
// same capabilities, its parameters among the first's, in the same roles).
func TestSharedToolNamesAgree(t *testing.T) {
	first := map[string]veto.Descriptor{}
	for _, c := range clients.All {
		for _, d := range ForClient(c) {
			kept, ok := first[d.Name]
			if !ok {
				first[d.Name] = d
				continue
			}
			if kept.Caps != d.Caps {
				t.Errorf("%s (%s): capabilities %v, the kept description %v", d.Name, c.Name, d.Caps, kept.Caps)
			}
			for _, p := range slices.Sorted(maps.Keys(d.Params)) {
				if kept.Params[p] != d.Params[p] {
					t.Errorf("%s (%s): parameter %s is %v, in the kept description %v", d.Name, c.Name, p, d.Params[p], kept.Params[p])
				}
			}
		}
	}
}
