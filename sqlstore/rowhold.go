package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"time"

	"github.com/vetohq/veto/internal/loaded"
)

// A run's row held from a decision's load to its append. Two instances
// appending to one run race: each append proves the row it was computed
// on still the run's (a guard, or a read under the lock), and the loser
// decides again. An instance deciding back to back builds each append on
// the row its last one left and reads nothing, where the loser reads the
// run again before each try: on PostgreSQL the winner appended every
// 1.1 ms and a loser's try took 2.3 ms, so the loser could lose all 32
// tries and refuse the call as contended (TestCallersInOneRunStarveNone:
// 1 to 4 calls of 480 with two instances, 3 to 5 of 640 with sixteen
// callers on one). A try that holds the row locks it at the load
// instead, and cannot lose: the gate asks it of a try after two lost
// (loaded.Holding), and the store of every try in a run another writer
// (another instance, or another append of its own) moved under one of its
// appends within racingFor.
//
// The load begins a transaction on a connection of its own, locks the
// row and reads it, in one round trip (Dialect.Hold); the append sends
// its guard, its writes and the commit in another (Dialect.PipelineIn):
// a held try costs the trips of a load that reads and a pipelined
// append. The other instance's appends wait for the lock, then find the
// row moved and decide again on it.
//
// One try of a run at a time holds its row in a process: the others of
// the run wait their turn in memory (takeRowTurn), not on a connection of the
// pool blocked on the lock, so that one busy run does not take every
// connection and leave the other runs' decisions waiting until their
// deadline. Rows of at most half the pool's connections are held at
// once; a try that finds as many held reads its run unheld, as before.
//
// While the row is held, every statement the try makes on the store
// without a transaction of its own (the rules' reads of the run's
// history, knowledge and tallies) runs on the held connection, in its
// transaction: a try holding the lock never waits for a connection of
// the pool, which appends waiting for the lock may all have taken.

// rowHeld is a run's row locked by a load in the transaction open on c,
// for the decision's append (the load's note holds it).
type rowHeld struct {
	s    *Store
	run  string
	c    *sql.Conn
	h    header // the row as read under the lock
	done bool   // committed, or never begun: nothing to roll back
	turn func() // gives the run's turn back (takeRowTurn)
}

// takeRowTurn waits for run's turn to hold its row in this process
// (s.held) until ctx ends. ok is false when the store already holds as
// many runs' rows as it may (maxHeld): the try reads unheld. The caller
// gives the turn back.
func (s *Store) takeRowTurn(ctx context.Context, run string) (give func(), ok bool, err error) {
	unlock, ok := s.held.Lock(ctx, run)
	if !ok {
		return nil, false, ctx.Err()
	}
	s.mu.Lock()
	if s.nHeld >= s.maxHeld() {
		s.mu.Unlock()
		unlock()
		return nil, false, nil
	}
	s.nHeld++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.nHeld--
		s.mu.Unlock()
		unlock()
	}, true, nil
}

// maxHeld is how many runs' rows the store holds at once: half the
// connections it may open, at least one.
func (s *Store) maxHeld() int {
	m := s.db.Stats().MaxOpenConnections
	if m == 0 {
		return 4 // no bound set
	}
	return max(m/2, 1)
}

// rowHeldIn returns the row ctx's decision holds on s, or nil.
func (s *Store) rowHeldIn(ctx context.Context) *rowHeld {
	n := loaded.From(ctx)
	if n == nil {
		return nil
	}
	r, _ := n.V.(*rowHeld)
	if r == nil || r.s != s {
		return nil
	}
	return r
}

// end rolls the transaction back unless it was committed, and gives the
// connection back; one whose rollback failed is closed first, so that
// the pool lets it go (a connection left in a transaction is never used
// again). After a statement's panic (a driver's bug) the connection is
// abandoned instead (see abandon).
func (r *rowHeld) end(panicked bool) {
	defer r.turn()
	if panicked {
		abandon(r.c)
		return
	}
	if !r.done {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if _, err := r.c.ExecContext(ctx, `ROLLBACK`); err != nil {
			r.c.Raw(func(dc any) error {
				if cl, ok := dc.(io.Closer); ok {
					cl.Close()
				}
				return nil
			})
		}
		cancel()
	}
	r.c.Close()
}

