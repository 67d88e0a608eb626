// Package loaded carries, within one decision, what a store's Load read
// to that decision's Append, so that the append can prove it was computed
// on the state the store still holds. The gate gives each try of a
// decision (and of an append it retries) a note of its own; a store that
// trusts a row it kept instead of reading it (package sqlstore) writes
// the row in the note at the load, and its append compares the row read
// under the write lock with it. A load without a note reads the row.
package loaded

import "context"

// Note is one decision's: V is what its store's load left there.
type Note struct{ V any }

type key struct{}

// With returns ctx with a note of its own.
func With(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, &Note{}) }

// From returns ctx's note, nil when it has none.
func From(ctx context.Context) *Note {
	n, _ := ctx.Value(key{}).(*Note)
	return n
}
