package veto

import (
	"context"
	"errors"
)

// ErrConflict is returned by Store.Append when the run's next sequence
// number is not the one the writer expected: someone else appended first.
var ErrConflict = errors.New("veto: sequence conflict")

// Store keeps the events of runs. Events are the source of truth; the
// projection is derived from them.
type Store interface {
	// Load returns a snapshot of a run (a run with no events has Next ==
	// 1). It must not cost more for a long run than for a short one.
	Load(ctx context.Context, run string) (RunState, error)
	// Append stores a batch of the run's events atomically. next is the
	// sequence number the first event carries; the events carry next,
	// next+1, … in order. If the run's next number is not next, nothing is
	// stored and the error is ErrConflict.
	Append(ctx context.Context, run string, next uint64, events []Event) error
	// Events returns the run's events with a sequence number above after.
	Events(ctx context.Context, run string, after uint64) ([]Event, error)
}

// Decisions is a store that finds the decision recorded for a call, as
// every store veto ships does: an observation reported by a client veto
// cannot vouch for (ObserveReported) must name a call decided in its run.
type Decisions interface {
	// Decided returns call callID's decision in run (the call's first
	// event, when it is one); ok is false when there is none.
	Decided(ctx context.Context, run, callID string) (e Event, ok bool, err error)
}
