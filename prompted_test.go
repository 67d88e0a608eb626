package veto_test

import (
	"context"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// TestAnswerAtAClientsPromptLetsNothingThrough pins E39: a client's report
// that it ran a call veto put to its own prompt (Gate.ObserveAnswered) is
// recorded as the person's answer only when the call's one decision is an
// unanswered question about those very arguments and that actor: an
// approval_granted by the prompt's actor, for the asked actor, expired at
// once, before the observation; it lets no other call through. Anything
// else records the observation alone. On the memory and SQLite stores.
//
// E41
func TestAnswerAtAClientsPromptLetsNothingThrough(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			st := approvalStore(t, store)
			now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			clock := func() time.Time { now = now.Add(time.Millisecond); return now }
			g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			run := veto.Run{Ref: "r1", Fresh: true}
			agentActor := veto.Actor{Kind: "agent", ID: "claude-code"}
			call := func(id, cmd string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: run, Actor: agentActor}
			}
			person := veto.PromptActor("ann", "claude-code")
			if person.Kind != "user" || person.ID != "ann" || person.Agent != "prompt:claude-code" {
				t.Fatalf("PromptActor = %+v", person)
			}
			if _, err := g.ObserveAnswered(ctx, call("c0", "ls"), veto.Succeeded, veto.Actor{}); err == nil {
				t.Fatal("an answer without the person who gave it was taken")
			}
			answered := func(c *veto.Call, outcome veto.Outcome) bool {
				t.Helper()
				ok, err := g.ObserveAnswered(ctx, c, outcome, person)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			last := func(n int) []veto.Event {
				evs, _ := st.Events(ctx, "r1", 0)
				return evs[len(evs)-n:]
			}

			// Asked, then reported run: the person's yes, then the observation.
			if v := g.Decide(ctx, call("c1", "make deploy")); !v.Ask {
				t.Fatalf("not a question: %+v", v)
			}
			if !answered(call("c1", "make deploy"), veto.Succeeded) {
				t.Fatal("the report of the asked call was not taken as the answer")
			}
			evs := last(2)
			a, o := evs[0], evs[1]
			if a.Kind != veto.EventApproved || a.CallID != "c1" || a.Actor != person || a.For != (veto.Actor{Kind: "agent", ID: "claude-code"}) ||
				a.Rule != "ask.deploy" || len(a.ArgsHash) != 64 || a.Expires.After(a.Time) {
				t.Fatalf("the answer's event: %+v", a)
			}
			if o.Kind != veto.EventObserved || o.CallID != "c1" || o.Outcome != veto.Succeeded {
				t.Fatalf("the observation: %+v", o)
			}
			// Reported again: answered already, the observation alone.
			if answered(call("c1", "make deploy"), veto.Succeeded) {
				t.Fatal("one question answered twice")
			}
			// The same arguments again: a question, the answer let nothing through.
			if v := g.Decide(ctx, call("c2", "make deploy")); !v.Ask {
				t.Fatalf("an answer at the prompt let another call through: %+v", v)
			}
			// A wait at the client's prompt ends: the answer no decision can use.
			if _, _, found, err := g.Question(ctx, call("", "make deploy")); err != nil || !found {
				t.Fatalf("c2's question not found: %v %v", found, err)
			}
			if !answered(call("c2", "make deploy"), veto.Failed) {
				t.Fatal("a call that ran and failed was not an answer")
			}
			if _, _, found, err := g.Question(ctx, call("", "make deploy")); err != nil || found {
				t.Fatalf("a question answered at the prompt is still waited on: %v %v", found, err)
			}
			// Other arguments than the question's: the observation alone.
			g.Decide(ctx, call("c3", "make deploy-staging"))
			if answered(call("c3", "make deploy-staging --dry-run"), veto.Succeeded) {
				t.Fatal("a call run with other arguments was taken as the answer")
			}
			if k := last(1)[0].Kind; k != veto.EventObserved {
				t.Fatalf("recorded %s", k)
			}
			// Another actor's report of the asked call: not the answer.
			g.Decide(ctx, call("c4", "make deploy prod"))
			other := call("c4", "make deploy prod")
			other.Actor = veto.Actor{Kind: "agent", ID: "copilot-cli"}
			if answered(other, veto.Succeeded) {
				t.Fatal("another actor's report was taken as the answer")
			}
			// An allowed call: nothing to answer.
			if v := g.Decide(ctx, call("c5", "ls")); !v.Allowed {
				t.Fatalf("ls: %+v", v)
			}
			if answered(call("c5", "ls"), veto.Succeeded) {
				t.Fatal("an allowed call's report was taken as an answer")
			}
			// A call never decided: nothing to answer.
			if answered(call("c6", "make deploy"), veto.Succeeded) {
				t.Fatal("an undecided call's report was taken as an answer")
			}
			// A call allowed first and asked about after (the same id
			// decided twice): its first decision is not the question.
			g.Decide(ctx, call("c7", "ls"))
			g.Decide(ctx, call("c7", "make deploy again"))
			if answered(call("c7", "make deploy again"), veto.Succeeded) {
				t.Fatal("a call first allowed was taken as answered at the prompt")
			}
			// A page's answer is the answer: the report is the observation alone.
			g.Decide(ctx, call("c8", "make deploy 8"))
			if err := g.Answer(ctx, "r1", "c8", veto.Actor{Kind: "user", ID: "ann"}, false, time.Minute); err != nil {
				t.Fatal(err)
			}
			if answered(call("c8", "make deploy 8"), veto.Succeeded) {
				t.Fatal("a question answered on the page was answered again at the prompt")
			}
		})
	}
}
