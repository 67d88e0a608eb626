// Package memstore is the in-memory veto.Store, for tests and for
// one-shot commands. It keeps each event in its stored form, the bytes a
// durable store would hold, and folds events into a projection as they are
// appended.
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
	log  [][]byte
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
func (s *Store) Load(_ context.Context, name string) (veto.RunState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return veto.RunState{}, s.err
	}
	if r := s.runs[name]; r != nil {
		st := r.proj.State()
		st.Knowledge = knowledge{s, r}
		return st, nil
	}
	return veto.RunState{Run: name, Next: 1}, nil
}

// knowledge answers from the run's projection under the store's lock.
type knowledge struct {
	s *Store
	r *run
}

// Files implements veto.KnowledgeLister.
func (k knowledge) Files(_ context.Context) ([]string, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if k.s.err != nil {
		return nil, k.s.err
	}
	return k.r.proj.KnownFiles(), nil
}

func (k knowledge) File(_ context.Context, path string) (veto.FileFact, bool, error) {
	k.s.mu.Lock()
	defer k.s.mu.Unlock()
	if k.s.err != nil {
		return veto.FileFact{}, false, k.s.err
	}
	f, ok := k.r.proj.KnownFile(path)
	return f, ok, nil
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
	if r.proj.Next() != next {
		return veto.ErrConflict
	}
	r.log = append(r.log, raws...)
	for _, e := range events {
		r.proj.Apply(e)
	}
	return nil
}

// AppendRaw stores bytes as the run's next event without checking them, as
// a damaged or older file would hold them. It is for tests of damage.
func (s *Store) AppendRaw(name string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.get(name)
	b = append([]byte(nil), b...)
	r.log = append(r.log, b)
	e, err := veto.DecodeEvent(b)
	if err != nil {
		r.proj.Skip()
		return
	}
	r.proj.Apply(e)
}

// Events implements veto.Store. Stored bytes that cannot be decoded are
// skipped.
func (s *Store) Events(_ context.Context, name string, after uint64) ([]veto.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []veto.Event
	if r := s.runs[name]; r != nil {
		for _, b := range r.log {
			e, err := veto.DecodeEvent(b)
			if err != nil {
				continue
			}
			if e.Seq > after {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// Raw returns the stored form of every event of a run, for tests that
// look for what must never be stored.
func (s *Store) Raw(name string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[name]; r != nil {
		return append([][]byte(nil), r.log...)
	}
	return nil
}

// Fail makes every later call return err (nil heals), as an unreachable
// store would.
func (s *Store) Fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}
