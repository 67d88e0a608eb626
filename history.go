package veto

import "iter"

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
	return h.chunks[i/chunkSize][i%chunkSize]
}

// All yields the observations in execution order.
func (h History) All() iter.Seq2[int, Observation] {
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
		h.chunks = append(h.chunks[:h.n/chunkSize:h.n/chunkSize], new(chunk))
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
