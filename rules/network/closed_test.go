package network_test

import (
	"path/filepath"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rules/network"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/tools"
)

// unreadableKnowledge is a run's knowledge from a real store closed since
// the run was loaded: reading the run's allow-list fails.
func unreadableKnowledge(t *testing.T) veto.Knowledge {
	t.Helper()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Tools: tools.Defaults(), Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Decide(ctx, &veto.Call{ID: "a", Tool: "Grep", Args: map[string]any{"pattern": "x"}, Cwd: "/w", Run: veto.Run{Ref: "r", Fresh: true}}); !v.Allowed {
		t.Fatal(v)
	}
	st, err := s.Load(ctx, "r")
	if err != nil || st.Knowledge == nil {
		t.Fatal(st, err)
	}
	s.Close()
	return st.Knowledge
}

// Under an allowlist, a call that names no host is allowed without
// reading the run's allow-list; one that names a host needs it, and fails
// when it cannot be read.
func TestNoHostNeedsNoAllowList(t *testing.T) {
	k := unreadableKnowledge(t)
	r := network.Rule(egress.Policy{Mode: egress.Allowlist})
	fetch := &veto.Descriptor{Name: "WebFetch", Caps: veto.CapNetwork, Params: map[string]veto.Role{"url": veto.RoleURL}}
	in := &veto.Input{Call: &veto.Call{Tool: "WebFetch", Args: map[string]any{"prompt": "nothing"}}, Descriptor: fetch, Knowledge: k}
	if d, err := r.Check(ctx, in); err != nil || d.Denied() {
		t.Fatalf("no host: %+v %v, want allowed without the allow-list", d, err)
	}
	in = &veto.Input{Call: &veto.Call{Tool: "WebFetch", Args: map[string]any{"url": "https://a.example/"}}, Descriptor: fetch, Knowledge: k}
	if d, err := r.Check(ctx, in); err == nil {
		t.Fatalf("a host with an unreadable allow-list: %+v, want an error", d)
	}
}
