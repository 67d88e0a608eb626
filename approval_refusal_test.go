package veto_test

import (
	"context"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
)

// TestRefusalAnswersThatCall: a person's refusal answers the question of
// that very call. Asked about again (a client resuming it), the call is
// refused with approval_refused, once, naming the refusal; it is not a new
// question. Another call with the same arguments is asked about afresh,
// and so is the same call after its refusal was used.
func TestRefusalAnswersThatCall(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			st := approvalStore(t, store)
			g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}})
			if err != nil {
				t.Fatal(err)
			}
			call := func(id, cmd string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: veto.Run{Ref: "r1", Fresh: id == "c1"}}
			}
			if v := g.Decide(ctx, call("c1", "make deploy")); !v.Ask {
				t.Fatalf("no question: %+v", v)
			}
			ann := veto.Actor{Kind: "user", ID: "ann"}
			if err := g.Answer(ctx, "r1", "c1", ann, false, time.Minute); err != nil {
				t.Fatal(err)
			}
			// Another call with the same arguments: a question of its own.
			if v := g.Decide(ctx, call("c2", "make deploy")); !v.Ask {
				t.Fatalf("another call took c1's refusal: %+v", v)
			}
			// The refused call, asked about again: refused, not asked.
			v := g.Decide(ctx, call("c1", "make deploy"))
			if v.Allowed || v.Ask || v.Rule != "ask.deploy" || v.Reason != veto.ReasonApprovalRefused {
				t.Fatalf("the refused call: %+v", v)
			}
			evs, _ := st.Events(ctx, "r1", 0)
			var refusal uint64
			for _, e := range evs {
				if e.Kind == veto.EventApprovalRefused && e.CallID == "c1" {
					refusal = e.Seq
				}
			}
			last := evs[len(evs)-1]
			if refusal == 0 || last.Kind != veto.EventDenied || last.Reason != veto.ReasonApprovalRefused || last.Approval != refusal || last.Awaiting != "" {
				t.Fatalf("the refusal #%d, its use: %+v", refusal, last)
			}
			// Used: the same call once more is a question again.
			if v := g.Decide(ctx, call("c1", "make deploy")); !v.Ask {
				t.Fatalf("a refusal used twice: %+v", v)
			}
			// Other arguments under the same id are not refused by it.
			g2, _ := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}})
			g2.Decide(ctx, call("c3", "make deploy a"))
			if err := g2.Answer(ctx, "r1", "c3", ann, false, time.Minute); err != nil {
				t.Fatal(err)
			}
			if v := g2.Decide(ctx, call("c3", "make deploy b")); !v.Ask {
				t.Fatalf("a refusal applied to other arguments: %+v", v)
			}
		})
	}
}

// TestQuestionAndAnswered: a client's prompt names a call by its tool and
// arguments alone; Question finds the latest call a rule asked about with
// them, and whether that question has an answer.
func TestQuestionAndAnswered(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, cmd string) *veto.Call {
		return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: veto.Run{Ref: "r1", Fresh: id == "c1"}}
	}
	question := func() (string, bool) {
		id, answered, ok, err := g.Question(ctx, call("", "make deploy"))
		if err != nil || !ok {
			t.Fatalf("Question = %q %v %v %v", id, answered, ok, err)
		}
		return id, answered
	}
	if _, _, ok, _ := g.Question(ctx, call("", "make deploy")); ok {
		t.Fatal("a question before any was asked")
	}
	g.Decide(ctx, call("c1", "make deploy"))
	g.Decide(ctx, call("c2", "make deploy staging"))
	if id, a := question(); id != "c1" || a {
		t.Fatalf("Question = %q answered %v, want c1 unanswered", id, a)
	}
	g.Answer(ctx, "r1", "c1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute)
	if id, a := question(); id != "c1" || !a {
		t.Fatal("not answered after the approval")
	}
	if _, a, _, _ := g.Question(ctx, call("", "make deploy staging")); a {
		t.Fatal("c2 answered by c1's approval")
	}
	// c1 asked about again: its latest question has no answer yet.
	g.Decide(ctx, call("c3", "make deploy")) // uses the approval
	g.Decide(ctx, call("c1", "make deploy"))
	if id, a := question(); id != "c1" || a {
		t.Fatalf("the latest question is %q (answered %v), want c1 unanswered: the old answer is the old question's", id, a)
	}
}
