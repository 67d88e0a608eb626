package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
)

// Group commit. Appends that arrive while another is being committed wait
// for it, and the next one to commit takes every append waiting, up to
// the group's size, as one transaction and one commit (one pipelined
// batch where the dialect pipelines): concurrent decisions of different
// runs share a commit's fsync instead of queueing for one each. On
// PostgreSQL up to four batches commit at once (leaders). SQLite's
// dialect does not group (Dialect.Group): with synchronous=NORMAL a
// commit there has no fsync to share, and its appends already take turns
// for the one write lock (Store.turn); measured, a batch made it slower. Nothing
// waits for company: an append that finds no commit running commits at
// once, alone.
//
// A batch holds one append per run (a second of the same run waits for
// the next batch, so each run's order and chain are as they would be
// alone), in the order of the runs' names, so that two instances' batches
// on one PostgreSQL lock rows in the same order. An append that fails on
// its own (another writer moved its run, its writes fail) is answered
// with its own error, and the others are committed again without it (a
// pipelined batch's each alone, side by side; a transaction's together):
// nothing of its was stored, nor of the others until they commit. A
// commit that fails is every append's failure: each is refused, and none
// is stored. On PostgreSQL only pipelined appends share a commit (see
// batches). An append returns once its own batch has committed, whoever
// led it, and a leader hands the lead on once its own append is answered.

// DefaultGroup is the most appends one commit carries, on a dialect that
// groups commits (Dialect.Group).
const DefaultGroup = 32

// group queues appends for the next commit.
type group struct {
	mu      sync.Mutex
	queue   []*pending
	leading int  // appends committing batches
	set     bool // SetGroup was called: max is its, not the dialect's
	max     int  // the most appends a commit carries; 1 or less: each commits alone
}

// pending is one append on its way to a commit.
type pending struct {
	ctx    context.Context
	run    string
	next   uint64
	events []veto.Event
	piece  *Piece  // built for the dialect's Pipeline; nil: appended in a transaction
	h      header  // the row the piece was computed on
	seen   *header // the row the events were computed on, from the load's note (Dialect.OwnRows)
	err    error
	stored bool          // committed: a panic later in the batch's commit does not refuse it
	done   chan struct{} // closed once err is the append's answer
	// lead is sent to once when a leader that has its own answer hands
	// the committing of batches to this waiting append (promoted).
	lead     chan struct{}
	promoted bool // g.mu
}

// Piece is one append of a pipelined batch: its Guard, then its statements
// (markers "?").
type Piece struct {
	Guard Guard
	Stmts []Stmt
}

// SetGroup sets the most appends one commit carries (the dialect's Group
// until then); 1 commits every append alone.
func (s *Store) SetGroup(n int) {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.g.max, s.g.set = n, true
}

// groupMax is the most appends one commit carries (g.mu held).
func (s *Store) groupMax() int {
	if s.g.set {
		return s.g.max
	}
	return s.d.Group
}

// Append implements veto.Store: the run's events are stored, its next
// sequence number checked, its chain extended and its projections updated
// all at once or not at all, in a transaction or pipelined batch that may
// carry other runs' appends too (group commit, above).
func (s *Store) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	p := &pending{ctx: ctx, run: run, next: next, events: events}
	if n := loaded.From(ctx); n != nil {
		if r, ok := n.V.(*rowHeld); ok && r.s == s && r.run == run {
			return s.appendRowHeld(ctx, n, r, p)
		}
		if h, ok := n.V.(header); ok && s.d.OwnRows {
			p.seen = &h
		}
	}
	if h := s.heldIn(ctx); h != nil {
		return s.appendHeld(ctx, h, p)
	}
	if err := s.piece(p); err != nil {
		return err
	}
	s.g.mu.Lock()
	if s.groupMax() <= 1 || !s.batches(p) {
		s.g.mu.Unlock()
		s.commit(ctx, []*pending{p})
		return p.err
	}
	p.done, p.lead = make(chan struct{}), make(chan struct{}, 1)
	s.g.queue = append(s.g.queue, p)
	if s.g.leading >= s.leaders() {
		s.g.mu.Unlock()
		select {
		case <-p.done: // answered by the append that committed its batch
			select {
			case <-p.lead:
				// Handed the lead too, before its batch was taken (a
				// promotion only picks an append still queued).
				s.g.mu.Lock()
				s.lead(p)
			default:
			}
			return p.err
		case <-p.lead: // handed the lead
			s.g.mu.Lock()
		}
	} else {
		s.g.leading++
	}
	s.lead(p)
	<-p.done // its batch may be another leader's, still committing
	return p.err
}

