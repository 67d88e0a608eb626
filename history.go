package veto

import (
	"errors"
	"iter"
	"sync"
	"sync/atomic"
)

// chunkSize is how many observations share one block of a History's
// storage. A snapshot costs one pointer per block; changing an outcome
// copies one block.
const chunkSize = 64

type chunk [chunkSize]Observation

// History is a run's observations in execution order, and whether they are
// known to be all of them. It is an immutable value: snapshots share
// storage, so taking one costs next to nothing however long the run.
type History struct {
	chunks   []*chunk
	n        int
	complete bool
	lazy     *lazyObs // set: the observations are loaded on first read
	// end is how many observations the storage shared by this history's
	// versions holds: a version of that length may append in place, any
	// other copies what it shares first (see Appended).
	end *atomic.Int64
}

// lazyObs loads a history's observations once, on first read.
type lazyObs struct {
	once sync.Once
	load func() ([]Observation, error)
	h    History
	err  error
}

// ErrHistoryUnavailable is the panic value of reading a lazily loaded
// history whose load failed; the gate turns it into rule_failed for the
// rule that read it.
var ErrHistoryUnavailable = errors.New("veto: the run's history could not be loaded")

// LazyHistory returns a history of n observations that load reads the
// first time any is read: a durable store's decision costs no more for a
// long run than for a short one unless a rule reads the observations.
func LazyHistory(n int, complete bool, load func() ([]Observation, error)) History {
	return History{n: n, complete: complete, lazy: &lazyObs{load: load}}
}

func (h History) loaded() History {
	if h.lazy == nil {
		return h
	}
	l := h.lazy
	l.once.Do(func() {
		obs, err := l.load()
		if err != nil || len(obs) < h.n {
			l.err = ErrHistoryUnavailable
			return
		}
		l.h = NewHistory(obs[:h.n], h.complete)
	})
	if l.err != nil {
		panic(l.err)
	}
	return l.h
}

// NewHistory returns a history of a copy of obs.
func NewHistory(obs []Observation, complete bool) History {
	h := History{complete: complete}
	for _, o := range obs {
		h = h.Appended(o)
	}
	return h
}

// Len returns the number of observations.
func (h History) Len() int { return h.n }

// Complete reports whether the history is proven to hold every call of the
// run. Appending to an incomplete history never completes it.
func (h History) Complete() bool { return h.complete }

// At returns the i-th observation, in execution order.
func (h History) At(i int) Observation {
	if i < 0 || i >= h.n {
		panic("veto: History.At index out of range")
	}
	h = h.loaded()
	return h.chunks[i/chunkSize][i%chunkSize]
}

// All yields the observations in execution order.
func (h History) All() iter.Seq2[int, Observation] {
	if h.n > 0 {
		h = h.loaded()
	}
	return func(yield func(int, Observation) bool) {
		for i := 0; i < h.n; i++ {
			if !yield(i, h.chunks[i/chunkSize][i%chunkSize]) {
				return
			}
		}
	}
}

// Observations returns a copy of the observations.
func (h History) Observations() []Observation {
	out := make([]Observation, 0, h.n)
	for _, o := range h.All() {
		out = append(out, o)
	}
	return out
}

// Appended returns h with o added at the end; h and every other version
// of it are unchanged (a lazily loaded h is loaded first, and panics as At
// does when it cannot be). Appending to the newest version writes in place
// (one block of storage per 64 observations); appending to an older one
// copies the block it would write into first. Appending to an incomplete
// history never completes it.
func (h History) Appended(o Observation) History {
	if h.lazy != nil {
		complete := h.complete
		h = h.loaded()
		h.complete = complete
	}
	if h.end == nil || !h.end.CompareAndSwap(int64(h.n), int64(h.n)+1) {
		// Someone appended past h.n already, or h owns no storage yet:
		// copy what h shares, then own it alone.
		chunks := make([]*chunk, len(h.chunks), len(h.chunks)+1)
		copy(chunks, h.chunks)
		if h.n%chunkSize != 0 {
			c := *chunks[len(chunks)-1]
			chunks[len(chunks)-1] = &c
		}
		h.chunks, h.end = chunks, new(atomic.Int64)
		h.end.Store(int64(h.n) + 1)
	}
	// Slot h.n is h's alone: no other version reaches it.
	if h.n%chunkSize == 0 {
		h.chunks = append(h.chunks, new(chunk))
	}
	h.chunks[h.n/chunkSize][h.n%chunkSize] = o
	h.n++
	return h
}

// Replaced returns h with observation i replaced by o, copying the one
// block that holds it so that other versions keep what they saw.
func (h History) Replaced(i int, o Observation) History {
	if i < 0 || i >= h.n {
		panic("veto: History.Replaced index out of range")
	}
	if h.lazy != nil {
		complete := h.complete
		h = h.loaded()
		h.complete = complete
	}
	c := *h.chunks[i/chunkSize]
	c[i%chunkSize] = o
	chunks := make([]*chunk, len(h.chunks), cap(h.chunks))
	copy(chunks, h.chunks)
	chunks[i/chunkSize] = &c
	h.chunks = chunks
	return h
}

// AsIncomplete returns h marked incomplete: the same observations, no
// longer proven to be all of the run's. There is no way back.
func (h History) AsIncomplete() History {
	if h.lazy != nil {
		h = h.loaded()
	}
	h.complete = false
	return h
}
