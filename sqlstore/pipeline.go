package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// One trip per decision (PostgreSQL). A decision loads its run's row
// (Load: one query, the row and its last event, the chain proved) and then
// appends. Without a dialect's Pipeline the append is a transaction of a
// dozen statements, each a round trip: begin, the row locked, the row and
// its last event read again, the events and projections written, commit.
//
// With one, the store keeps the row as Load read it (or as its own last
// append left it: a load within ownFor of that append reads nothing, so a
// decision in a run its instance decided in a moment ago is one trip),
// and the append sends every statement in one pipelined batch, which the server runs as one implicit transaction and commits
// once: first a Guard, which locks the run's row and proves it is still
// the row the decision was made on (the next sequence number, the chain
// hash, damaged or not, the last event's bytes still hashing to the chain
// hash, so damage in place is found at the append as at a load), then the
// writes an append makes, computed from the kept row. A row that moved
// (another instance appended, the run was marked damaged, its last event
// changed in place) fails the guard and nothing is stored: ErrConflict,
// and the gate decides again on a fresh load. A batch that would have to
// read what it writes (a call already observed, a suspended call to
// clear) is not pipelined: the guard says so, or the store sees it, and
// the append runs as a transaction.

// Guard is what a pipelined append proves before it writes: the run's row
// is the one its events were computed from.
type Guard struct {
	Run     string
	Next    uint64 // the run's next sequence number (1: a run not stored yet)
	Last    string // the chain hash of its last event
	Damaged bool   // the run damaged, as its row records or its last event shows
	// Calls are the calls the batch observes for the first time: the
	// guard refuses (ErrNotPipelined) when one was observed before.
	Calls []string
}

// Stmt is one statement of a pipelined batch, its markers "?".
type Stmt struct {
	Query string
	Args  []any
}

// ErrNotPipelined is a Pipeline's answer when the batch cannot be run
// without reading first: nothing was stored, and the append runs as a
// transaction.
var ErrNotPipelined = errors.New("sqlstore: the append cannot be pipelined")

// maxHeads bounds the rows a store keeps.
const maxHeads = 4096

// keep holds run's row for the next append, when the dialect pipelines.
func (s *Store) keep(run string, h header) {
	if s.d.Pipeline == nil && !s.d.OwnRows {
		return
	}
	s.mu.Lock()
	if s.heads == nil || len(s.heads) >= maxHeads {
		s.heads = map[string]header{}
	}
	s.heads[run] = h
	s.mu.Unlock()
}

// keepNewer is keep, unless the row kept for run is a later one: two
// appends to one run committed one after the other may reach here in
// either order.
func (s *Store) keepNewer(run string, h header) {
	s.mu.Lock()
	if k, ok := s.heads[run]; ok && k.next > h.next {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.keep(run, h)
}

// ownFor is how long a load trusts the row its store's own append left
// without reading it: the decision made on it is recorded only if the
// append's guard proves it still the row, and what else reads a load (the
// page) sees another instance's append, or damage in place, within it.
const ownFor = time.Second

// sharedFor is how long a run whose row moved under a pipelined append
// (another instance appends to it too) is read by every load: trusting
// the store's own row would make each decision in it a refused batch
// first.
const sharedFor = 10 * time.Second

// own returns the row this store's own pipelined append left for run,
// under ownFor ago, when no other writer moved the run within sharedFor;
// a load then reads nothing.
func (s *Store) own(run string) (header, bool) {
	if s.d.Pipeline == nil && !s.d.OwnRows {
		return header{}, false
	}
	now := time.Now()
	s.mu.Lock()
	h, ok := s.heads[run]
	moved, shared := s.shared[run]
	s.mu.Unlock()
	if !ok || h.appended.IsZero() || now.Sub(h.appended) >= ownFor || (shared && now.Sub(moved) < sharedFor) {
		return header{}, false
	}
	return h, true
}

// movedWithin reports whether another writer moved run's row under one
// of this store's appends within d. Within sharedFor, the run's appends
// are committed alone, never in a batch (group.go), where each one
// refused would send the rest of its batch again; within racingFor, each
// decision in the run holds its row from its load (rowhold.go).
func (s *Store) movedWithin(run string, d time.Duration) bool {
	s.mu.Lock()
	moved, ok := s.shared[run]
	s.mu.Unlock()
	return ok && time.Since(moved) < d
}

// racingFor is how long after another writer last moved a run's row
// under one of this store's appends each decision in the run holds the
// row from its load (rowhold.go): instances deciding in one run at once,
// whose tries, unheld, would lose to each other again and again.
const racingFor = time.Second

// moved notes that run's row moved under a pipelined append.
func (s *Store) moved(run string) {
	s.mu.Lock()
	if s.shared == nil || len(s.shared) >= maxHeads {
		s.shared = map[string]time.Time{}
	}
	s.shared[run] = time.Now()
	s.mu.Unlock()
}

// take removes and returns the row kept for run.
func (s *Store) take(run string) (header, bool) {
	if s.d.Pipeline == nil && !s.d.OwnRows {
		return header{}, false
	}
	s.mu.Lock()
	h, ok := s.heads[run]
	delete(s.heads, run)
	s.mu.Unlock()
	return h, ok
}

// forget drops the row kept for run: the store changed it outside an
// append (marked damaged, pruned).
func (s *Store) forget(run string) { s.take(run) }

// pipeline collects what an append would execute, instead of executing
// it (see exec).
type pipeline struct{ stmts []Stmt }

type pipelineKey struct{}

// pipelined is the batch being collected in ctx; nil when none.
func pipelined(ctx context.Context) *pipeline {
	p, _ := ctx.Value(pipelineKey{}).(*pipeline)
	return p
}

// pipelinable reports whether events can be appended without a read: no
// event whose projection depends on rows the batch cannot see (a
// suspension, the calls suspended that a decision clears), no call
// observed twice in the batch. It returns the calls the batch observes.
func pipelinable(h header, events []veto.Event) ([]string, bool) {
	if h.nSuspended != 0 {
		return nil, false
	}
	var calls []string
	for _, e := range events {
		switch e.Kind {
		case veto.EventRunStarted, veto.EventAllowed, veto.EventDenied, veto.EventToolDenied, veto.EventProbe:
		default:
			return nil, false
		}
		if _, ok := eventlog.ObservedOutcome(e); ok {
			for _, c := range calls {
				if c == e.CallID {
					return nil, false
				}
			}
			calls = append(calls, e.CallID)
		}
	}
	return calls, true
}
