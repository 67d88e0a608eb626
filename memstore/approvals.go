package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// approvals answers veto.Approvals from the run's projection under the
// store's lock; a run with no events yet has none, and what a person is
// shown is held by the store.
type approvals struct {
	s   *Store
	run string
}

func (a *approvals) read(fn func(p *eventlog.Projection)) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.s.err != nil {
		return a.s.err
	}
	if r := a.s.runs[a.run]; r != nil {
		fn(r.proj)
	}
	return nil
}

// Grant implements veto.Approvals.
func (a *approvals) Grant(_ context.Context, tool, hash string, actor veto.Actor, now time.Time) (seq uint64, err error) {
	err = a.read(func(p *eventlog.Projection) { seq = p.Grant(tool, hash, actor, now) })
	return seq, err
}

// Refusal implements veto.Approvals.
func (a *approvals) Refusal(_ context.Context, callID, tool, hash string) (seq uint64, err error) {
	err = a.read(func(p *eventlog.Projection) { seq = p.Refusal(callID, tool, hash) })
	return seq, err
}

// Asked implements veto.Approvals.
func (a *approvals) Asked(_ context.Context, callID string) (q veto.Question, ok bool, err error) {
	err = a.read(func(p *eventlog.Projection) { q, ok = p.Asked(callID) })
	return q, ok, err
}

// AskedAbout implements veto.Approvals.
func (a *approvals) AskedAbout(_ context.Context, tool, hash string) (q veto.Question, ok bool, err error) {
	err = a.read(func(p *eventlog.Projection) { q, ok = p.AskedAbout(tool, hash) })
	return q, ok, err
}

// Suspended implements veto.Approvals.
func (a *approvals) Suspended(_ context.Context, callID string) (ok bool, err error) {
	err = a.read(func(p *eventlog.Projection) { ok = p.Suspended(callID) })
	return ok, err
}

type shownKey struct{ run, call string }

// shownRow is a Shown in its stored form, with when it expires.
type shownRow struct {
	b       []byte
	expires time.Time
}

// Keep implements veto.Approvals: the store holds at most veto.MaxShown,
// dropping those expired at s.Asked, then the oldest.
func (a *approvals) Keep(_ context.Context, sh veto.Shown) error {
	b, err := veto.EncodeShown(&sh)
	if err != nil {
		return err
	}
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.shown == nil {
		s.shown = map[shownKey]shownRow{}
	}
	for k, r := range s.shown {
		if !sh.Asked.Before(r.expires) {
			delete(s.shown, k)
		}
	}
	for len(s.shown) >= veto.MaxShown {
		var oldest shownKey
		first := true
		for k, r := range s.shown {
			if first || r.expires.Before(s.shown[oldest].expires) {
				oldest, first = k, false
			}
		}
		delete(s.shown, oldest)
	}
	s.shown[shownKey{sh.Run, sh.CallID}] = shownRow{b: b, expires: sh.Expires}
	return nil
}

// Shown implements veto.Approvals.
func (a *approvals) Shown(_ context.Context, callID string, now time.Time) (veto.Shown, bool, error) {
	s := a.s
	s.mu.Lock()
	r, ok := s.shown[shownKey{a.run, callID}]
	err := s.err
	s.mu.Unlock()
	if err != nil || !ok || !now.Before(r.expires) {
		return veto.Shown{}, false, err
	}
	sh, err := veto.DecodeShown(r.b)
	return sh, err == nil, err
}

// Forget implements veto.Approvals.
func (a *approvals) Forget(_ context.Context, callID string) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	k := shownKey{a.run, callID}
	if r, ok := s.shown[k]; ok {
		clear(r.b)
		delete(s.shown, k)
	}
	return nil
}

// Waiting implements veto.Log.
func (s *Store) Waiting(_ context.Context, q veto.WaitQuery) ([]veto.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []veto.Question
	for name, r := range s.runs {
		if q.Run == "" || q.Run == name {
			out = append(out, r.proj.Waiting(q.Since)...)
		}
	}
	eventlog.SortQuestions(out)
	return slices.Clip(out), nil
}