// ErrNoHold is a Hold's answer when it cannot hold a row on the
// connection (a driver wrapped, in tests): nothing was begun, and the
// load reads the row as it would unheld.
var ErrNoHold = errors.New("sqlstore: the row cannot be held on this connection")

// holdRow begins a transaction on a connection of its own, locks run's
// row in it and reads the row there (Dialect.Hold), and leaves both in the
// decision's note for its append; the note's release ends the
// transaction (rolled back unless the append committed it). The row of a
// run not stored yet is made by the lock (next 1, no start), as an append
// made in a transaction makes it. held is false when the row could not
// be held on the connection and nothing was: the load reads it unheld.
func (s *Store) holdRow(ctx context.Context, n *loaded.Note, run string) (h header, held bool, err error) {
	give, ok, err := s.takeRowTurn(ctx, run)
	if err != nil || !ok {
		return header{}, false, err
	}
	if err := ctx.Err(); err != nil { // the turn came as the context ended
		give()
		return header{}, false, err
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		give()
		return header{}, false, err
	}
	r := &rowHeld{s: s, run: run, c: c, turn: give}
	ok = false
	defer func() {
		if !ok {
			r.end(err == nil && held) // failed: rolled back; panicked: abandoned
		}
	}()
	held = true
	h, err = s.scanHeader(run, func(dest ...any) error {
		return s.d.Hold(ctx, c, run, Stmt{Query: headerQuery, Args: []any{run}}, dest...)
	})
	if errors.Is(err, ErrNoHold) || s.gone(err) {
		r.done = errors.Is(err, ErrNoHold)
		return header{}, false, nil // read unheld: on a new connection, after gone
	}
	if err != nil {
		return header{}, true, err
	}
	r.h = h
	n.V = r
	n.OnRelease(func() {
		n.V = nil
		r.end(false)
	})
	ok = true
	if h.next == 1 && !h.started {
		// The row the lock made: the decision sees a run not stored yet
		// (no history, no tallies), and its append changes the row.
		h.exists = false
	}
	return h, true, nil
}

// appendRowHeld makes p's append in the transaction a load holds the
// run's row in (holdRow), and commits it: the row was read under the
// lock, so nothing is read again, and no other writer can have moved it.
func (s *Store) appendRowHeld(ctx context.Context, n *loaded.Note, r *rowHeld, p *pending) error {
	panicked := true
	defer func() {
		n.V = nil
		if panicked {
			n.OnRelease(func() { r.end(true) })
		}
		n.Release()
	}()
	h, err := s.writeHeld(ctx, r, p)
	panicked = false
	if err != nil {
		return s.failure(err)
	}
	h.exists, h.recorded, h.appended = true, h.damaged, time.Now()
	s.keepNewer(p.run, *h) // the next append of this instance builds on it
	return nil
}

// writeHeld writes p's append in r's transaction and commits it: one
// pipelined batch, the commit its last statement, where the append needs
// no read (pipelinable; the guard finding no call of it observed
// before), else statement by statement on r's connection. It returns the
// row as the append leaves it.
func (s *Store) writeHeld(ctx context.Context, r *rowHeld, p *pending) (*header, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // nothing sent: the connection is not taken for ended
	}
	if calls, ok := pipelinable(r.h, p.events); ok {
		h := r.h
		pl := &pipeline{}
		row, err := s.append(context.WithValue(ctx, pipelineKey{}, pl), nil, p.run, p.next, p.events, &h, nil)
		if err != nil {
			return nil, err
		}
		g := Guard{Run: p.run, Next: p.next, Last: r.h.last, Damaged: r.h.damaged, Calls: calls}
		_, err = s.d.PipelineIn(ctx, r.c, []Piece{{Guard: g, Stmts: pl.stmts}})
		if err == nil {
			r.done = true
			return row, nil
		}
		if !errors.Is(err, ErrNotPipelined) {
			return nil, err
		}
		// A call of it observed before: the batch left nothing in the
		// transaction, and the append reads what it changes.
	}
	kept := r.h
	row, err := s.append(ctx, nil, p.run, p.next, p.events, &kept, nil) // on r.c (rowHeldIn)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := s.d.PipelineIn(ctx, r.c, nil); err != nil { // the commit alone
		return nil, err
	}
	r.done = true
	return row, nil
}
