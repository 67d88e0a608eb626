package agent

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/clients"
)

type nopAdapter struct{ Adapter }

// Registration refuses mistakes, as the rule registry does: no client, a
// client outside the table (a copy of an entry is not the entry), no
// constructor, a client registered twice. (The package's external tests
// link every adapter, so Claude Code's is registered already.)
func TestRegisterRefusesMistakes(t *testing.T) {
	mk := func(Env) Adapter { return nopAdapter{} }
	other := clients.ClaudeCode
	for _, tc := range []struct {
		name string
		c    *clients.Client
		mk   New
		want string
	}{
		{"no client", nil, mk, "needs a client"},
		{"no name", &clients.Client{}, mk, "needs a client"},
		{"not in the table", &clients.Client{Name: "notepad"}, mk, "not a client of the table"},
		{"a copy of an entry", &other, mk, "not a client of the table"},
		{"no constructor", &clients.Codex, nil, "no constructor"},
		{"twice", &clients.ClaudeCode, mk, "registered twice"},
	} {
		err := register(tc.c, tc.mk)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if _, ok := For("claude-code", Env{}).(nopAdapter); ok {
		t.Fatal("a refused registration replaced the adapter")
	}
	if For("notepad", Env{}) != nil {
		t.Fatal("an unknown name has an adapter")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Register did not panic on a duplicate")
		}
	}()
	Register(&clients.ClaudeCode, mk)
}
