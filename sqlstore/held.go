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
	saves int                               // savepoints made, to name the next
	rows  map[string]header                 // the rows the appends left, kept once committed
	after []func(ctx context.Context) error // what must wait for the commit (Approvals.Keep)
	broke bool                              // a statement panicked: the connection is not ended through database/sql
}

// heldIn returns the transaction ctx carries for s, or nil.
func (s *Store) heldIn(ctx context.Context) *held {
	h, _ := ctx.Value(heldKey{}).(*held)
	if h == nil || h.s != s {
		return nil
	}
	return h
}

// Together runs f with one write transaction held for it, and commits it
// once f has returned: every read f makes on the store with the context
// it is given sees what f appended before it, each append is its own
// savepoint (one that fails leaves nothing of its in the transaction, and
// the others stand), and all of them are stored at once, or none is.
// Until the commit nothing f appended is stored: a caller must hold what
// f decided until Together returns, and take an error as every append of
// f refused.
//
// Only a dialect whose appends take turns (SQLite's) holds one: the
// transaction is the turn's, on the appends' kept connection. Elsewhere
// f runs as it would alone, each append committed by itself, and
// Together returns nil.
//
// f holds the database's write lock all along: another process's writer
// waits for it, up to its busy timeout. A Together whose context ends
// commits nothing.
func (s *Store) Together(ctx context.Context, f func(ctx context.Context)) (err error) {
	if s.turn == nil || s.heldIn(ctx) != nil {
		f(ctx)
		return nil
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return unavailable(ctx.Err())
	}
	defer func() { <-s.turn }() // after end, deferred below
	if err := ctx.Err(); err != nil {
		return unavailable(err)
	}
	tx, end, err := s.begin(ctx)
	if err != nil {
		return unavailable(err)
	}
	h := &held{s: s, tx: tx, rows: map[string]header{}}
	finished := false
	defer func() {
		end(!finished || h.broke)
		s.prepareWanted(ctx)
	}()
	f(context.WithValue(s.unwatched(ctx), heldKey{}, h))
	finished = true
	if h.broke {
		return unavailable(errors.New("sqlstore: a statement failed within the transaction held"))
	}
	if err := ctx.Err(); err != nil {
		return s.failure(err)
	}
	if err := tx.Commit(); err != nil {
		return s.failure(err)
	}
	if s.d.OwnRows {
		now := time.Now()
		for run, r := range h.rows {
			r.exists, r.recorded, r.appended = true, r.damaged, now
			s.keepNewer(run, r)
		}
	}
	for _, a := range h.after {
		if e := a(ctx); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// appendHeld makes p's append within h's transaction, as a savepoint:
// one that fails leaves nothing of its in the transaction.
func (s *Store) appendHeld(ctx context.Context, h *held, p *pending) error {
	defer h.notePanic()
	uctx := s.unwatched(ctx)
	if _, err := h.tx.ExecContext(watched(uctx), `SAVEPOINT veto_append`); err != nil {
		return s.failure(err)
	}
	var kept *header
	if r, ok := h.rows[p.run]; ok {
		kept = &r // left by an append of this transaction, the write lock held since: nothing is read
	}
	row, err := s.append(uctx, h.tx, p.run, p.next, p.events, kept, p.seen)
	if err != nil {
		if _, rerr := h.tx.ExecContext(watched(uctx), `ROLLBACK TO veto_append`); rerr != nil {
			h.broke = true // the transaction may hold part of the append: it is not committed
		}
		h.tx.ExecContext(watched(uctx), `RELEASE veto_append`)
		if errors.Is(err, veto.ErrConflict) {
			return err
		}
		return s.failure(err)
	}
	if _, err := h.tx.ExecContext(watched(uctx), `RELEASE veto_append`); err != nil {
		h.broke = true
		return s.failure(err)
	}
	r := *row
	r.exists, r.recorded = true, r.damaged // as a read of it would find it now
	h.rows[p.run] = r
	return nil
}

// notePanic, deferred, notes a panic in a statement of h (a driver's
// bug) and goes on panicking: database/sql may hold a lock the statement
// took, so the transaction is ended on its connection, not through
// database/sql, and nothing of it is committed (begin's end).
func (h *held) notePanic() {
	if r := recover(); r != nil {
		h.broke = true
		panic(r)
	}
}
