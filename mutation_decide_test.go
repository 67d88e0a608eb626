package veto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/sqlite"
)

// A decision the store could not record is refused with no sequence
// number (nothing was recorded) and logged once as a verdict, after the
// line that says it was not recorded.
func TestUnrecordedVerdictHasNoSeqAndOneLine(t *testing.T) {
	for _, allowed := range []bool{true, false} {
		rules := []veto.Rule{allowRule("ok")}
		if !allowed {
			rules = []veto.Rule{denyRule("no", "nope")}
		}
		f := newFixture(t, veto.Config{Store: appendFails{memstore.New()}, Rules: rules})
		c := call("Read", nil)
		v := f.g.Decide(ctx, c)
		if v.Allowed || v.Seq != 0 {
			t.Fatalf("allowed=%v: verdict %+v, want refused with Seq 0", allowed, v)
		}
		var verdicts, notRecorded int
		for _, l := range strings.Split(strings.TrimSpace(f.log.String()), "\n") {
			var line struct {
				Msg    string `json:"msg"`
				CallID string `json:"call_id"`
			}
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			if line.CallID != c.ID {
				continue
			}
			switch line.Msg {
			case "denied", "allowed":
				verdicts++
			case "decision not recorded":
				notRecorded++
			}
		}
		if verdicts != 1 || notRecorded != 1 {
			t.Fatalf("allowed=%v: %d verdict lines and %d not-recorded lines, want 1 and 1:\n%s", allowed, verdicts, notRecorded, f.log)
		}
	}
}

// A question with no advice of its own tells the agent to have the call
// approved; a question with advice keeps it, and a plain denial with no
// advice says nothing instead (the agent asks the user how to proceed).
func TestAskAdviceOnlyForAQuestionWithoutAdvice(t *testing.T) {
	mk := func(id string, ask bool, advice veto.Advice) veto.Rule {
		return &rule.Func{RuleInfo: veto.RuleInfo{ID: id, Risk: veto.RiskMapping{Default: veto.RiskHigh}, FixedMessages: true,
			Advice: veto.AdviceMapping{Default: advice}},
			Fn: func(context.Context, *veto.Input) (veto.Decision, error) {
				if ask {
					return veto.Ask("needs_person", "A person must approve this."), nil
				}
				return veto.Deny("refused", "This is refused."), nil
			}}
	}
	own := veto.Advice{Instead: "Deploy from the release branch instead."}
	for _, tc := range []struct {
		name    string
		r       veto.Rule
		ask     bool
		instead string
	}{
		{"question without advice", mk("q.none", true, veto.Advice{}), true, veto.AskAdvice},
		{"question with advice", mk("q.own", true, own), true, own.Instead},
		{"denial without advice", mk("d.none", false, veto.Advice{}), false, ""},
		{"denial with advice", mk("d.own", false, own), false, own.Instead},
	} {
		f := newFixture(t, veto.Config{Rules: []veto.Rule{tc.r}})
		v := f.g.Decide(ctx, call("Bash", map[string]any{"command": "make deploy"}))
		if v.Allowed || v.Ask != tc.ask || v.Advice.Instead != tc.instead {
			t.Errorf("%s: ask %v, instead %q; want ask %v, instead %q", tc.name, v.Ask, v.Advice.Instead, tc.ask, tc.instead)
		}
	}
}

// A rule that declares its messages fixed has its message given whole,
// even where it holds words of the call's arguments; a rule that does not
// has such a message replaced by the generic one (the leak guard).
func TestFixedMessagesPassTheLeakGuard(t *testing.T) {
	const msg = "Refused: deploying production-cluster needs a ticket."
	mk := func(id string, fixed bool) veto.Rule {
		return &rule.Func{RuleInfo: veto.RuleInfo{ID: id, Risk: veto.RiskMapping{Default: veto.RiskHigh}, FixedMessages: fixed},
			Fn: func(context.Context, *veto.Input) (veto.Decision, error) { return veto.Deny("no_ticket", msg), nil }}
	}
	args := map[string]any{"command": "kubectl apply --context production-cluster"}
	f := newFixture(t, veto.Config{Rules: []veto.Rule{mk("fixed", true)}})
	if v := f.g.Decide(ctx, call("Bash", args)); v.Message != msg {
		t.Errorf("fixed messages: %q, want %q", v.Message, msg)
	}
	f = newFixture(t, veto.Config{Rules: []veto.Rule{mk("free", false)}})
	if v := f.g.Decide(ctx, call("Bash", args)); v.Message != "Rule free refused this call (no_ticket)." {
		t.Errorf("free messages quoting the arguments: %q, want the generic message", v.Message)
	}
}

