package eventlog

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
)

// approvals is a Projection's questions, answers and open suspensions
// (see veto.Approvals), folded as events arrive.
type approvals struct {
	questions  []veto.Question       // every question, in order
	lastOfCall map[string]int        // call id → its last question
	lastAbout  map[aboutKey]int      // tool and argument hash → the last question about them
	answeredAt map[string]uint64     // call id → its last answer's sequence number
	answers    map[uint64]*answer    // sequence number → the answer
	grants     map[grantKey][]uint64 // tool, argument hash and actor → its grants, in order
	refusals   map[string][]uint64   // call id → its refusals, in order
	suspended  map[string]bool       // call ids suspended, no decision since
}

type aboutKey struct{ tool, hash string }

// grantKey is what a grant lets through: a call of the tool, with the
// arguments, of the actor (kind and id) the question was about.
type grantKey struct{ tool, hash, kind, id string }

// answer is a person's answer: what it answers, until when (a grant) and
// whether a decision used it.
type answer struct {
	grant   bool
	call    string
	tool    string
	hash    string
	forKind string
	forID   string
	expires time.Time
	used    bool
}

// apply folds one valid event in.
func (a *approvals) apply(e veto.Event) {
	if e.Approval != 0 {
		a.use(e.Approval)
	}
	switch e.Kind {
	case veto.EventDenied:
		if e.Awaiting == veto.AwaitApproval {
			a.ask(e)
		}
	case veto.EventApproved, veto.EventApprovalRefused:
		a.answer(e)
	case veto.EventSuspended:
		if a.suspended == nil {
			a.suspended = map[string]bool{}
		}
		a.suspended[e.CallID] = true
	}
	if isDecision(e.Kind) && a.suspended[e.CallID] {
		delete(a.suspended, e.CallID)
	}
}

// use marks answer seq used, and drops it from the lists a lookup walks.
func (a *approvals) use(seq uint64) {
	an := a.answers[seq]
	if an == nil || an.used {
		return
	}
	an.used = true
	drop := func(l []uint64) []uint64 {
		if i := slices.Index(l, seq); i >= 0 {
			return slices.Delete(l, i, i+1)
		}
		return l
	}
	if an.grant {
		k := grantKey{an.tool, an.hash, an.forKind, an.forID}
		if a.grants[k] = drop(a.grants[k]); len(a.grants[k]) == 0 {
			delete(a.grants, k)
		}
	} else {
		if a.refusals[an.call] = drop(a.refusals[an.call]); len(a.refusals[an.call]) == 0 {
			delete(a.refusals, an.call)
		}
	}
}

func isDecision(k veto.EventKind) bool {
	return k == veto.EventAllowed || k == veto.EventDenied || k == veto.EventToolDenied
}

func (a *approvals) ask(e veto.Event) {
	if a.lastOfCall == nil {
		a.lastOfCall, a.lastAbout = map[string]int{}, map[aboutKey]int{}
	}
	i := len(a.questions)
	a.questions = append(a.questions, veto.Question{Run: e.Run, CallID: e.CallID, Seq: e.Seq, Time: e.Time, Tool: e.Tool,
		Rule: e.Rule, Reason: e.Reason, Risk: e.Risk, ArgsHash: e.ArgsHash, Actor: veto.Actor{Kind: e.Actor.Kind, ID: e.Actor.ID}})
	a.lastOfCall[e.CallID] = i
	a.lastAbout[aboutKey{e.Tool, e.ArgsHash}] = i
}

func (a *approvals) answer(e veto.Event) {
	if a.answers == nil {
		a.answers, a.answeredAt = map[uint64]*answer{}, map[string]uint64{}
		a.grants, a.refusals = map[grantKey][]uint64{}, map[string][]uint64{}
	}
	an := &answer{grant: e.Kind == veto.EventApproved, call: e.CallID, tool: e.Tool, hash: e.ArgsHash,
		forKind: e.For.Kind, forID: e.For.ID, expires: e.Expires}
	a.answers[e.Seq] = an
	a.answeredAt[e.CallID] = e.Seq
	if an.grant {
		k := grantKey{e.Tool, e.ArgsHash, e.For.Kind, e.For.ID}
		a.grants[k] = append(a.grants[k], e.Seq)
	} else {
		a.refusals[e.CallID] = append(a.refusals[e.CallID], e.Seq)
	}
}

// question is question i with whether it was answered since.
func (a *approvals) question(i int) veto.Question {
	q := a.questions[i]
	q.Answered = a.answeredAt[q.CallID] > q.Seq
	return q
}

// Grant answers veto.Approvals.Grant from the projection (see KnownFile
// for the lock). A damaged run has no grant.
func (p *Projection) Grant(tool, hash string, actor veto.Actor, now time.Time) uint64 {
	if p.damaged {
		return 0
	}
	for _, seq := range p.approvals.grants[grantKey{tool, hash, actor.Kind, actor.ID}] {
		if an := p.approvals.answers[seq]; !an.used && now.Before(an.expires) {
			return seq
		}
	}
	return 0
}

// Refusal answers veto.Approvals.Refusal from the projection.
func (p *Projection) Refusal(callID, tool, hash string) uint64 {
	for _, seq := range p.approvals.refusals[callID] {
		if an := p.approvals.answers[seq]; !an.used && an.tool == tool && an.hash == hash {
			return seq
		}
	}
	return 0
}

// Asked answers veto.Approvals.Asked from the projection.
func (p *Projection) Asked(callID string) (veto.Question, bool) {
	i, ok := p.approvals.lastOfCall[callID]
	if !ok {
		return veto.Question{}, false
	}
	return p.approvals.question(i), true
}

// AskedAbout answers veto.Approvals.AskedAbout from the projection.
func (p *Projection) AskedAbout(tool, hash string) (veto.Question, bool) {
	i, ok := p.approvals.lastAbout[aboutKey{tool, hash}]
	if !ok {
		return veto.Question{}, false
	}
	return p.approvals.question(i), true
}

// Suspended answers veto.Approvals.Suspended from the projection.
func (p *Projection) Suspended(callID string) bool { return p.approvals.suspended[callID] }

// Waiting returns the run's questions that wait for a person (the last
// of their call, not answered) asked at or after since, newest first.
func (p *Projection) Waiting(since time.Time) []veto.Question {
	var out []veto.Question
	for _, i := range p.approvals.lastOfCall {
		if q := p.approvals.question(i); !q.Answered && !q.Time.Before(since) {
			out = append(out, q)
		}
	}
	SortQuestions(out)
	return out
}

// SortQuestions puts qs newest first (then by run and sequence number):
// the order of veto.Waiting.
func SortQuestions(qs []veto.Question) {
	slices.SortFunc(qs, func(a, b veto.Question) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return cmp.Compare(b.Seq, a.Seq)
	})
}
