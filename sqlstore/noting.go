package sqlstore

import (
	"context"
	"errors"

	"github.com/vetohq/veto"
)

// Noting is a Store whose failures are noted, with their cause, in the
// request's Causes (WithCauses): a store held open (PostgreSQL's pool)
// that fails inside a decision names why, as a sqlite.File does. Name is
// the state's name in a reason (never a DSN, which may hold a password);
// Classify names the cause of a driver's error.
type Noting struct {
	*Store
	Name     string
	Classify func(error) (Cause, string)
}

func (n *Noting) note(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, veto.ErrConflict) {
		Note(ctx, Contended(n.Name)) // named only if the gate gives up
		return err
	}
	se := CauseOf(err, n.Classify)
	if se.Path == "" {
		c := *se
		c.Path = n.Name
		se = &c
	}
	Note(ctx, se)
	return se
}

// Load implements veto.Store.
func (n *Noting) Load(ctx context.Context, run string) (veto.RunState, error) {
	st, err := n.Store.Load(ctx, run)
	return st, n.note(ctx, err)
}

// Append implements veto.Store.
func (n *Noting) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	return n.note(ctx, n.Store.Append(ctx, run, next, events))
}

// Events implements veto.Store.
func (n *Noting) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	evs, err := n.Store.Events(ctx, run, after)
	return evs, n.note(ctx, err)
}

// Decided is Store.Decided, its failure noted.
func (n *Noting) Decided(ctx context.Context, run, callID string) (veto.Event, bool, error) {
	e, ok, err := n.Store.Decided(ctx, run, callID)
	return e, ok, n.note(ctx, err)
}