// lead commits batches from the queue (g.mu held; own is one of the
// leaders, and unlocks it). Once its own append is answered, it hands the
// lead to the oldest append waiting, so that no caller commits others'
// batches for longer than its own takes; with none waiting, it stops
// leading.
func (s *Store) lead(own *pending) {
	for len(s.g.queue) > 0 {
		if answered(own) {
			for _, q := range s.g.queue {
				if !q.promoted {
					q.promoted = true
					q.lead <- struct{}{} // buffered, and sent to once
					s.g.mu.Unlock()
					return
				}
			}
		}
		batch := s.g.take(s.groupMax())
		s.g.mu.Unlock()
		bctx, stop := batchContext(batch)
		s.commitBatch(bctx, batch)
		stop()
		for _, q := range batch {
			close(q.done)
		}
		s.g.mu.Lock()
	}
	s.g.leading--
	s.g.mu.Unlock()
}

// commitBatch is commit for a batch lead took. A driver that panics in
// it (a bug) refuses every append of the batch, where the panic, going
// on up the leader's stack, left each of the others waiting for an
// answer for good, and the lead held: with no leader left (SQLite has
// one, PostgreSQL four), every later append of the process waited too.
// The transaction was rolled back on its connection (begin).
func (s *Store) commitBatch(ctx context.Context, batch []*pending) {
	defer refuseOnPanic(batch)
	s.commit(ctx, batch)
}

// refuseOnPanic, deferred, recovers a driver's panic and refuses each
// append of batch that was not stored and has no answer yet. The
// panic's value is not carried: it may quote a statement's arguments.
func refuseOnPanic(batch []*pending) {
	if recover() == nil {
		return
	}
	err := unavailable(errors.New("the database driver failed (it panicked)"))
	for _, q := range batch {
		if !q.stored && q.err == nil {
			q.err = err
		}
	}
}

// answered reports whether p has its answer.
func answered(p *pending) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// leaders is how many batches may be committing at once: one on a
// database with one writer (SQLite: a second would only wait for the
// write lock), more on one whose writers work side by side (PostgreSQL),
// so that a batch slowed by a refusal (its appends sent again alone, or as
// transactions) holds up only the appends in it.
func (s *Store) leaders() int {
	if s.d.Pipeline == nil {
		return 1
	}
	return 4
}

// batches reports whether p may share a commit. On a dialect that
// pipelines, only a pipelined append does, and not one of a run another
// instance appends to as well: an append made as a transaction there is a
// dozen round trips, which a batch would run one after the other where
// alone they run side by side on the pool's connections; and in a batch
// each refusal of a shared run's guard would send the batch again.
func (s *Store) batches(p *pending) bool {
	if s.d.Pipeline == nil {
		return true
	}
	return p.piece != nil && !s.movedWithin(p.run, sharedFor)
}

// take removes the next batch from the queue (g.mu held): the oldest
// append of each run, up to the group's size, ordered by run.
func (g *group) take(max int) []*pending {
	var batch, rest []*pending
	runs := map[string]bool{}
	for _, p := range g.queue {
		if len(batch) < max && !runs[p.run] {
			runs[p.run] = true
			batch = append(batch, p)
			continue
		}
		rest = append(rest, p)
	}
	g.queue = rest
	slices.SortStableFunc(batch, func(a, b *pending) int { return strings.Compare(a.run, b.run) })
	return batch
}

