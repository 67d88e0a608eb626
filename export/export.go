package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/vetohq/veto"
)

// Record is one stored event as a sink receives it: its place in the log
// and its stored bytes (the JSON veto log prints), never anything else.
type Record struct {
	Run  string
	Seq  uint64
	Kind veto.EventKind
	Time time.Time
	Body []byte
}

// Sink receives batches of records. Send returns nil only once every
// record of the batch is written and flushed as far as the sink can
// tell (a file synced, a stream's bytes handed to the kernel); an error
// means the whole batch is sent again later, so a sink may see a record
// twice, never zero times.
type Sink interface {
	Send(ctx context.Context, recs []Record) error
	Close() error
}

// Log is what an Exporter reads: a store's log (veto.Log's Scan).
type Log interface {
	Scan(ctx context.Context, q veto.LogQuery, fn func(run string, seq uint64, stored []byte) error) error
}

// CursorStore keeps each sink's cursor: the time (Unix nanoseconds) of
// the state's clock before which every event was accepted by the sink.
type CursorStore interface {
	Load(ctx context.Context, name string) (int64, error)
	Save(ctx context.Context, name string, at int64) error
	// Count is how many events of kinds (none: every kind) the log holds
	// at or after at, for the backlog.
	Count(ctx context.Context, at int64, kinds []veto.EventKind) (int, error)
	// Keys calls fn with the place of every event of kinds at or after
	// at, oldest first (as Log.Scan orders them), without reading the
	// events: a full pass finds with it the first it has not sent.
	Keys(ctx context.Context, at int64, kinds []veto.EventKind, fn func(run string, seq uint64, at int64) error) error
}

// Config is one exporter: one sink and its cursor.
type Config struct {
	// Name is the sink's name, the key of its cursor.
	Name    string
	Log     Log
	Cursors CursorStore
	Sink    Sink
	// Acquire, when set, holds the state sound around each use (an
	// SQLite file); its error is a failed pass, tried again.
	Acquire func(ctx context.Context) (release func(), err error)
	// All exports every event; otherwise only decisions.
	All bool
	// Window is how far behind the newest settled time each pass reads
	// again (default 10s): an event whose commit came later than this
	// after its time, or whose writer's clock was behind by more, could
	// be missed. See docs/serve.md#export.
	Window time.Duration
	// Poll is how often the log is read once the sink is caught up
	// (default 500ms).
	Poll time.Duration
	// Batch is the most records one Send carries (default 512).
	Batch int
	// SaveEvery bounds how often the cursor is written (default 1s): the
	// write takes SQLite's write lock, which a decision may then wait for.
	SaveEvery time.Duration
	Metrics   *Metrics
	Logger    *slog.Logger
	Now       func() time.Time
}

// Exporter sends a log's events to one sink, at least once.
type Exporter struct {
	cfg   Config
	kinds []veto.EventKind
	// low is the cursor: every event before it was accepted. sent holds
	// the events at or after it that were, with their times; high is the
	// latest of those times.
	low, high int64
	sent      map[key]int64
	// fullAt is when the last pass that read from low (the window
	// included) began; the passes between read from high only.
	fullAt time.Time
	saved  int64
	// savedAt is when the cursor was last written, countedAt when the
	// backlog was last counted.
	savedAt, countedAt time.Time
}

type key struct {
	run string
	seq uint64
}

// decisionKinds are the events exported without Config.All.
var decisionKinds = []veto.EventKind{veto.EventAllowed, veto.EventDenied, veto.EventToolDenied}

