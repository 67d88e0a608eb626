package sqlstore

import (
	"context"
	"errors"

	"github.com/vetohq/veto"
)

// Named is a Store whose failures are *veto.StateError values naming
// their cause and the state: a store held open (PostgreSQL's pool) that
// fails inside a decision says why through the error the gate gets, as a
// sqlite.File does. Name is the state's name in a reason (never a DSN,
// which may hold a password); Classify names the cause of a driver's
// error.
type Named struct {
	*Store
	Name     string
	Classify func(error) (veto.Cause, string)
}

// refusal is err as the StateError of this state; an append that lost to
// another writer is veto.Contended (still veto.ErrConflict, so the gate
// decides again, and named if it gives up).
func (n *Named) refusal(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, veto.ErrConflict) {
		return veto.Contended(n.Name)
	}
	se := CauseOf(err, n.Classify)
	if se.Path == "" {
		c := *se
		c.Path = n.Name
		se = &c
	}
	return se
}

// Load implements veto.Store.
func (n *Named) Load(ctx context.Context, run string) (veto.RunState, error) {
	st, err := n.Store.Load(ctx, run)
	return st, n.refusal(err)
}

// Append implements veto.Store.
func (n *Named) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	return n.refusal(n.Store.Append(ctx, run, next, events))
}

// Events implements veto.Store.
func (n *Named) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	evs, err := n.Store.Events(ctx, run, after)
	return evs, n.refusal(err)
}

// Decided is Store.Decided, its failure named.
func (n *Named) Decided(ctx context.Context, run, callID string) (veto.Event, bool, error) {
	e, ok, err := n.Store.Decided(ctx, run, callID)
	return e, ok, n.refusal(err)
}
