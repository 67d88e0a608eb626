package veto

import (
	"context"
	"time"
)

// Question is a call a rule asked a person about: the denial that asked
// (an invocation_denied awaiting approval), as its event records it. It
// names the arguments by their hash and never holds them.
type Question struct {
	Run      string    `json:"run"`
	CallID   string    `json:"call_id"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
	Rule     string    `json:"rule"`
	Reason   string    `json:"reason"`
	Risk     Risk      `json:"risk"`
	ArgsHash string    `json:"args_hash"`
	// Actor is the actor whose call was asked about (kind and id): only
	// its call may use a grant of the question.
	Actor Actor `json:"actor,omitzero"`
	// Answered reports that a person answered this question (granted or
	// refused) after it was asked.
	Answered bool `json:"answered,omitempty"`
}

// Approvals is a run's questions, a person's answers to them (grants and
// refusals, each used by at most one decision) and its open suspensions:
// a projection of the run's events like Knowledge and Tally, kept by the
// store as events are appended, so that the decision path looks them up
// and never reads the log. Like Knowledge, it may answer from a state
// later than the decision's snapshot (a decision made on an older state
// fails to append and is made again).
//
// It also holds what a person is shown of each open question (Shown):
// the call's arguments, masked, apart from the log.
type Approvals interface {
	// Grant returns the sequence number of the run's oldest grant for
	// tool and argsHash, given for a question about a call of actor (kind
	// and id), that no decision used and that has not expired at now; 0
	// for none. A run whose log is damaged has none: a lost record of a
	// grant's use must not let it pass twice.
	Grant(ctx context.Context, tool, argsHash string, actor Actor, now time.Time) (uint64, error)
	// Refusal returns the sequence number of the oldest refusal of call
	// callID with tool and argsHash that no decision used; 0 for none.
	Refusal(ctx context.Context, callID, tool, argsHash string) (uint64, error)
	// Asked returns the question last asked about call callID.
	Asked(ctx context.Context, callID string) (Question, bool, error)
	// AskedAbout returns the question last asked about a call of tool
	// with argsHash (a client's prompt names a call by these alone).
	AskedAbout(ctx context.Context, tool, argsHash string) (Question, bool, error)
	// Suspended reports whether call callID is suspended: a
	// call_suspended event of it that no decision of it followed.
	Suspended(ctx context.Context, callID string) (bool, error)

	// Keep holds what a person is shown of a question, replacing what
	// was held for its call; the store bounds how many it holds and drops
	// the oldest past that.
	Keep(ctx context.Context, s Shown) error
	// Shown returns what is held for call callID, unless it expired by
	// now.
	Shown(ctx context.Context, callID string, now time.Time) (Shown, bool, error)
	// Forget deletes what is held for call callID, for good.
	Forget(ctx context.Context, callID string) error
}

// WaitQuery selects what Waiting returns. Zero fields select everything.
type WaitQuery struct {
	Run   string    // one run; "" is every run
	Since time.Time // questions asked at or after
}

// Waiting returns what waits for a person, the one answer to it for the
// service (GET /v1/approvals), veto approve and the page: the questions
// no person has answered that are the last of their call, newest first.
func Waiting(ctx context.Context, l Log, q WaitQuery) ([]Question, error) {
	return l.Waiting(ctx, q)
}

// noApprovals is the projection of a store that keeps none: no question,
// no answer, nothing held. A grant is never found, so a question is asked
// again: the fail-closed side.
type noApprovals struct{}

func (noApprovals) Grant(context.Context, string, string, Actor, time.Time) (uint64, error) {
	return 0, nil
}
func (noApprovals) Refusal(context.Context, string, string, string) (uint64, error) { return 0, nil }
func (noApprovals) Asked(context.Context, string) (Question, bool, error) {
	return Question{}, false, nil
}
func (noApprovals) AskedAbout(context.Context, string, string) (Question, bool, error) {
	return Question{}, false, nil
}
func (noApprovals) Suspended(context.Context, string) (bool, error) { return false, nil }
func (noApprovals) Keep(context.Context, Shown) error               { return nil }
func (noApprovals) Shown(context.Context, string, time.Time) (Shown, bool, error) {
	return Shown{}, false, nil
}
func (noApprovals) Forget(context.Context, string) error { return nil }

// approvalsOf is st's approvals, or none.
func approvalsOf(st *RunState) Approvals {
	if st.Approvals == nil {
		return noApprovals{}
	}
	return st.Approvals
}