// batchContext is the context a batch commits under: its first append's
// values, ended only when every append of the batch has stopped waiting
// (each waits for the commit it is in, so none is abandoned for
// another's deadline).
func batchContext(batch []*pending) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(batch[0].ctx))
	if len(batch) == 1 {
		stop := context.AfterFunc(batch[0].ctx, cancel)
		return ctx, func() { stop(); cancel() }
	}
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, p := range batch {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, st := range stops {
			st()
		}
		cancel()
	}
}

// piece builds p's pipelined batch when the dialect pipelines and the
// store keeps p's run's row at p.next (see pipeline.go); otherwise p is
// appended in a transaction.
func (s *Store) piece(p *pending) error {
	if s.d.Pipeline == nil {
		return nil
	}
	h, ok := s.take(p.run)
	if !ok || h.next != p.next {
		return nil
	}
	calls, ok := pipelinable(h, p.events)
	if !ok {
		return nil
	}
	g := Guard{Run: p.run, Next: p.next, Last: h.last, Damaged: h.damaged, Calls: calls} // the row as read
	pl := &pipeline{}
	h.exists = true // the guard makes the row of a new run
	if _, err := s.append(context.WithValue(p.ctx, pipelineKey{}, pl), nil, p.run, p.next, p.events, &h, nil); err != nil {
		return unavailable(err)
	}
	p.piece = &Piece{Guard: g, Stmts: pl.stmts}
	p.h = h // the row as the append leaves it
	return nil
}

// commit commits a batch, setting each append's err.
func (s *Store) commit(ctx context.Context, batch []*pending) {
	var piped, txed []*pending
	for _, p := range batch {
		if p.piece != nil {
			piped = append(piped, p)
		} else {
			txed = append(txed, p)
		}
	}
	txed = append(txed, s.commitPiped(ctx, piped)...)
	if len(txed) > 1 && s.d.Pipeline != nil {
		// Pieces the dialect found must read first: each is appended in a
		// transaction of its own, side by side (see batches).
		var wg sync.WaitGroup
		for _, p := range txed {
			wg.Go(func() {
				defer refuseOnPanic([]*pending{p})
				s.commitTx(ctx, []*pending{p})
			})
		}
		wg.Wait()
		s.prepareWanted(ctx)
		return
	}
	if len(txed) > 0 {
		slices.SortStableFunc(txed, func(a, b *pending) int { return strings.Compare(a.run, b.run) })
		s.commitTx(ctx, txed)
		s.prepareWanted(ctx) // after the transaction ends
	}
}

