package agent_test

import (
	"testing"

	"github.com/vetohq/veto/agent"
)

func TestVersionAtLeast(t *testing.T) {
	min := [3]int{1, 0, 102}
	for _, c := range []struct {
		ver, sep string
		want     bool
	}{
		{"1.0.102", ".", true}, {"1.0.103", ".", true}, {"1.1.0", ".", true}, {"2.0.0", ".", true},
		{"1.0.101", ".", false}, {"0.9.999", ".", false}, {"1.0", ".", false}, {"1.0.102.1", ".", false},
		{"1.0.0102", ".", false}, {"1.0.+102", ".", false}, {"1.0.-1", ".", false}, {"", ".", false},
		{"1-0-102", "-", true}, {"1-0-102", ".", false},
	} {
		if got := agent.VersionAtLeast(c.ver, c.sep, min); got != c.want {
			t.Errorf("VersionAtLeast(%q, %q) = %v, want %v", c.ver, c.sep, got, c.want)
		}
	}
}
