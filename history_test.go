package veto_test

import (
	"fmt"
	"testing"

	"github.com/vetohq/veto"
)

// A History is a value: appending to or replacing in any version, the
// newest or an older one, leaves every other version as it was.
func TestHistoryVersionsStayApart(t *testing.T) {
	obs := func(id string) veto.Observation {
		return veto.Observation{CallID: id, Tool: "Read", Outcome: veto.Succeeded}
	}
	for _, n := range []int{0, 3, 64, 130} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var base veto.History = veto.NewHistory(nil, true)
			for i := range n {
				base = base.Appended(obs(fmt.Sprint(i)))
			}
			a := base.Appended(obs("a"))
			b := base.Appended(obs("b")) // an older version appends too
			a2 := a.Appended(obs("a2"))
			var r veto.History
			if n > 0 {
				r = base.Replaced(n-1, obs("r")).Appended(obs("rr"))
			}
			check := func(name string, h veto.History, want ...string) {
				t.Helper()
				if h.Len() != n+len(want) {
					t.Fatalf("%s: len %d, want %d", name, h.Len(), n+len(want))
				}
				for i, id := range want {
					if got := h.At(n + i).CallID; got != id {
						t.Fatalf("%s: observation %d is %q, want %q", name, n+i, got, id)
					}
				}
			}
			check("base", base)
			check("a", a, "a")
			check("b", b, "b")
			check("a2", a2, "a", "a2")
			if n > 0 {
				check("r", r, "rr")
				if base.At(n-1).CallID != fmt.Sprint(n-1) || r.At(n-1).CallID != "r" {
					t.Fatalf("replacing changed another version: base %q, r %q", base.At(n-1).CallID, r.At(n-1).CallID)
				}
			}
			if inc := a.AsIncomplete(); inc.Complete() || !a.Complete() || inc.Appended(obs("x")).Complete() {
				t.Fatal("AsIncomplete must mark only its own result incomplete, for good")
			}
		})
	}
}
