package evidence

import (
	"context"
	"errors"
)

// Table is where checkpoints are kept: the state's database
// (sqlstore.Checkpoints, through state.Checkpoints).
type Table interface {
	// Last returns the last checkpoint; N is 0 when there is none.
	Last(ctx context.Context) (Stored, error)
	// Moved returns the heads of the runs whose last event is not the
	// one the checkpoints last signed, at most limit, ordered by run.
	Moved(ctx context.Context, limit int) ([]StoredHead, error)
	// Pending counts the events stored at or after atNs, up to limit.
	Pending(ctx context.Context, atNs int64, limit int) (int, error)
	// Add stores a checkpoint and moves the signed heads, at once; a
	// number already taken is ErrTaken and stores nothing.
	Add(ctx context.Context, cp Stored, heads []StoredHead) error
	// Scan calls fn with every checkpoint made at or after atNs, in
	// order of their numbers.
	Scan(ctx context.Context, atNs int64, fn func(Stored) error) error
}

// Stored is one checkpoint as stored: its number, when it was made (Unix
// nanoseconds, the signer's clock), its hash, its body (the signed bytes)
// and its signature (base64).
type Stored struct {
	N    uint64
	At   int64
	Hash string
	Body []byte
	Sig  string
}

// StoredHead is the head of a run's chain as a table gives it: its last
// event's sequence number and eventlog.ChainHash of the stored bytes.
// Signed is the sequence number the last checkpoint signed for the run (0:
// none).
type StoredHead struct {
	Run    string
	Seq    uint64
	Hash   string
	Signed uint64
}

// ErrTaken is an Add whose number another signer took first: read the
// last checkpoint again and retry.
var ErrTaken = errors.New("evidence: the checkpoint's number is taken")
