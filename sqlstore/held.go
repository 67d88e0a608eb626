package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/vetohq/veto"
)

// A write transaction held across several calls (Together). Where a
// process makes two appends one right after the other, each its own
// commit costs a WAL frame for every page it wrote, twice for the pages
// both write (the run's row, the last leaf of the events and of the
// observations, the tallies), and a proof of the file before each; held,
// the pages are written once, in one commit.

// heldKey carries the transaction a Together call holds.
type heldKey struct{}

// held is a transaction Together holds: every call on its store made
// with a context that carries it reads and writes within it.
type held struct {
	s     *Store
	tx    *sql.Tx
	rows  map[string]header                 // the rows the appends left, as a read would find them; kept once committed
	after []func(ctx context.Context) error // what must wait for the commit (a scrub of what Approvals.Keep dropped)
	// failed: a statement of it failed. SQLite ends the whole
	// transaction on some errors (a full disk, an I/O error), and a
	// savepoint begun after would be a transaction of its own, committed
	// at its release: no append begins after a failure, and nothing is
	// committed.
	failed bool
	// panicked: a statement panicked (a driver's bug): database/sql may
	// hold a lock the statement took, so the transaction is ended on its
	// connection, not through database/sql (begin's end), and nothing is
	// committed.
	panicked bool
	// unmoved: no other connection committed since the kept
	// connection's last commit (unmoved.go); an append builds on the row
	// the store's last append left, and reads none.
	unmoved bool
}

// heldIn returns the transaction ctx carries for s, or nil.
func (s *Store) heldIn(ctx context.Context) *held {
	h, _ := ctx.Value(heldKey{}).(*held)
	if h == nil || h.s != s {
		return nil
	}
	return h
}

// errHeldFailed refuses what comes after a failure within a transaction
// held, and its commit.
var errHeldFailed = errors.New("sqlstore: a statement failed within the transaction held")

// Together runs f with one write transaction held for it, and commits it
// once f has returned: every read f makes on the store with the context
// it is given sees what f appended before it, each append is its own
// savepoint (one that fails leaves nothing of its in the transaction, and
// the others stand), and all of them are stored at once, or none is. The
// error is the commit's: nil means every append f saw succeed is stored.
// Until the commit nothing f appended is stored: a caller must hold what
// f decided until Together returns, and take an error as every append of
// f refused.
//
// Only a dialect whose appends take turns (SQLite's) holds one: the
// transaction is the turn's, on the appends' kept connection. Elsewhere
// f runs as it would alone, each append committed by itself, and
// Together returns nil; so it does within a transaction already held,
// whose commit is the outer Together's.
//
// f holds the database's write lock all along: another process's writer
// waits for it, up to its busy timeout, so f should do no more than its
// reads and appends. A Together whose context ends commits nothing.
func (s *Store) Together(ctx context.Context, f func(ctx context.Context)) error {
	if s.turn == nil || s.heldIn(ctx) != nil {
		f(ctx)
		return nil
	}
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer func() { <-s.turn }() // after end, deferred below
	tx, at, end, err := s.begin(ctx)
	if err != nil {
		return unavailable(err)
	}
	h := &held{s: s, tx: tx, rows: map[string]header{}}
	finished := false
	defer func() {
		end(!finished || h.panicked) // rolled back unless committed
		s.prepareWanted(ctx)
	}()
	uctx := s.unwatched(ctx)
	h.unmoved, err = s.unmoved(uctx, tx, at)
	if err != nil {
		h.failed = true // a newer schema, or a failed read: every append of f's is refused, and nothing committed
	}
	f(context.WithValue(uctx, heldKey{}, h))
	finished = true
	if err != nil {
		return err
	}
	if h.failed || h.panicked {
		return unavailable(errHeldFailed)
	}
	if err := ctx.Err(); err != nil {
		return s.failure(err)
	}
	if err := tx.Commit(); err != nil {
		return s.failure(err)
	}
	at.ok = true
	now := time.Now()
	for run, r := range h.rows {
		s.keepCommitted(run, r, now)
	}
	for _, a := range h.after {
		a(ctx) // a scrub that fails leaves rows already deleted in the WAL until the next checkpoint
	}
	return nil
}

// savepoint runs do within h's transaction as a savepoint: an error of
// do's leaves nothing of it there. The savepoint's own statements run
// whether or not ctx has ended (else a deadline passing in do would leave
// it open); one that fails marks h failed.
func (s *Store) savepoint(ctx context.Context, h *held, do func() error) error {
	defer h.notePanic()
	if h.failed || h.panicked {
		return unavailable(errHeldFailed)
	}
	sctx := context.WithoutCancel(ctx)
	if _, err := h.tx.ExecContext(sctx, `SAVEPOINT veto_append`); err != nil {
		h.failed = true
		return unavailable(err)
	}
	if err := do(); err != nil {
		if _, rerr := h.tx.ExecContext(sctx, `ROLLBACK TO veto_append`); rerr != nil {
			h.failed = true // the transaction may hold part of it: nothing is committed
		} else if _, rerr := h.tx.ExecContext(sctx, `RELEASE veto_append`); rerr != nil {
			h.failed = true
		}
		return err
	}
	if _, err := h.tx.ExecContext(sctx, `RELEASE veto_append`); err != nil {
		h.failed = true
		return unavailable(err)
	}
	return nil
}

// appendHeld makes p's append within h's transaction, as a savepoint.
func (s *Store) appendHeld(ctx context.Context, h *held, p *pending) error {
	var row *header
	err := s.savepoint(ctx, h, func() error {
		var kept *header
		if r, ok := h.rows[p.run]; ok {
			kept = &r // left by an append of this transaction, the write lock held since: nothing is read
		} else if r, ok := s.ownRow(p.run); ok && h.unmoved {
			kept = &r // left by this store's last commit, nothing written since
		}
		var err error
		row, err = s.append(s.unwatched(ctx), h.tx, p.run, p.next, p.events, kept, p.seen)
		return err
	})
	if err != nil {
		if errors.Is(err, veto.ErrConflict) || errors.Is(err, veto.ErrStateUnavailable) {
			return err
		}
		return s.failure(err)
	}
	r := *row
	r.exists, r.recorded = true, r.damaged // as a read of it would find it now
	h.rows[p.run] = r
	return nil
}

// noteErr marks h failed when a statement of it failed (err).
func (h *held) noteErr(err error) {
	if err != nil {
		h.failed = true
	}
}

// notePanic, deferred, notes a panic in a statement of h (a driver's
// bug) and goes on panicking.
func (h *held) notePanic() {
	if r := recover(); r != nil {
		h.panicked = true
		panic(r)
	}
}
