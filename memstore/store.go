// Package memstore is the in-memory veto.Store, for tests and for
// one-shot commands. It keeps each event in its stored form, the bytes a
// durable store would hold, and folds events into a projection as they are
// appended.
package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// Store is an in-memory veto.Store, safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	runs  map[string]*run
	shown map[shownKey]shownRow // what a person is shown of a question, apart from the log
	err   error
}

type run struct {
	s          *Store
	log        [][]byte
	proj       *eventlog.Projection
	last       string // chain hash of the last event
	anchorSeq  uint64 // the first event's sequence number after pruning (0: 1)
	anchorPrev string
}

var (
	_ veto.Store     = (*Store)(nil)
	_ veto.Log       = (*Store)(nil)
	_ veto.Knowledge = (*knowledge)(nil)
	_ veto.Approvals = (*approvals)(nil)
	_ veto.Decisions = (*Store)(nil)
)

// New returns an empty store.
func New() *Store { return &Store{runs: map[string]*run{}} }

func (s *Store) get(name string) *run {
	r := s.runs[name]
	if r == nil {
		r = &run{s: s, proj: eventlog.NewProjection(name)}
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
		st.Knowledge = (*knowledge)(r)
		st.Tally = (*tallied)(r)
		st.Approvals = &approvals{s, name}
		return st, nil
	}
	return veto.RunState{Run: name, Next: 1, Approvals: &approvals{s, name}}, nil
}

// read runs fn on the run's projection under the store's lock.
func (r *run) read(fn func(p *eventlog.Projection)) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.err != nil {
		return r.s.err
	}
	fn(r.proj)
	return nil
}

// knowledge answers from the run's projection under the store's lock.
type knowledge run

func (k *knowledge) read(fn func(p *eventlog.Projection)) error { return (*run)(k).read(fn) }

// Egress implements veto.Knowledge.
func (k *knowledge) Egress(_ context.Context) (hosts []string, err error) {
	err = k.read(func(p *eventlog.Projection) { hosts = p.Egress() })
	return hosts, err
}

// Files implements veto.Knowledge.
func (k *knowledge) Files(_ context.Context) (files []string, err error) {
	err = k.read(func(p *eventlog.Projection) { files = p.KnownFiles() })
	return files, err
}

func (k *knowledge) File(_ context.Context, path string) (f veto.FileFact, ok bool, err error) {
	err = k.read(func(p *eventlog.Projection) { f, ok = p.KnownFile(path) })
	return f, ok, err
}

// tallied answers veto.Tally from the run's projection under the store's
// lock.
type tallied run

func (t *tallied) read(fn func(p *eventlog.Projection)) error { return (*run)(t).read(fn) }

// Calls implements veto.Tally.
func (t *tallied) Calls(context.Context) (m map[string]int, err error) {
	err = t.read(func(p *eventlog.Projection) { m = p.TallyCalls() })
	return m, err
}

// Failed implements veto.Tally.
func (t *tallied) Failed(_ context.Context, target veto.Target) (m map[string]int, err error) {
	err = t.read(func(p *eventlog.Projection) { m = p.TallyFailed(target) })
	return m, err
}

// Files implements veto.Tally.
func (t *tallied) Files(context.Context) (out []veto.Observation, err error) {
	err = t.read(func(p *eventlog.Projection) { out = p.TallyFiles() })
	return out, err
}

// Append implements veto.Store.
func (s *Store) Append(_ context.Context, name string, next uint64, events []veto.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	r := s.get(name)
	if r.proj.Next() != next {
		return veto.ErrConflict
	}
	n := len(r.log)
	last := r.last
	for _, e := range events {
		e.Prev = last
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			r.log = r.log[:n] // nothing of a batch that cannot be stored
			return err
		}
		r.log, last = append(r.log, b), eventlog.ChainHash(b)
	}
	r.last = last
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
	r.last = eventlog.ChainHash(b)
	e, err := eventlog.DecodeEvent(b)
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
			e, err := eventlog.DecodeEvent(b)
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

// Runs implements veto.Log.
func (s *Store) Runs(_ context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	out := make([]string, 0, len(s.runs))
	for k, r := range s.runs {
		if len(r.log) > 0 || r.proj.Next() > 1 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

type logged struct {
	run string
	e   veto.Event
	b   []byte
}

// Scan implements veto.Log.
func (s *Store) Scan(_ context.Context, q veto.LogQuery, fn func(run string, seq uint64, stored []byte) error) error {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	var all []logged
	for name, r := range s.runs {
		if q.Run != "" && name != q.Run {
			continue
		}
		for _, b := range r.log {
			e, err := eventlog.DecodeEvent(b)
			if err != nil {
				continue
			}
			all = append(all, logged{name, e, b})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b logged) int {
		if c := a.e.Time.Compare(b.e.Time); c != 0 {
			return c
		}
		if c := strings.Compare(a.run, b.run); c != 0 {
			return c
		}
		return int(a.e.Seq) - int(b.e.Seq)
	})
	for _, l := range all {
		t := l.e.Time.UnixNano()
		if !q.Since.IsZero() && l.e.Time.Before(q.Since) {
			continue
		}
		if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, l.e.Kind) {
			continue
		}
		if q.AfterTime != 0 || q.AfterRun != "" {
			after := t > q.AfterTime || t == q.AfterTime && (l.run > q.AfterRun || l.run == q.AfterRun && l.e.Seq > q.AfterSeq)
			if !after {
				continue
			}
		}
		if err := fn(l.run, l.e.Seq, l.b); err != nil {
			return err
		}
	}
	return nil
}

// Chain implements veto.Log.
func (s *Store) Chain(_ context.Context, name string) (uint64, string, [][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, "", nil, s.err
	}
	r := s.runs[name]
	if r == nil {
		return 1, "", nil, nil
	}
	first := r.anchorSeq
	if first == 0 {
		first = 1
	}
	return first, r.anchorPrev, append([][]byte(nil), r.log...), nil
}

// Decided implements veto.Decisions: the call's first event, when it is
// a decision.
func (s *Store) Decided(_ context.Context, name, callID string) (veto.Event, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return veto.Event{}, false, s.err
	}
	r := s.runs[name]
	if r == nil {
		return veto.Event{}, false, nil
	}
	seq, ok := r.proj.CallSeq(callID)
	first := max(r.anchorSeq, 1)
	if !ok || seq < first || seq-first >= uint64(len(r.log)) {
		return veto.Event{}, false, nil // none, or pruned away
	}
	e, err := eventlog.DecodeEvent(r.log[seq-first])
	if err != nil || e.CallID != callID ||
		(e.Kind != veto.EventAllowed && e.Kind != veto.EventDenied && e.Kind != veto.EventToolDenied) {
		return veto.Event{}, false, nil
	}
	return e, true, nil
}

// Prune implements veto.Log.
func (s *Store) Prune(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	total := 0
	for _, r := range s.runs {
		keep := 0
		for keep < len(r.log) {
			e, err := eventlog.DecodeEvent(r.log[keep])
			if err != nil || !e.Time.Before(before) {
				break
			}
			keep++
		}
		if keep == 0 {
			continue
		}
		last := r.log[keep-1]
		e, _ := eventlog.DecodeEvent(last)
		r.anchorSeq, r.anchorPrev = e.Seq+1, eventlog.ChainHash(last)
		r.log = append([][]byte(nil), r.log[keep:]...)
		total += keep
	}
	return total, nil
}
