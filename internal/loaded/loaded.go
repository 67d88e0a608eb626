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
type Note struct {
	V any
	// Hold asks the load to hold the run's row until the append: locked,
	// so that no other writer can move it in between and this try cannot
	// lose to one (Holding). A store that cannot lock a run's row reads
	// it as it would without.
	Hold    bool
	release func()
}

type key struct{}

// With returns ctx with a note of its own.
func With(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, &Note{}) }

// Holding returns ctx with a note of its own whose load holds the run's
// row for the append (Note.Hold). The gate asks it of a try that follows
// tries lost to another writer: an instance appending to the run back to
// back, building each append on the row its last one left, wins every
// race against one that reads the run again before each try. The caller
// releases the note (Release) once the try is over, appended or not.
func Holding(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, &Note{Hold: true})
}

// OnRelease sets what Release does: the store's, to let go of the row a
// load holds (a rollback, once the append has not committed).
func (n *Note) OnRelease(f func()) { n.release = f }

// Release lets go of what the note's load holds, once; a nil note, or
// one whose load holds nothing, has nothing to let go of.
func (n *Note) Release() {
	if n == nil || n.release == nil {
		return
	}
	f := n.release
	n.release = nil
	f()
}

// From returns ctx's note, nil when it has none.
func From(ctx context.Context) *Note {
	n, _ := ctx.Value(key{}).(*Note)
	return n
}

type appendsKey struct{}

// Appends returns ctx marked as a request that only decides and records
// (a decision, an observation, a run's start): every write it makes is an
// append, or what a person is shown of a question it asks, each of whose
// transactions proves the store's schema before it writes (sqlstore's
// unmoved.go), so the file's proof before the request reads only its
// place and times, not its marker (sqlite.File.Acquire). What
// the request reads before its append is read unproved: the decision made
// on it is recorded only if the append proves the schema, and refused
// otherwise.
func Appends(ctx context.Context) context.Context {
	return context.WithValue(ctx, appendsKey{}, true)
}

// Appending reports whether ctx is marked by Appends.
func Appending(ctx context.Context) bool {
	v, _ := ctx.Value(appendsKey{}).(bool)
	return v
}
