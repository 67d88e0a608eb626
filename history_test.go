package veto_test

import (
	"errors"
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

// A lazy history knows its length and completeness without loading; it
// loads once, on the first read, keeps only its first n observations, and
// a load that fails or falls short panics with ErrHistoryUnavailable
// (which the gate turns into a denial). Appending, replacing or marking it
// incomplete loads it and keeps its completeness as it was.
func TestLazyHistoryLoadsOnceOnFirstRead(t *testing.T) {
	obs := func(id string) veto.Observation {
		return veto.Observation{CallID: id, Tool: "Read", Outcome: veto.Failed}
	}
	loads := 0
	three := func() ([]veto.Observation, error) {
		loads++
		return []veto.Observation{obs("a"), obs("b"), obs("c")}, nil
	}
	h := veto.LazyHistory(2, true, three)
	if h.Len() != 2 || !h.Complete() || loads != 0 {
		t.Fatalf("len %d complete %v loads %d before any read", h.Len(), h.Complete(), loads)
	}
	if h.At(1).CallID != "b" || len(h.Observations()) != 2 || loads != 1 {
		t.Fatalf("after reads: %v, %d loads", h.Observations(), loads)
	}
	for _, o := range h.All() {
		_ = o
	}
	if loads != 1 {
		t.Fatalf("%d loads, want 1", loads)
	}
	for name, f := range map[string]func(veto.History) veto.History{
		"appended":   func(h veto.History) veto.History { return h.Appended(obs("d")) },
		"replaced":   func(h veto.History) veto.History { return h.Replaced(0, obs("z")) },
		"incomplete": func(h veto.History) veto.History { return h.AsIncomplete() },
	} {
		for _, complete := range []bool{true, false} {
			got := f(veto.LazyHistory(3, complete, three))
			want := complete && name != "incomplete"
			if got.Complete() != want || got.At(0).CallID == "" {
				t.Errorf("%s of a lazy history (complete %v): complete %v", name, complete, got.Complete())
			}
		}
	}
	if got := veto.LazyHistory(3, true, three).Replaced(2, obs("z")); got.At(2).CallID != "z" || got.At(0).CallID != "a" || got.Len() != 3 {
		t.Errorf("replaced: %v", got.Observations())
	}
	for name, load := range map[string]func() ([]veto.Observation, error){
		"error": func() ([]veto.Observation, error) { return nil, errors.New("disk") },
		"short": func() ([]veto.Observation, error) { return []veto.Observation{obs("a")}, nil },
	} {
		func() {
			defer func() {
				if r := recover(); r != veto.ErrHistoryUnavailable {
					t.Errorf("%s: recovered %v, want ErrHistoryUnavailable", name, r)
				}
			}()
			veto.LazyHistory(2, true, load).At(0)
		}()
	}
	for name, f := range map[string]func(){
		"at-negative":       func() { veto.NewHistory([]veto.Observation{obs("a")}, true).At(-1) },
		"at-past-end":       func() { veto.NewHistory([]veto.Observation{obs("a")}, true).At(1) },
		"replaced-past-end": func() { veto.NewHistory([]veto.Observation{obs("a")}, true).Replaced(1, obs("b")) },
		"replaced-negative": func() { veto.NewHistory(nil, true).Replaced(-1, obs("b")) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
	if empty := veto.LazyHistory(0, true, func() ([]veto.Observation, error) { t.Error("an empty history loaded"); return nil, nil }); len(empty.Observations()) != 0 {
		t.Error("an empty lazy history has observations")
	}
}
