package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// RunCheck is what CheckRuns found in one run.
type RunCheck struct {
	Run    string
	Events int
	// Marked: the run is recorded damaged (its history loads incomplete).
	Marked bool
	// Broken names the first event that does not decode, breaks the
	// chain, or is not the last event the run's row recorded; 0 when the
	// chain holds.
	Broken uint64
	Why    string // in veto's words, never the decoder's message
}

// CheckRuns reads every run's events and reports, for each, whether its
// chain holds and whether it is recorded damaged.
func (s *Store) CheckRuns(ctx context.Context) ([]RunCheck, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]RunCheck, 0, len(runs))
	for _, run := range runs {
		rc := RunCheck{Run: run}
		h, err := s.header(ctx, nil, run)
		if err != nil {
			return nil, unavailable(err)
		}
		first, prev, stored, err := s.Chain(ctx, run)
		if err != nil {
			return nil, err
		}
		rc.Events = len(stored)
		if b := eventlog.VerifyChain(stored, first, prev); b != nil {
			rc.Broken, rc.Why = b.Seq, "breaks the chain"
			if b.Seq >= first && int(b.Seq-first) < len(stored) {
				if _, err := eventlog.DecodeEvent(stored[b.Seq-first]); err != nil {
					rc.Why = "does not decode"
				}
			}
		} else if h.damaged && !h.recorded {
			rc.Broken, rc.Why = h.next-1, "is not the last event the run recorded"
		}
		rc.Marked = h.recorded
		out = append(out, rc)
	}
	return out, nil
}

// MarkIncomplete makes run's history incomplete for good (E10): a run
// veto has not seen starts with a run_started event that claims no
// complete history, and the run is recorded damaged, so history rules
// deny until it is proven again.
func (s *Store) MarkIncomplete(ctx context.Context, run string) error {
	h, err := s.header(ctx, nil, run)
	if err != nil {
		return unavailable(err)
	}
	if !h.exists || h.next == 1 {
		no := false
		e := veto.Event{V: veto.EventVersion, Run: run, Seq: 1, Kind: veto.EventRunStarted, Time: time.Now().UTC(), Complete: &no}
		if err := s.Append(ctx, run, 1, []veto.Event{e}); err != nil && !errors.Is(err, veto.ErrConflict) {
			return err
		}
	}
	s.forget(run)
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE veto_runs SET damaged = ? WHERE run = ?`), true, run); err != nil {
		return unavailable(err)
	}
	return nil
}
