package veto

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
// a decision yet: a grant in its run for the same tool, arguments and
// actor, not expired (granted); or else a refusal of this very call (the same id,
// tool and arguments: the client asks about it again on resume), which
// refuses it once. It returns the answer's sequence number, 0 for none.
// It looks both up in the run's projection.
func (g *Gate) answerFor(ctx context.Context, a Approvals, c *Call) (seq uint64, granted bool, err error) {
	h := ArgsHash(c)
	if seq, err = a.Grant(ctx, c.Tool, h, c.Actor, g.now()); err != nil || seq != 0 {
		return seq, seq != 0, err
	}
	if c.ID == "" {
		return 0, false, nil
	}
	seq, err = a.Refusal(ctx, c.ID, c.Tool, h)
	return seq, false, err
}

// maxApproval is the longest an approval lasts (Answer refuses longer).
const maxApproval = 24 * time.Hour

// approvalRefused finds the grant of a call the live policy denies, as
// answerFor does: the denial uses it up. Any failure finds none: the call
// is denied either way.
func (g *Gate) approvalRefused(ctx context.Context, a Approvals, c *Call) uint64 {
	seq, err := a.Grant(ctx, c.Tool, ArgsHash(c), c.Actor, g.now())
	if err != nil {
		return 0
	}
	return seq
}

// Approval errors.
var (
	ErrNoQuestion = errors.New("veto: no call of this id in this run waits for approval")
	ErrAnswered   = errors.New("veto: this call's question was answered already")
	// ErrNotShown refuses an answer to arguments other than the ones the
	// question is about: the person saw another call.
	ErrNotShown = errors.New("veto: the question is about other arguments than the ones shown")
)

// Answer records a person's answer to the question a rule asked about
// call callID of run: with grant, one call of that run with the same tool
// and arguments may pass the question until ttl has passed (it is decided
// again, with the live policy, when it is made); without, the question
// stays, and the answer is on record. by is the person. It binds to the
// question's arguments whatever they are: an answer from a page or a
// command that showed the call uses AnswerShown.
func (g *Gate) Answer(ctx context.Context, run, callID string, by Actor, grant bool, ttl time.Duration) error {
	return g.AnswerShown(ctx, run, callID, "", by, grant, ttl)
}

// AnswerShown is Answer bound to what the person was shown: shown is the
// argument hash (ArgsHash) of the call on their screen, and a question
// about other arguments (a later question of the same call id) is refused
// with ErrNotShown. "" binds to whatever the question is about. What the
// store held to show the person is deleted once the answer is recorded.
func (g *Gate) AnswerShown(ctx context.Context, run, callID, shown string, by Actor, grant bool, ttl time.Duration) error {
	if ttl <= 0 || ttl > maxApproval {
		return errors.New("veto: an approval lasts more than nothing and at most 24 hours")
	}
	var missing error
	var a Approvals
	err := g.appendRetrying(ctx, run, func(ctx context.Context, p *RunState) []Event {
		a = approvalsOf(p)
		q, ok, err := a.Asked(ctx, callID)
		switch {
		case err != nil:
			missing = err
		case !ok:
			missing = ErrNoQuestion
		case q.Answered:
			missing = ErrAnswered
		case shown != "" && shown != q.ArgsHash:
			missing = ErrNotShown
		default:
			missing = nil
		}
		if missing != nil {
			return nil
		}
		e := Event{Kind: EventApprovalRefused, CallID: callID, Tool: q.Tool, Actor: by, Rule: q.Rule, Reason: q.Reason, ArgsHash: q.ArgsHash,
			For: Actor{Kind: q.Actor.Kind, ID: q.Actor.ID}}
		if grant {
			e.Kind, e.Expires = EventApproved, g.now().Add(ttl)
		}
		return []Event{e}
	})
	if missing != nil {
		return missing
	}
	if err != nil {
		return err
	}
	// The arguments were held for the person to answer; answered, they
	// go. The answer is recorded either way; a failure is logged, and the
	// arguments expire (ShownFor).
	if err := a.Forget(ctx, callID); err != nil {
		g.log.LogAttrs(ctx, slog.LevelWarn, "question's arguments not deleted", slog.String("call_id", callID), slog.String("run", run))
	}
	return nil
}

// Question finds the call of c's run that a rule last asked a person
// about with c's tool and arguments, and whether a person has answered
// that question since (the answer itself is found by the call's next
// decision). A client that asks a person at its own prompt names the call
// by these alone (Claude Code's PermissionRequest carries no call id),
// right after veto asked.
func (g *Gate) Question(ctx context.Context, c *Call) (callID string, answered, ok bool, err error) {
	st, err := g.store.Load(ctx, c.Run.Ref)
	if err != nil {
		return "", false, false, err
	}
	a := approvalsOf(&st)
	h := ArgsHash(c)
	q, ok, err := a.AskedAbout(ctx, c.Tool, h)
	if err != nil || !ok {
		return "", false, false, err
	}
	if q.Answered {
		// An answer no decision can use (used already, expired, or given
		// at the client's own prompt: the call ran) is no question to
		// wait on: deciding again would only ask again.
		grant, err := a.Grant(ctx, c.Tool, h, c.Actor, g.now())
		if err != nil {
			return "", false, false, err
		}
		refusal, err := a.Refusal(ctx, q.CallID, c.Tool, h)
		if err != nil {
			return "", false, false, err
		}
		if grant == 0 && refusal == 0 {
			return "", false, false, nil
		}
	}
	return q.CallID, q.Answered, true, nil
}
