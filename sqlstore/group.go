package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
)

// Group commit: concurrent appends of different runs share one
// transaction and one commit (PostgreSQL: one fdatasync; SQLite: one turn
// of the database's write lock and one write of the WAL).
//
// An append is queued. When fewer than Writers batches are being written
// its caller writes one itself at once (a lone append waits for nothing);
// otherwise the caller that finishes a batch hands the next one to a
// queued append's caller, so that no caller writes more than one batch
// beyond its own. A batch takes the queued appends in their order, at most
// one of each run (a run's appends stay in the order they came, each
// written against what the one before it committed) and at most MaxBatch.
// Once batches of more than one append have been seen, a batch waits up
// to MaxWait for the queue to fill before it is written.
//
// In a batch of more than one, each append runs inside a savepoint: one
// that fails (the run's next number moved: ErrConflict; a statement
// refused) is rolled back to it and fails alone. A failure that the
// savepoint cannot contain (the transaction or the connection is lost, a
// rollback to the savepoint fails) and a failed commit fail every append
// of the batch: each gets an error, none succeeds. The runs are locked in
// the order of their names, so that two batches of instances sharing a
// PostgreSQL database never wait for each other in a cycle.

// GroupOptions bound group commit.
type GroupOptions struct {
	// MaxBatch is the most appends one transaction holds; 1 commits each
	// alone. Zero means DefaultGroup's.
	MaxBatch int
	// MaxWait is how long a batch waits for more appends, once batches of
	// more than one were seen; zero waits for none.
	MaxWait time.Duration
	// Writers is how many batches are written at once: SQLite has one
	// writer at a time, PostgreSQL as many as connections. Zero means one.
	Writers int
}

// DefaultGroup is group commit's bounds unless a dialect or SetGroup
// says otherwise.
var DefaultGroup = GroupOptions{MaxBatch: 64, Writers: 1}

// SQLiteGroup is SQLite's bounds: one batch at a time (SQLite has one
// writer), waiting up to 500µs to fill once appends were seen to come
// together.
var SQLiteGroup = GroupOptions{MaxBatch: 64, MaxWait: 500 * time.Microsecond, Writers: 1}

// PostgresGroup is PostgreSQL's: as many batches at once as the pool has
// connections (postgres.Open's 8), no wait. A batch's statements take a
// round trip each on its one connection, so batches of many appends
// would only queue there; appends batch when more wait than connections
// can take.
var PostgresGroup = GroupOptions{MaxBatch: 64, Writers: 8}

// GroupOverride, when set, is every store's bounds over its dialect's
// (its zero fields: DefaultGroup's), for benchmarks that compare bounds.
var GroupOverride *GroupOptions

// SetGroup sets the store's group commit bounds; call it before the
// store is used.
func (s *Store) SetGroup(o GroupOptions) {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultGroup.MaxBatch
	}
	if o.Writers <= 0 {
		o.Writers = 1
	}
	s.g.mu.Lock()
	s.g.o = o
	s.g.mu.Unlock()
}

// groupOptions is the dialect's bounds, or GroupOverride's.
func (d *Dialect) groupOptions() GroupOptions {
	o := DefaultGroup
	if d.Group != nil {
		o = *d.Group
	}
	if GroupOverride != nil {
		o = *GroupOverride
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultGroup.MaxBatch
	}
	if o.Writers <= 0 {
		o.Writers = DefaultGroup.Writers
	}
	return o
}

// Batching is how many appends wait for a batch to take them and how
// many batches are being taken or written, for tests.
func (s *Store) Batching() (queued, writing int) {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	return len(s.g.queue), s.g.writers
}

// group is a store's queue of appends.
type group struct {
	mu      sync.Mutex
	o       GroupOptions
	queue   []*pending
	writers int             // batches being taken or written
	busy    map[string]bool // runs in a batch being written
	grouped bool            // the last batch held more than one append
	arrived chan struct{}   // a signal to a waiting batch: an append came
}

// pending is an append waiting for its batch.
type pending struct {
	ctx      context.Context
	run      string
	next     uint64
	events   []veto.Event
	res      chan result // a hand-off and then the result: room for both
	signaled bool        // a hand-off was sent and not yet taken up
}

type result struct {
	err  error
	lead bool // no result yet: the caller is to write the next batch
}

// Append implements veto.Store: the run's next sequence number is
// checked, the events chained and stored and the projections updated in
// one transaction, which a crash leaves whole or not at all; concurrent
// appends of other runs may share it (see GroupOptions).
func (s *Store) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	g := &s.g
	p := &pending{ctx: ctx, run: run, next: next, events: events, res: make(chan result, 2)}
	g.mu.Lock()
	if g.o.MaxBatch == 0 {
		g.o = s.d.groupOptions()
	}
	if g.arrived == nil {
		g.arrived = make(chan struct{}, 1)
	}
	g.queue = append(g.queue, p)
	lead := g.writers < max(g.o.Writers, 1)
	if lead {
		g.writers++
	}
	g.mu.Unlock()
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	for {
		if lead {
			s.lead(p)
		}
		r := <-p.res
		if !r.lead {
			return r.err
		}
		lead = true
	}
}

// lead takes a batch and writes it, holding one of the writers' places,
// and hands the place on to a queued append's caller, or gives it up.
func (s *Store) lead(self *pending) {
	g := &s.g
	batch := s.take(self)
	if len(batch) == 0 {
		return
	}
	s.write(batch)
	g.mu.Lock()
	for _, p := range batch {
		delete(g.busy, p.run)
	}
	g.grouped = len(batch) > 1
	var next *pending
	for _, p := range g.queue {
		if !p.signaled {
			next = p
			break
		}
	}
	if next == nil {
		g.writers--
	} else {
		next.signaled = true
		next.res <- result{lead: true}
	}
	g.mu.Unlock()
}

