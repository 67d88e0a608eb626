package veto_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/sqlite"
)

// asker asks for a person before any deploy; denier refuses a command
// holding its word. Both are rules as a policy would write them.
func asker() veto.Rule {
	return &rule.Func{RuleInfo: veto.RuleInfo{ID: "ask.deploy", Risk: veto.RiskMapping{Default: veto.RiskHigh}, FixedMessages: true},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, "deploy") {
				return veto.Ask("deploy_needs_person", "A deploy needs a person's approval."), nil
			}
			return veto.Allow(), nil
		}}
}

func denier(word string) veto.Rule {
	return &rule.Func{RuleInfo: veto.RuleInfo{ID: "deny." + word, FixedMessages: true},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, word) {
				return veto.Deny("forbidden_word", "The command holds a forbidden word."), nil
			}
			return veto.Allow(), nil
		}}
}

// TestApprovalAppliesToOneCallOnce pins E30: a rule's question refuses the
// call (verdict ask, recorded as a denial awaiting approval with the
// arguments' hash) until a person approves it; an approval lets exactly
// one call of that run, tool and argument hash pass that question, once,
// before it expires; every other rule still decides, with the live
// policy; a denial by another rule wins over a question, and a denial of
// an approved call uses its approval up (refused at resume). On the SQLite
// store as on the memory store: the answer is an event in the chain.
//
// E30
func TestApprovalAppliesToOneCallOnce(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			st := approvalStore(t, store)
			now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker(), denier("rm")}, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			run := veto.Run{Ref: "r1", Fresh: true}
			call := func(id, cmd string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: run}
			}
			// A question: ask, not allow, recorded as a denial awaiting approval.
			v := g.Decide(ctx, call("c1", "make deploy"))
			if v.Allowed || !v.Ask || v.Rule != "ask.deploy" || v.Reason != "deploy_needs_person" {
				t.Fatalf("question: %+v", v)
			}
			if b, _ := json.Marshal(v); !strings.Contains(string(b), `"verdict":"ask"`) {
				t.Fatalf("an ask's JSON: %s", b)
			}
			evs, _ := st.Events(ctx, "r1", 0)
			q := evs[len(evs)-1]
			if q.Kind != veto.EventDenied || q.Awaiting != veto.AwaitApproval || len(q.ArgsHash) != 64 || strings.Contains(q.ArgsHash, "deploy") {
				t.Fatalf("the question's event: %+v", q)
			}
			// A denial wins over a question.
			if v := g.Decide(ctx, call("c2", "make deploy && rm -r build")); v.Ask || v.Rule != "deny.rm" {
				t.Fatalf("deny and ask: %+v", v)
			}
			// Answers: unknown calls, a refusal, then an approval of c1.
			if err := g.Answer(ctx, "r1", "nope", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); !errors.Is(err, veto.ErrNoQuestion) {
				t.Fatalf("answering no question: %v", err)
			}
			if err := g.Answer(ctx, "r1", "c1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := g.Answer(ctx, "r1", "c1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); !errors.Is(err, veto.ErrAnswered) {
				t.Fatalf("answering twice: %v", err)
			}
			// Other arguments: still a question.
			if v := g.Decide(ctx, call("c3", "make deploy-staging")); !v.Ask {
				t.Fatalf("other arguments passed on c1's approval: %+v", v)
			}
			// The same call: allowed, once, naming the approval it used.
			if v := g.Decide(ctx, call("c4", "make deploy")); !v.Allowed {
				t.Fatalf("the approved call: %+v", v)
			}
			evs, _ = st.Events(ctx, "r1", 0)
			var grant, used uint64
			for _, e := range evs {
				if e.Kind == veto.EventApproved && e.CallID == "c1" {
					grant = e.Seq
					if e.Actor.ID != "ann" || !e.Expires.Equal(now.Add(time.Minute)) {
						t.Fatalf("the approval's event: %+v", e)
					}
				}
				if e.Kind == veto.EventAllowed && e.CallID == "c4" {
					used = e.Approval
				}
			}
			if grant == 0 || used != grant {
				t.Fatalf("approval #%d, used #%d", grant, used)
			}
			if v := g.Decide(ctx, call("c5", "make deploy")); !v.Ask {
				t.Fatalf("an approval used twice: %+v", v)
			}
			// Expiry: an approval past its time lets nothing through.
			g.Decide(ctx, call("c6", "make deploy now"))
			if err := g.Answer(ctx, "r1", "c6", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); err != nil {
				t.Fatal(err)
			}
			now = now.Add(2 * time.Minute)
			if v := g.Decide(ctx, call("c7", "make deploy now")); !v.Ask {
				t.Fatalf("an expired approval: %+v", v)
			}
			// Approval is not permission: under a live policy that now
			// refuses, the approved call is refused.
			g.Decide(ctx, call("c8", "deploy prod"))
			if err := g.Answer(ctx, "r1", "c8", veto.Actor{Kind: "user", ID: "ann"}, true, time.Hour); err != nil {
				t.Fatal(err)
			}
			g2, _ := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker(), denier("prod")}, Now: clock})
			if v := g2.Decide(ctx, call("c9", "deploy prod")); v.Allowed || v.Ask || v.Rule != "deny.prod" {
				t.Fatalf("an approved call under a policy that refuses it: %+v", v)
			}
			// Refused at resume: the denial names the approval, used up.
			evs, _ = st.Events(ctx, "r1", 0)
			if e := evs[len(evs)-1]; e.CallID != "c9" || e.Approval != evs[len(evs)-2].Seq || evs[len(evs)-2].Kind != veto.EventApproved {
				t.Fatalf("the refusal at resume does not name c8's approval: %+v", e)
			}
			if v := g.Decide(ctx, call("c9b", "deploy prod")); !v.Ask {
				t.Fatalf("an approval refused at resume let a call through: %+v", v)
			}
			// A refusal is on record, and the call still asks.
			g.Decide(ctx, call("c10", "deploy canary"))
			if err := g.Answer(ctx, "r1", "c10", veto.Actor{Kind: "user", ID: "bo"}, false, time.Minute); err != nil {
				t.Fatal(err)
			}
			if v := g.Decide(ctx, call("c11", "deploy canary")); !v.Ask {
				t.Fatalf("after a refusal: %+v", v)
			}
			// The refused call itself, asked about again (a client
			// resuming it): refused once with approval_refused, naming the
			// person's answer; not a new question.
			if v := g.Decide(ctx, call("c10", "deploy canary")); v.Allowed || v.Ask || v.Reason != veto.ReasonApprovalRefused {
				t.Fatalf("the refused call asked about again: %+v", v)
			}
			evs, _ = st.Events(ctx, "r1", 0)
			if e := evs[len(evs)-1]; e.Approval == 0 || e.Awaiting != "" {
				t.Fatalf("the refusal's use: %+v", e)
			}
		})
	}
}

// approvalStore is the store an approval test runs on: the memory store,
// or a SQLite file of the test's own.
func approvalStore(t *testing.T, store string) veto.Store {
	t.Helper()
	if store != "sqlite" {
		return memstore.New()
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
