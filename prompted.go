package veto

import (
	"context"
	"fmt"
)

// PromptActor is the actor of an answer a person gave at a client's own
// prompt (Claude Code's permission dialog) rather than on veto's page: the
// OS user the client runs as (user), with Agent naming the place,
// "prompt:" and the client. It is only ever recorded from the client's
// own report that it ran the call (ObserveAnswered), never from a request
// anyone can make.
func PromptActor(user, client string) Actor {
	return Actor{Kind: "user", ID: user, Agent: "prompt:" + client}
}

// ObserveAnswered is ObserveCall for a client that asks a person at its
// own prompt about veto's question and runs the call only when they say
// yes (Claude Code, interactive, given permissionDecision "ask"): the
// client reporting that it ran the call is the person's answer. When the
// call's one decision is a question no one has answered, about these very
// arguments (tool and argument hash) and this actor, the answer is
// recorded first: an approval_granted by by (PromptActor), for the asked
// actor, expired at once (it answers that call, which ran, and lets no
// other through). Anything else records the observation alone, as
// ObserveCall does. answered reports whether the answer was recorded.
func (g *Gate) ObserveAnswered(ctx context.Context, c *Call, outcome Outcome, by Actor) (answered bool, err error) {
	if err := g.checkObserved(c, outcome); err != nil {
		return false, err
	}
	if by.Kind == "" || by.ID == "" {
		return false, fmt.Errorf("veto: observe: an answer needs the person who gave it")
	}
	// The call's first decision must be the question: a call allowed
	// before it was asked about, or asked about by another decision, was
	// not answered at the prompt. It is looked up once, and only for a
	// call with a question (a call's first decision does not change).
	var first *Event
	firstDecision := func(ctx context.Context) Event {
		if first == nil {
			first = &Event{}
			if ds, ok := g.store.(Decisions); ok {
				if e, found, err := ds.Decided(ctx, c.Run.Ref, c.ID); err == nil && found {
					first = &e
				}
			}
		}
		return *first
	}
	files := g.learnt(ctx, c, outcome)
	hash := ArgsHash(c)
	err = g.appendRetrying(ctx, c.Run.Ref, func(ctx context.Context, p *RunState) []Event {
		answered = false
		obs := observed(p, Event{CallID: c.ID, Tool: c.Tool, Actor: c.Actor, Outcome: outcome, Files: files})
		q, ok, err := approvalsOf(p).Asked(ctx, c.ID)
		if err != nil || !ok || q.Answered || q.Tool != c.Tool || q.ArgsHash != hash ||
			q.Actor.Kind != c.Actor.Kind || q.Actor.ID != c.Actor.ID {
			return obs
		}
		if f := firstDecision(ctx); f.Kind != EventDenied || f.Awaiting != AwaitApproval || f.Seq != q.Seq {
			return obs
		}
		answered = true
		now := g.now()
		answer := Event{Kind: EventApproved, CallID: c.ID, Tool: q.Tool, Actor: by, Rule: q.Rule, Reason: q.Reason,
			ArgsHash: q.ArgsHash, For: Actor{Kind: q.Actor.Kind, ID: q.Actor.ID}, Expires: now}
		return append([]Event{answer}, obs...)
	})
	if err != nil {
		return false, err
	}
	if answered {
		// What was held to show the person on the page goes, as with an
		// answer there.
		if st, err := g.store.Load(ctx, c.Run.Ref); err == nil {
			approvalsOf(&st).Forget(ctx, c.ID)
		}
	}
	return answered, nil
}