// take removes the next batch from the queue and marks its runs busy; an
// empty batch gives the writer's place up. An append whose context ended
// while it was queued fails here, unwritten.
func (s *Store) take(self *pending) []*pending {
	g := &s.g
	g.mu.Lock()
	defer g.mu.Unlock()
	self.signaled = false
	if g.grouped && g.o.MaxWait > 0 {
		deadline := time.Now().Add(g.o.MaxWait)
		for g.ready() < g.o.MaxBatch {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			g.mu.Unlock()
			t := time.NewTimer(left)
			select {
			case <-g.arrived:
			case <-t.C:
			}
			t.Stop()
			g.mu.Lock()
		}
	}
	var batch []*pending
	in := map[string]bool{}
	rest := g.queue[:0]
	for _, p := range g.queue {
		switch {
		case len(batch) >= g.o.MaxBatch || g.busy[p.run] || in[p.run]:
			rest = append(rest, p)
		case p.ctx.Err() != nil:
			p.res <- result{err: unavailable(p.ctx.Err())}
		default:
			in[p.run] = true
			batch = append(batch, p)
		}
	}
	clear(g.queue[len(rest):])
	g.queue = rest
	if len(batch) == 0 {
		g.writers--
		return nil
	}
	if g.busy == nil {
		g.busy = map[string]bool{}
	}
	for _, p := range batch {
		g.busy[p.run] = true
	}
	return batch
}

// ready is how many queued appends the next batch could take.
func (g *group) ready() int {
	n := 0
	in := map[string]bool{}
	for _, p := range g.queue {
		if !g.busy[p.run] && !in[p.run] {
			in[p.run] = true
			n++
		}
	}
	return n
}

// batchContext is the context a batch is written in: no one append's
// cancellation ends the others' transaction; it ends at the latest of
// their deadlines (none when one has none).
func batchContext(batch []*pending) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var last time.Time
	for _, p := range batch {
		d, ok := p.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(ctx, last)
}

// write writes a batch in one transaction and gives each append its
// result.
func (s *Store) write(batch []*pending) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	if len(batch) == 1 {
		// A lone append on a dialect that pipelines is one trip.
		p := batch[0]
		if done, err := s.appendPipelined(ctx, p.run, p.next, p.events); done {
			p.res <- result{err: err}
			return
		}
	}
	slices.SortFunc(batch, func(a, b *pending) int { return strings.Compare(a.run, b.run) })
	errs := s.commit(ctx, batch)
	for i, p := range batch {
		p.res <- result{err: errs[i]}
	}
	s.prepareWanted(ctx) // after the transaction ends
}

// commit writes the batch in one transaction and returns each append's
// error.
func (s *Store) commit(ctx context.Context, batch []*pending) (errs []error) {
	errs = make([]error, len(batch))
	all := func(err error) []error {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return all(unavailable(err))
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return all(unavailable(err))
	}
	defer func() {
		// A panic while writing fails the whole batch, and rolls it back
		// before the connection is given up (closing it waits for its
		// transaction to end): the batch's other callers are not left
		// waiting, nor the store without a writer.
		if r := recover(); r != nil {
			s.abort(conn, tx)
			for i := range errs {
				errs[i] = unavailable(errPanicked)
			}
		}
	}()
	written := 0
	for i, p := range batch {
		if len(batch) == 1 {
			errs[i] = s.append(ctx, tx, p.run, p.next, p.events, nil)
			if errs[i] == nil {
				written++
			}
			break
		}
		mark := `SAVEPOINT veto_append`
		if i > 0 {
			mark = `RELEASE SAVEPOINT veto_append; SAVEPOINT veto_append`
		}
		if _, err := tx.ExecContext(ctx, mark); err != nil {
			s.abort(conn, tx)
			return all(unavailable(err))
		}
		if errs[i] = s.append(ctx, tx, p.run, p.next, p.events, nil); errs[i] == nil {
			written++
			continue
		}
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT veto_append`); err != nil {
			// The transaction is not what the savepoint left: nothing in
			// it can be trusted to commit.
			s.abort(conn, tx)
			errs[i] = s.failed(errs[i])
			return all(unavailable(err))
		}
	}
	for i := range errs {
		errs[i] = s.failed(errs[i])
	}
	if written == 0 {
		s.abort(conn, tx)
		return errs
	}
	if err := tx.Commit(); err != nil {
		discard(conn)
		if s.d.Conflict != nil && s.d.Conflict(err) {
			return all(veto.ErrConflict)
		}
		return all(unavailable(err))
	}
	return errs
}

var errPanicked = errors.New("the store failed while writing the batch")

// failed is an append's error as Append returns it.
func (s *Store) failed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, veto.ErrConflict) || (s.d.Conflict != nil && s.d.Conflict(err)):
		return veto.ErrConflict
	case errors.Is(err, veto.ErrStateUnavailable):
		return err
	}
	return unavailable(err)
}

// abort rolls tx back; a connection whose rollback fails may still hold
// the transaction open, and is discarded.
func (s *Store) abort(conn *sql.Conn, tx *sql.Tx) {
	if err := tx.Rollback(); err != nil {
		discard(conn)
	}
}

// discard closes conn's connection rather than give it back to the pool:
// a commit that failed may leave its transaction open on it (SQLite keeps
// a transaction whose deferred constraint failed at COMMIT).
func discard(conn *sql.Conn) {
	conn.Raw(func(any) error { return driver.ErrBadConn })
}