// New returns an exporter; Run starts it.
func New(cfg Config) (*Exporter, error) {
	if cfg.Name == "" || cfg.Log == nil || cfg.Cursors == nil || cfg.Sink == nil {
		return nil, errors.New("export: a name, a log, a cursor store and a sink are needed")
	}
	if cfg.Window <= 0 {
		cfg.Window = 10 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 512
	}
	if cfg.SaveEvery <= 0 {
		cfg.SaveEvery = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	// Every series shows from the start, a sink without errors as 0.
	cfg.Metrics.sent.WithLabelValues(cfg.Name)
	cfg.Metrics.errors.WithLabelValues(cfg.Name)
	cfg.Metrics.backlog.WithLabelValues(cfg.Name)
	cfg.Metrics.lag.WithLabelValues(cfg.Name)
	x := &Exporter{cfg: cfg, sent: map[key]int64{}}
	if !cfg.All {
		x.kinds = decisionKinds
	}
	return x, nil
}

// errFull stops a scan once a batch is full.
var errFull = errors.New("export: batch full")

// Run exports until ctx ends; it returns nil then, the cursor saved as
// far as the sink accepted. A failing log or sink is retried with
// backoff, counted, never returned.
func (x *Exporter) Run(ctx context.Context) error {
	m := x.cfg.Metrics
	backoff := time.Duration(0)
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	fail := func(what string, err error) bool {
		m.errors.WithLabelValues(x.cfg.Name).Inc()
		backoff = min(max(2*backoff, 100*time.Millisecond), 30*time.Second)
		x.cfg.Logger.Warn("export: "+what, "sink", x.cfg.Name, "retry_in", backoff.String(), "error", err.Error())
		x.backlog(ctx)
		return wait(backoff)
	}
	defer x.save(true)
	for loaded := false; !loaded; {
		err := x.withState(ctx, func(ctx context.Context) error {
			at, err := x.cfg.Cursors.Load(ctx, x.cfg.Name)
			x.low, x.saved = at, at
			return err
		})
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			loaded = true
		} else if !fail("cannot read the cursor", err) {
			return nil
		}
	}
	var pending []Record
	var next int64 // the cursor once pending is accepted
	cut := false
	for ctx.Err() == nil {
		if len(pending) == 0 {
			var err error
			pending, next, cut, err = x.read(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				if !fail("cannot read the log", err) {
					return nil
				}
				continue
			}
		}
		if len(pending) > 0 {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a sink stuck longer fails, and is counted
			err := x.cfg.Sink.Send(sctx, pending)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if !fail("the sink refused a batch", err) {
					return nil
				}
				continue
			}
			m.sent.WithLabelValues(x.cfg.Name).Add(float64(len(pending)))
			for _, r := range pending {
				x.sent[key{r.Run, r.Seq}] = r.Time.UnixNano()
				x.high = max(x.high, r.Time.UnixNano())
			}
		}
		backoff = 0
		pending = nil
		x.advance(next)
		x.save(false)
		if cut {
			x.backlog(ctx)
			continue // more to read at once
		}
		m.backlog.WithLabelValues(x.cfg.Name).Set(0)
		if !wait(x.cfg.Poll) {
			return nil
		}
	}
	return nil
}

