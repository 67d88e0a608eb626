package export

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/state"
)

// stuckSink takes the first batch's call and never returns until
// released, as a syslog server that stopped reading.
type stuckSink struct {
	entered, release chan struct{}
}

func (s *stuckSink) Send(ctx context.Context, recs []Record) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *stuckSink) Close() error { return nil }

// A sink that stops taking batches holds no decision: with the exporter
// stuck in a send on a service's SQLite state, decisions are recorded as
// before, and once the sink takes batches again they are all sent.
func TestStuckSinkHoldsNoDecision(t *testing.T) {
	ctx := context.Background()
	sv, err := state.OpenService(ctx, state.Name{Path: filepath.Join(t.TempDir(), "veto.db")}, state.ServiceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	sink := &stuckSink{entered: make(chan struct{}, 1), release: make(chan struct{})}
	m := NewMetrics()
	x, err := New(Config{Name: "stuck", Log: sv.Log, Cursors: NewCursors(sv.DBFunc(), sqlstore.Markers(sv.Dialect())), Sink: sink,
		Acquire: sv.Acquire, Poll: time.Millisecond, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	xctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { x.Run(xctx); close(done) }()
	defer func() { cancel(); <-done }()

	record := func(run string, n int) {
		t.Helper()
		release, err := sv.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		now := time.Now()
		evs := []veto.Event{{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Time: now, Complete: new(true)}}
		for i := range n {
			evs = append(evs, veto.Event{V: veto.EventVersion, Run: run, Seq: uint64(i + 2), Kind: veto.EventAllowed, Time: now,
				CallID: run + "-c", Tool: "Read"})
		}
		if err := sv.Store.Append(ctx, run, 1, evs); err != nil {
			t.Fatal(err)
		}
	}
	record("first", 1)
	<-sink.entered // the exporter is stuck in its send now
	for i := range 50 {
		record("r"+string(rune('a'+i%26))+string(rune('a'+i/26)), 2)
	}
	// Every decision above was recorded while the sink held its batch.
	close(sink.release)
	eventually(t, "the backlog drains", func() bool {
		return value(m.sent.WithLabelValues("stuck")) >= 101 && value(m.backlog.WithLabelValues("stuck")) == 0
	})
}
