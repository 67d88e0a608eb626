package egress

import (
	"context"
	"testing"

	"github.com/vetohq/veto"
)

// TestLists: the allow-list holds in every mode, this machine is always
// listed, the registries only when asked for, and a host veto could not
// determine never.
func TestLists(t *testing.T) {
	l, err := ParseList([]string{"up.example", "*.corp.example"})
	if err != nil {
		t.Fatal(err)
	}
	in := &veto.Input{Call: &veto.Call{}}
	for _, mode := range []Mode{Open, Allowlist} {
		p := Policy{Mode: mode, Allow: l, Sends: l}
		cases := []struct {
			host       string
			registries bool
			want       bool
		}{
			{"up.example", false, true},
			{"UP.Example.", false, true},
			{"x.corp.example", false, true},
			{"evil.example", false, false},
			{"localhost", false, true},
			{"127.0.0.1", false, true},
			{"0x7f000001", false, true},
			{"[::1]", false, true},
			{"pypi.org", false, false},
			{"pypi.org", true, true},
			{"registry.npmjs.org", true, true},
			{"evil.example", true, false},
			{"", true, false},
			{"169.254.169.254", false, false},
		}
		// The allow-list alone, without the user's file giving it, lets
		// nothing be sent.
		if ok, _ := (Policy{Mode: mode, Allow: l}).Lists(context.Background(), in, "up.example", false); ok {
			t.Errorf("mode %s: an entry not in Sends is listed for sending", mode)
		}
		for _, c := range cases {
			got, err := p.Lists(context.Background(), in, c.host, c.registries)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("mode %s: Lists(%q, registries %v) = %v, want %v", mode, c.host, c.registries, got, c.want)
			}
		}
	}
}