// A stored suspension with a field of the wrong type is refused whole,
// never read in part (the fields that did decode, a history dropped as of
// another version).
func TestSuspensionOfTheWrongShapeIsRefused(t *testing.T) {
	c := call("Bash", map[string]any{"command": "make deploy"})
	b, err := veto.EncodeSuspension(&veto.Suspension{Kind: veto.AwaitApproval, Call: *c, History: veto.NewHistory(nil, true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := veto.DecodeSuspension(b, veto.DefaultLimits); err != nil {
		t.Fatalf("a sound suspension: %v", err)
	}
	for _, bad := range []string{`"v":"1"`, `"v":1.5`, `"v":[1]`} {
		damaged := strings.Replace(string(b), `"v":1`, bad, 1)
		if damaged == string(b) {
			t.Fatalf("no version field in %s", b)
		}
		if s, err := veto.DecodeSuspension([]byte(damaged), veto.DefaultLimits); err == nil || !strings.Contains(err.Error(), "decode suspension") {
			t.Errorf("a suspension with %s: %+v, %v; want it refused", bad, s, err)
		}
	}
}

// noTally is a store whose runs carry no running tally: the gate adds one
// up from the history.
type noTally struct{ *memstore.Store }

func (s noTally) Load(ctx context.Context, run string) (veto.RunState, error) {
	st, err := s.Store.Load(ctx, run)
	st.Tally = nil
	return st, err
}

// A store that keeps no tally still gives rules one: the history's.
func TestRulesGetATallyFromAStoreWithoutOne(t *testing.T) {
	var seen []int
	limit := ruleOf("reads.limit", veto.Needs{}, func(ctx context.Context, in *veto.Input) (veto.Decision, error) {
		calls, err := in.Tally.Calls(ctx)
		if err != nil {
			return veto.Decision{}, err
		}
		seen = append(seen, calls["Read"])
		if calls["Read"] >= 2 {
			return veto.Deny("too_many_reads", "Two reads are enough."), nil
		}
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Store: noTally{memstore.New()}, Rules: []veto.Rule{limit}})
	run := veto.Run{Ref: "tally", Fresh: true}
	var allowed []bool
	for _, id := range []string{"a", "b", "c"} {
		allowed = append(allowed, f.g.Decide(ctx, inRun(run, id, "Read", nil)).Allowed)
	}
	if fmt.Sprint(allowed) != "[true true false]" || fmt.Sprint(seen) != "[0 1 2]" {
		t.Fatalf("allowed %v, tallies seen %v; want [true true false] and [0 1 2]", allowed, seen)
	}
}

// An answer to a question no call asked stores nothing: not even the
// run, which no call of has been decided (SQLite would list a run whose
// row an empty append made).
func TestAnswerToNoQuestionStoresNothing(t *testing.T) {
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for name, s := range map[string]interface {
		veto.Store
		veto.Log
	}{"memstore": memstore.New(), "sqlite": lite} {
		g, err := veto.NewGate(veto.Config{Store: s})
		if err != nil {
			t.Fatal(err)
		}
		err = g.Answer(ctx, "never-seen", "c", veto.Actor{Kind: "user", ID: "ann"}, true, time.Hour)
		if !errors.Is(err, veto.ErrNoQuestion) {
			t.Fatalf("%s: Answer = %v, want veto.ErrNoQuestion", name, err)
		}
		if runs, err := s.Runs(ctx); err != nil || len(runs) != 0 {
			t.Fatalf("%s: runs after answering no question: %v %v", name, runs, err)
		}
		if st, err := s.Load(ctx, "never-seen"); err != nil || st.Exists() || st.Next != 1 {
			t.Fatalf("%s: the run after answering no question: %+v %v", name, st, err)
		}
	}
}

// A risk past the known ones spells its number; each known one its name.
func TestRiskSpelling(t *testing.T) {
	for r, want := range map[veto.Risk]string{veto.RiskNone: "none", veto.RiskCritical: "critical", veto.RiskCritical + 1: "risk(5)", 200: "risk(200)"} {
		if got := r.String(); got != want {
			t.Errorf("Risk(%d) = %q, want %q", uint8(r), got, want)
		}
	}
}

// Memo keeps one value per key for a decision, each computed once, past
// the two its inline room holds.
func TestMemoKeepsEachKeysValue(t *testing.T) {
	type key string
	var in veto.Input
	calls := map[key]int{}
	get := func(k key) any {
		return in.Memo(k, func() any { calls[k]++; return "value of " + string(k) })
	}
	for range 2 {
		for _, k := range []key{"a", "b", "c"} {
			if got := get(k); got != "value of "+string(k) {
				t.Fatalf("Memo(%s) = %v", k, got)
			}
		}
	}
	if calls["a"] != 1 || calls["b"] != 1 || calls["c"] != 1 {
		t.Fatalf("computed %v, want each once", calls)
	}
}
