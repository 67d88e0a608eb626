package evidence

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// MaxHeads is the most heads one checkpoint signs; more runs that moved
// are signed by the checkpoints that follow at once.
const MaxHeads = 2000

// Options are how a Signer signs.
type Options struct {
	Key ed25519.PrivateKey
	// Table is where the checkpoints are kept: the state's database.
	Table Table
	// Acquire, when set, is held around each use of the database (an
	// SQLite service's file, proved sound; state.Service.Acquire).
	Acquire func(ctx context.Context) (func(), error)
	// Every: a checkpoint once this many events were stored since the
	// last (0: not by count). Interval: a checkpoint when the last is this
	// old and any run moved (0: not by time). Poll: how often both are
	// looked at (0: a second, or Interval when shorter).
	Every    int
	Interval time.Duration
	Poll     time.Duration
	// Margin is how much earlier than a checkpoint an event it did not
	// see may be stamped: the time between a decision's clock and its
	// commit, and how far apart the clocks of instances on one database
	// are (0: 5 s).
	Margin time.Duration
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Signer signs checkpoints of a state's decision log in the background:
// nothing on the decision path waits for it. Several signers on one
// database, with one key, add to one chain: a signer that loses the race
// for a number reads the chain again and signs the next.
type Signer struct {
	o     Options
	keyID string
	// quiet is when a look last found no run moved (Unix nanoseconds):
	// an idle log is not looked through again for events stored before.
	quiet atomic.Int64
	// Signed counts the checkpoints Run stored, Failed the looks or
	// signings that failed (the state down, a race lost past retrying).
	Signed, Failed atomic.Int64
}

// NewSigner returns a signer; Run starts it.
func NewSigner(o Options) (*Signer, error) {
	if len(o.Key) != ed25519.PrivateKeySize || o.Table == nil {
		return nil, errors.New("evidence: a signer needs a key and a table")
	}
	if o.Every < 0 || o.Interval < 0 || (o.Every == 0 && o.Interval == 0) {
		return nil, errors.New("evidence: sign every N events, every interval, or both")
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
		if o.Interval > 0 && o.Interval < o.Poll {
			o.Poll = o.Interval
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Margin <= 0 {
		o.Margin = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Signer{o: o, keyID: KeyID(o.Key.Public().(ed25519.PublicKey))}, nil
}

// KeyID is the id of the signer's key, as its checkpoints name it.
func (s *Signer) KeyID() string { return s.keyID }

// Run signs until ctx is done, then signs once more, so that what was
// decided before the stop is covered; it returns then.
func (s *Signer) Run(ctx context.Context) {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	var warned time.Time // a state that stays down is logged once a minute, not at every look
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			n, err := s.SignAll(fctx)
			s.Signed.Add(int64(n))
			if err != nil {
				s.Failed.Add(1)
				s.o.Logger.Warn("evidence: the last checkpoint could not be signed", "err", err)
			}
			cancel()
			return
		case <-t.C:
		}
		due, err := s.due(ctx)
		if err == nil && due {
			var n int
			n, err = s.SignAll(ctx)
			s.Signed.Add(int64(n))
		}
		if err != nil && ctx.Err() == nil {
			s.Failed.Add(1)
		}
		if err != nil && ctx.Err() == nil && s.o.Now().Sub(warned) >= time.Minute {
			s.o.Logger.Warn("evidence: a checkpoint could not be signed", "err", err)
			warned = s.o.Now()
		}
	}
}

// due reports whether a checkpoint is due: Every events stored since the
// last checkpoint, or the last Interval old.
func (s *Signer) due(ctx context.Context) (bool, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	last, err := s.o.Table.Last(ctx)
	if err != nil {
		return false, err
	}
	if s.o.Interval > 0 && s.o.Now().Sub(time.Unix(0, last.At)) >= s.o.Interval {
		// Due if any event was stored since; an event stamped a little
		// before the last checkpoint may have committed after it read
		// the heads, hence the margin. An idle log costs this one look.
		n, err := s.o.Table.Pending(ctx, max(last.At, s.quiet.Load())-int64(s.o.Margin), 1)
		if err != nil || n > 0 {
			return n > 0, err
		}
	}
	if s.o.Every > 0 {
		n, err := s.o.Table.Pending(ctx, last.At, s.o.Every)
		return n >= s.o.Every, err
	}
	return false, nil
}

func (s *Signer) acquire(ctx context.Context) (func(), error) {
	if s.o.Acquire == nil {
		return func() {}, nil
	}
	return s.o.Acquire(ctx)
}

// SignAll signs checkpoints until every run that moved when it began is
// signed (one checkpoint, unless more than MaxHeads runs moved), and
// returns how many it signed.
func (s *Signer) SignAll(ctx context.Context) (int, error) {
	n := 0
	for {
		heads, err := s.SignOnce(ctx)
		if heads > 0 {
			n++
		}
		if err != nil || heads < MaxHeads {
			return n, err
		}
	}
}

// SignOnce signs one checkpoint of the runs that moved since the last,
// at most MaxHeads of them, and returns how many heads it signed: 0 when
// no run moved.
func (s *Signer) SignOnce(ctx context.Context) (int, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	for range 20 {
		last, err := s.o.Table.Last(ctx)
		if err != nil {
			return 0, err
		}
		now := s.o.Now().UTC()
		moved, err := s.o.Table.Moved(ctx, MaxHeads)
		if err != nil {
			return 0, err
		}
		if len(moved) == 0 {
			s.quiet.Store(now.UnixNano())
			return 0, nil
		}
		cp := Checkpoint{V: 1, N: last.N + 1, Prev: last.Hash, Time: now, Key: s.keyID, Heads: make([]Head, len(moved))}
		for i, h := range moved {
			cp.Heads[i] = Head{Run: h.Run, Seq: h.Seq, Hash: h.Hash}
			if h.Seq > h.Signed {
				cp.Events += h.Seq - h.Signed
			}
		}
		body, err := json.Marshal(cp)
		if err != nil {
			return 0, err
		}
		err = s.o.Table.Add(ctx, Stored{N: cp.N, At: now.UnixNano(), Hash: Hash(body), Body: body, Sig: Sign(s.o.Key, body)}, moved)
		if errors.Is(err, ErrTaken) {
			continue // another signer took the number: read the chain again
		}
		if err != nil {
			return 0, err
		}
		return len(moved), nil
	}
	return 0, fmt.Errorf("evidence: checkpoint numbers were taken by other signers 20 times in a row")
}
