package veto

import (
	"errors"
	"iter"
	"sync"
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
		h = h.appended(o)
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

// appended returns h with o added. It writes only past h.n, where no
// snapshot of h reads, so it must be called on the newest version only.
func (h History) appended(o Observation) History {
	if h.n%chunkSize == 0 {
		h.chunks = append(h.chunks, new(chunk)) // past every snapshot's length
	}
	h.chunks[h.n/chunkSize][h.n%chunkSize] = o
	h.n++
	return h
}

// replaced returns h with observation i replaced, copying the one block
// that holds it so that earlier snapshots keep what they saw.
func (h History) replaced(i int, o Observation) History {
	c := *h.chunks[i/chunkSize]
	c[i%chunkSize] = o
	chunks := make([]*chunk, len(h.chunks), cap(h.chunks))
	copy(chunks, h.chunks)
	chunks[i/chunkSize] = &c
	h.chunks = chunks
	return h
}
