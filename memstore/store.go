// Package memstore is the in-memory veto.Store. It keeps every event in
// its stored (encoded) form and rebuilds projections from those bytes, so
// it exercises the same codec a durable store does.
package memstore

import (
	"context"
	"sync"

	"github.com/vetohq/veto"
)

// Store is an in-memory veto.Store, safe for concurrent use.
type Store struct {
	mu   sync.Mutex
	runs map[string]*run
	err  error
}

type run struct {
	raw  [][]byte
	proj *veto.Projection
}

var _ veto.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store { return &Store{runs: map[string]*run{}} }

func (s *Store) get(name string) *run {
	r := s.runs[name]
	if r == nil {
		r = &run{proj: veto.NewProjection(name)}
		s.runs[name] = r
	}
	return r
}

// Load implements veto.Store.
func (s *Store) Load(_ context.Context, name string) (*veto.Projection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if r := s.runs[name]; r != nil {
		return r.proj.Clone(), nil
	}
	return veto.NewProjection(name), nil
}

// Append implements veto.Store.
func (s *Store) Append(_ context.Context, name string, next uint64, events []veto.Event) error {
	raws := make([][]byte, len(events))
	for i, e := range events {
		b, err := veto.EncodeEvent(e)
		if err != nil {
			return err
		}
		raws[i] = b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	r := s.get(name)
	if r.proj.Next != next {
		return veto.ErrConflict
	}
	for _, b := range raws {
		s.applyRaw(r, b)
	}
	return nil
}

// AppendRaw stores bytes as the run's next event without checking them, as
// a damaged or older file would hold them. It is for tests of damage.
func (s *Store) AppendRaw(name string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyRaw(s.get(name), append([]byte(nil), b...))
}

func (s *Store) applyRaw(r *run, b []byte) {
	r.raw = append(r.raw, b)
	e, err := veto.DecodeEvent(b)
	if err != nil {
		r.proj.Damage()
		r.proj.Next++ // the bytes still hold a place in the log
		return
	}
	r.proj.Apply(e)
}

// Events implements veto.Store. Events that cannot be decoded are skipped.
func (s *Store) Events(_ context.Context, name string, after uint64) ([]veto.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []veto.Event
	if r := s.runs[name]; r != nil {
		for _, b := range r.raw {
			if e, err := veto.DecodeEvent(b); err == nil && e.Seq > after {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// Raw returns the stored bytes of every event of a run, for tests that
// look for what must never be stored.
func (s *Store) Raw(name string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[name]; r != nil {
		return append([][]byte(nil), r.raw...)
	}
	return nil
}

// Runs returns the names of the runs with events.
func (s *Store) Runs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.runs {
		out = append(out, k)
	}
	return out
}

// Fail makes every later call return err (nil heals), as an unreachable
// store would.
func (s *Store) Fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}