// commitPiped sends the pieces as one pipelined batch; it returns those
// that must be appended in a transaction instead.
func (s *Store) commitPiped(ctx context.Context, batch []*pending) (txed []*pending) {
	for len(batch) > 0 {
		pieces := make([]Piece, len(batch))
		for i, p := range batch {
			pieces[i] = *p.piece
		}
		at, err := s.d.Pipeline(ctx, s.db, pieces)
		if err == nil {
			now := time.Now()
			for _, p := range batch {
				p.stored = true
				p.h.appended = now
				s.keep(p.run, p.h)
			}
			return txed
		}
		if at < 0 || at >= len(batch) {
			// The batch failed as a whole: every append is refused.
			for _, p := range batch {
				p.err = s.failure(err)
				if errors.Is(p.err, veto.ErrConflict) {
					s.moved(p.run)
				}
			}
			return txed
		}
		// One append failed on its own; nothing was stored. The others
		// are sent again each alone, side by side: where one failed,
		// others may (a run shared with another instance, calls observed
		// before), and a batch sent again for each would be as many trips
		// one after the other.
		p := batch[at]
		switch {
		case errors.Is(err, ErrNotPipelined):
			p.piece = nil
			txed = append(txed, p)
		case s.d.Conflict != nil && s.d.Conflict(err):
			s.moved(p.run)
			p.err = veto.ErrConflict
		default:
			p.err = s.failure(err)
		}
		rest := slices.Delete(slices.Clone(batch), at, at+1)
		if len(rest) == 1 {
			batch = rest
			continue
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, q := range rest {
			wg.Go(func() {
				defer refuseOnPanic([]*pending{q})
				t := s.commitPiped(ctx, []*pending{q})
				mu.Lock()
				txed = append(txed, t...)
				mu.Unlock()
			})
		}
		wg.Wait()
		return txed
	}
	return txed
}

// commitTx appends the batch in one transaction.
func (s *Store) commitTx(ctx context.Context, batch []*pending) {
	for len(batch) > 0 {
		_, failed, err := s.commitOnce(ctx, batch)
		if failed >= 0 {
			batch[failed].err = s.failure(err)
			batch = slices.Delete(slices.Clone(batch), failed, failed+1)
			continue
		}
		if err != nil {
			for _, p := range batch {
				p.err = err
			}
			return
		}
		for _, p := range batch {
			p.stored = true
		}
		return
	}
}

// commitOnce appends the batch in one transaction and commits it: the
// rows the appends left, or the batch's index whose append failed with
// err (nothing is committed), or failed < 0 and err, the batch's error.
// The transaction is ended on every way out, a panic's included (begin):
// unwatched (Dialect.LockAtBegin), nothing else would end it, and
// SQLite's write lock with it.
func (s *Store) commitOnce(ctx context.Context, batch []*pending) (rows []*header, failed int, err error) {
	if s.turn != nil {
		if err := s.takeTurn(ctx); err != nil {
			return nil, -1, err
		}
		defer func() { <-s.turn }() // after end, deferred below
	}
	tx, at, end, err := s.begin(ctx)
	if err != nil {
		return nil, -1, unavailable(err)
	}
	finished := false
	defer func() { end(!finished) }()
	rows, failed, err = s.appendAll(ctx, tx, at, batch)
	finished = true
	return rows, failed, err
}

// takeTurn waits for the appends' turn (s.turn) until ctx ends; the
// caller gives it back. A ctx that ended by the time it has it gives it
// back and begins nothing: when both were ready select may take the turn,
// and a BEGIN would then wait up to the busy timeout for another
// process, every append behind it.
func (s *Store) takeTurn(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return unavailable(ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		<-s.turn
		return unavailable(err)
	}
	return nil
}

// appendAll is commitOnce's work within tx. Unmoved since the
// connection's last commit (at), each append builds on the row this
// store's last append to its run left, and reads none; once committed,
// the rows the appends left are kept (Dialect.OwnRows), before the turn
// is given back, for the next turn to build on.
func (s *Store) appendAll(ctx context.Context, tx *sql.Tx, at *dataAt, batch []*pending) (rows []*header, failed int, err error) {
	uctx := s.unwatched(ctx)
	same, err := s.unmoved(uctx, tx, at)
	if err != nil {
		return nil, -1, err
	}
	rows = make([]*header, len(batch))
	for i, p := range batch {
		var kept *header
		if h, ok := s.ownRow(p.run); same && ok {
			kept = &h
		}
		if rows[i], err = s.append(uctx, tx, p.run, p.next, p.events, kept, p.seen); err != nil {
			return nil, i, err
		}
	}
	// An append whose context ended is not committed: unwatched, the
	// transaction would not end with it.
	if err := ctx.Err(); err != nil {
		return nil, -1, s.failure(err)
	}
	if err := tx.Commit(); err != nil {
		return nil, -1, s.failure(err)
	}
	at.ok = true
	now := time.Now()
	for i, p := range batch {
		s.keepCommitted(p.run, *rows[i], now)
	}
	return rows, -1, nil
}

// keepCommitted keeps the row a committed append left for run, as a read
// would find it now (Dialect.OwnRows), before the append's turn is given
// back.
func (s *Store) keepCommitted(run string, h header, now time.Time) {
	if s.d.OwnRows {
		h.exists, h.recorded, h.appended = true, h.damaged, now
		s.keepNewer(run, h)
	}
}

// failure is err as an append's: ErrConflict when another writer won,
// else the state unavailable.
func (s *Store) failure(err error) error {
	if errors.Is(err, veto.ErrConflict) || (s.d.Conflict != nil && s.d.Conflict(err)) {
		return veto.ErrConflict
	}
	s.gone(err)
	return unavailable(err)
}

// Queued is how many appends wait for a commit (for tests and metrics).
func (s *Store) Queued() int {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	return len(s.g.queue)
}