// read returns the events not sent yet (at most a batch, oldest
// first), the cursor once they are accepted, and whether the batch was
// cut short. A full pass, every half window, reads from the cursor on,
// the window included, and only after one may the cursor move; the
// passes between read from the latest time sent, for what is new. So an
// event that commits late is sent within half a window of its commit,
// and the window is read twice a window, not at every poll.
func (x *Exporter) read(ctx context.Context) (recs []Record, next int64, cut bool, err error) {
	now := x.cfg.Now()
	full := now.Sub(x.fullAt) >= x.cfg.Window/2
	since := max(x.low, x.high)
	// Everything stored before horizon has committed by now, within the
	// window: once a full pass's events are accepted the cursor may move
	// up to it.
	horizon := now.Add(-x.cfg.Window).UnixNano()
	var last int64
	err = x.withState(ctx, func(ctx context.Context) error {
		if full {
			// The events from the cursor on are read from where the
			// first not sent is: their places alone, from the index,
			// tell where.
			x.fullAt = now
			since = math.MaxInt64
			err := x.cfg.Cursors.Keys(ctx, x.low, x.kinds, func(run string, seq uint64, at int64) error {
				if _, done := x.sent[key{run, seq}]; done {
					return nil
				}
				since = at
				return errFull
			})
			if err != nil && !errors.Is(err, errFull) {
				return err
			}
			if since == math.MaxInt64 {
				return nil
			}
		}
		q := veto.LogQuery{Kinds: x.kinds}
		if since > 0 {
			q.Since = time.Unix(0, since)
		}
		return x.cfg.Log.Scan(ctx, q, func(run string, seq uint64, b []byte) error {
			if _, done := x.sent[key{run, seq}]; done {
				return nil
			}
			at, kind, ok := timeAndKind(b)
			if !ok {
				// Damaged: veto log verify names it; nothing to send, and
				// never a reason for a full pass to read from here again.
				x.sent[key{run, seq}] = math.MaxInt64
				return nil
			}
			if len(recs) >= x.cfg.Batch {
				cut = true
				return errFull
			}
			last = at.UnixNano()
			recs = append(recs, Record{Run: run, Seq: seq, Kind: kind, Time: at, Body: b})
			return nil
		})
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	if err != nil {
		x.fullAt = time.Time{}
		return nil, 0, false, err
	}
	if !full {
		return recs, x.low, cut, nil
	}
	next = horizon
	if cut && last < next {
		// Events at last's time may follow: the cursor stays at it (a
		// time the scan reads from, inclusive).
		next = last
	}
	return recs, next, cut, nil
}

// timeAndKind reads what the exporter needs of a stored event, its time
// and kind; false for bytes that are not an event of this shape version
// (damaged: veto log verify names them).
func timeAndKind(b []byte) (time.Time, veto.EventKind, bool) {
	var e struct {
		V    int            `json:"v"`
		Kind veto.EventKind `json:"kind"`
		Time time.Time      `json:"time"`
	}
	if json.Unmarshal(b, &e) != nil || e.V != veto.EventVersion || e.Kind == "" {
		return time.Time{}, "", false
	}
	return e.Time, e.Kind, true
}

// advance moves the cursor up to next (never back) and forgets the sent
// events before it.
func (x *Exporter) advance(next int64) {
	if next <= x.low {
		return
	}
	x.low = next
	for k, at := range x.sent {
		if at < x.low {
			delete(x.sent, k)
		}
	}
}

// save writes the cursor when it moved, at most every SaveEvery unless
// final.
func (x *Exporter) save(final bool) {
	m := x.cfg.Metrics
	m.lag.WithLabelValues(x.cfg.Name).Set(max(0, x.cfg.Now().Sub(time.Unix(0, x.low)).Seconds()))
	if x.low == x.saved || (!final && x.cfg.Now().Sub(x.savedAt) < x.cfg.SaveEvery) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	at := x.low
	err := x.withState(ctx, func(ctx context.Context) error { return x.cfg.Cursors.Save(ctx, x.cfg.Name, at) })
	if err != nil {
		m.errors.WithLabelValues(x.cfg.Name).Inc()
		x.cfg.Logger.Warn("export: cannot store the cursor", "sink", x.cfg.Name, "error", err.Error())
		return
	}
	x.saved, x.savedAt = at, x.cfg.Now()
}

// backlog counts the events stored and not yet accepted, at most once a
// second: the count reads the index from the cursor on, which while
// catching up is the whole backlog.
func (x *Exporter) backlog(ctx context.Context) {
	now := x.cfg.Now()
	if now.Sub(x.countedAt) < time.Second {
		return
	}
	x.countedAt = now
	var n int
	err := x.withState(ctx, func(ctx context.Context) error {
		var err error
		n, err = x.cfg.Cursors.Count(ctx, x.low, x.kinds)
		return err
	})
	if err == nil {
		x.cfg.Metrics.backlog.WithLabelValues(x.cfg.Name).Set(float64(max(0, n-len(x.sent))))
	}
}

func (x *Exporter) withState(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if x.cfg.Acquire != nil {
		release, err := x.cfg.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("export: the state: %w", err)
		}
		defer release()
	}
	return fn(ctx)
}
