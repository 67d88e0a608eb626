package veto

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// AskAdvice is what a question tells the agent when its rule declares
// nothing else.
const AskAdvice = "Ask the user to approve this call on veto's page (veto ui), then make the same call again."

// ArgsHash is the SHA-256 of a call's arguments in canonical JSON (keys
// sorted, numbers as written): what an approval is bound to, with the run
// and the tool. It names the arguments without holding them.
func ArgsHash(c *Call) string {
	b, err := json.Marshal(c.Args)
	if err != nil {
		b = []byte(fmt.Sprintf("unencodable:%p", c))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// answerFor finds a person's answer to this call's question, not used by
// a decision yet: a grant in its run for the same tool and arguments, not
// expired (granted); or else a refusal of this very call (the same id,
// tool and arguments: the client asks about it again on resume), which
// refuses it once. It returns the answer's sequence number, 0 for none.
func (g *Gate) answerFor(ctx context.Context, c *Call) (seq uint64, granted bool, err error) {
	evs, err := g.store.Events(ctx, c.Run.Ref, 0)
	if err != nil {
		return 0, false, err
	}
	h, now := ArgsHash(c), g.now()
	used := map[uint64]bool{}
	for _, e := range evs {
		if e.Approval != 0 {
			used[e.Approval] = true
		}
	}
	var refused uint64
	for _, e := range evs {
		if e.Tool != c.Tool || e.ArgsHash != h || used[e.Seq] {
			continue
		}
		switch {
		case e.Kind == EventApproved && now.Before(e.Expires):
			return e.Seq, true, nil
		case e.Kind == EventApprovalRefused && e.CallID == c.ID && c.ID != "" && refused == 0:
			refused = e.Seq
		}
	}
	return refused, false, nil
}

// Approval errors.
var (
	ErrNoQuestion = errors.New("veto: no call of this id in this run waits for approval")
	ErrAnswered   = errors.New("veto: this call's question was answered already")
)

// Answer records a person's answer to the question a rule asked about
// call callID of run: with grant, one call of that run with the same tool
// and arguments may pass the question until ttl has passed (it is decided
// again, with the live policy, when it is made); without, the question
// stays, and the answer is on record. by is the person.
func (g *Gate) Answer(ctx context.Context, run, callID string, by Actor, grant bool, ttl time.Duration) error {
	if ttl <= 0 || ttl > 24*time.Hour {
		return errors.New("veto: an approval lasts more than nothing and at most 24 hours")
	}
	var missing error
	err := g.appendRetrying(ctx, run, func(p *RunState) []Event {
		missing = nil
		evs, err := g.store.Events(ctx, run, 0)
		if err != nil {
			missing = err
			return nil
		}
		var q *Event
		for i := range evs {
			e := &evs[i]
			switch {
			case e.CallID != callID:
			case e.Kind == EventDenied && e.Awaiting == AwaitApproval:
				q = e
			case (e.Kind == EventApproved || e.Kind == EventApprovalRefused) && q != nil:
				q = nil // answered: a later question of the same id may come
				missing = ErrAnswered
			}
		}
		if q == nil {
			if missing == nil {
				missing = ErrNoQuestion
			}
			return nil
		}
		missing = nil
		e := Event{Kind: EventApprovalRefused, CallID: callID, Tool: q.Tool, Actor: by, Rule: q.Rule, Reason: q.Reason, ArgsHash: q.ArgsHash}
		if grant {
			e.Kind, e.Expires = EventApproved, g.now().Add(ttl)
		}
		return []Event{e}
	})
	if missing != nil {
		return missing
	}
	return err
}

// Question finds the call of c's run that a rule last asked a person
// about with c's tool and arguments (answered or not). A client that asks
// a person at its own prompt names the call by these alone (Claude Code's
// PermissionRequest carries no call id), right after veto asked.
func (g *Gate) Question(ctx context.Context, c *Call) (callID string, ok bool, err error) {
	evs, err := g.store.Events(ctx, c.Run.Ref, 0)
	if err != nil {
		return "", false, err
	}
	h := ArgsHash(c)
	for i := len(evs) - 1; i >= 0; i-- {
		if e := &evs[i]; e.Kind == EventDenied && e.Awaiting == AwaitApproval && e.Tool == c.Tool && e.ArgsHash == h {
			return e.CallID, true, nil
		}
	}
	return "", false, nil
}

// Answered reports whether a person has answered the latest question of
// call callID of run. The answer itself is found by the call's next
// decision.
func (g *Gate) Answered(ctx context.Context, run, callID string) (bool, error) {
	evs, err := g.store.Events(ctx, run, 0)
	if err != nil {
		return false, err
	}
	asked, answered := false, false
	for _, e := range evs {
		switch {
		case e.CallID != callID:
		case e.Kind == EventDenied && e.Awaiting == AwaitApproval:
			asked, answered = true, false
		case (e.Kind == EventApproved || e.Kind == EventApprovalRefused) && asked:
			answered = true
		}
	}
	return answered, nil
}
