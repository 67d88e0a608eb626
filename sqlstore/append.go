package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

func isDecision(k veto.EventKind) bool {
	return k == veto.EventAllowed || k == veto.EventDenied || k == veto.EventToolDenied
}

// Decided returns the decision recorded for the call callID of run; ok
// is false when there is none.
func (s *Store) Decided(ctx context.Context, run, callID string) (e veto.Event, ok bool, err error) {
	var b []byte
	err = s.queryRow(ctx, nil, `SELECT e.body FROM veto_observations o JOIN veto_events e ON e.run = o.run AND e.seq = o.seq
		WHERE o.run = ? AND o.call_id = ?`, run, callID).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return veto.Event{}, false, nil
	}
	if err != nil {
		return veto.Event{}, false, unavailable(err)
	}
	e, err = eventlog.DecodeEvent(b)
	if err != nil {
		// The call's decision is damaged: the run is, from now on (E10).
		return veto.Event{}, false, s.markDamaged(ctx, run)
	}
	if !isDecision(e.Kind) {
		return veto.Event{}, false, nil
	}
	return e, true, nil
}

// claim returns the run's row an append builds on. kept is the row a
// pipelined append builds on, which its Guard proves (pipeline.go):
// nothing is read. Otherwise the run's write lock is taken and its row
// read within tx.
func (s *Store) claim(ctx context.Context, tx *sql.Tx, run string, kept *header) (*header, error) {
	if kept != nil {
		return kept, nil
	}
	if s.d.LockRun != nil {
		if err := s.d.LockRun(ctx, tx, s.q, run); err != nil {
			return nil, err
		}
	}
	h, err := s.header(ctx, tx, run)
	return &h, err
}

// append writes events within tx, on the row claim returns (kept: see
// claim); kept is left as the append leaves the row, and so is the row it
// returns. seen, when set, is the row the events were computed on (the
// decision's load, Dialect.OwnRows): the row read under the write lock
// must be it, or nothing is written and the run is decided again on a
// fresh load.
func (s *Store) append(ctx context.Context, tx *sql.Tx, run string, next uint64, events []veto.Event, kept, seen *header) (*header, error) {
	h, err := s.claim(ctx, tx, run, kept)
	if err != nil {
		return nil, err
	}
	if seen != nil && (h.next != next || !sameRow(*h, *seen)) {
		// Another writer moved the row since the load, or damage in place
		// was found: the row this store kept is not trusted for a while,
		// and the run is decided again on a fresh load.
		s.moved(run)
		s.forget(run)
		return nil, veto.ErrConflict
	}
	if h.next != next {
		return nil, veto.ErrConflict
	}
	for _, e := range events {
		e.Prev = h.last
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			return nil, err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_events (run, seq, at_ns, kind, tool, body) VALUES (?, ?, ?, ?, ?, ?)`,
			run, int64(e.Seq), e.Time.UnixNano(), string(e.Kind), e.Tool, b); err != nil {
			return nil, err
		}
		h.last = eventlog.ChainHash(b)
		if err := s.apply(ctx, tx, run, h, e); err != nil {
			return nil, err
		}
	}
	if h.exists {
		_, err = s.exec(ctx, tx, `UPDATE veto_runs SET next = ?, started = ?, start_complete = ?, damaged = ?, last_hash = ?, n_obs = ?, n_grants = ?, n_suspended = ?, updated_ns = ? WHERE run = ?`,
			int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, h.nGrants, h.nSuspended, time.Now().UnixNano(), run)
	} else {
		_, err = s.exec(ctx, tx, `INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, n_grants, n_suspended, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, 1, '', ?, ?, ?)`,
			run, int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, h.nGrants, h.nSuspended, time.Now().UnixNano())
	}
	return h, err
}

// sameRow reports whether two reads of a run's row agree on all a decision
// reads of it.
func sameRow(a, b header) bool {
	return a.exists == b.exists && a.next == b.next && a.started == b.started && a.startComplete == b.startComplete &&
		a.damaged == b.damaged && a.last == b.last && a.nObs == b.nObs && a.nGrants == b.nGrants && a.nSuspended == b.nSuspended
}

// apply folds one event into the run's projections, as eventlog.Projection
// does in memory.
func (s *Store) apply(ctx context.Context, tx *sql.Tx, run string, h *header, e veto.Event) error {
	if e.Seq != h.next {
		h.damaged = true
	}
	if e.Seq >= h.next {
		h.next = e.Seq + 1
	}
	if e.Kind == veto.EventRunStarted {
		if h.started || e.Seq != 1 || e.Complete == nil {
			h.damaged = true
		} else {
			h.started, h.startComplete = true, *e.Complete
		}
		return nil
	}
	if !h.started {
		h.damaged = true
	}
	if err := s.applyApprovals(ctx, tx, run, h, e); err != nil {
		return err
	}
	if e.Kind == veto.EventEgressAllowed {
		_, err := s.exec(ctx, tx, `INSERT INTO veto_egress (run, seq, host) VALUES (?, ?, ?)`, run, int64(e.Seq), e.Host)
		return err
	}
	o, ok := eventlog.ObservedOutcome(e)
	if !ok {
		return nil
	}
	if err := s.observe(ctx, tx, run, h, e, o); err != nil {
		return err
	}
	for _, f := range e.Files {
		fact, err := json.Marshal(f)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_knowledge (run, path, fact) VALUES (?, ?, ?)
			ON CONFLICT (run, path) DO UPDATE SET fact = excluded.fact`, run, f.Path, string(fact)); err != nil {
			return err
		}
	}
	return nil
}

// observe records the observation an event makes or changes, and moves
// the run's tally (see veto.Tally) from the call's old state to its new.
// A call's first observation is inserted without a read: pipelined, the
// guard proves the call was not observed before; in a transaction, the
// insert does nothing for a call observed before, which is then read and
// changed.
func (s *Store) observe(ctx context.Context, tx *sql.Tx, run string, h *header, e veto.Event, o veto.Outcome) error {
	idx := h.nObs
	first := veto.Observation{Seq: e.Seq, CallID: e.CallID, Tool: e.Tool, Outcome: o, Target: e.Target}
	piped := pipelined(ctx) != nil
	insert := `INSERT INTO veto_observations (run, idx, seq, call_id, tool, outcome, target_kind, target_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	if !piped {
		insert += ` ON CONFLICT (run, call_id) DO NOTHING`
	}
	res, err := s.exec(ctx, tx, insert, run, idx, int64(e.Seq), e.CallID, e.Tool, string(o), string(e.Target.Kind), e.Target.ID)
	if err != nil {
		return err
	}
	inserted := int64(1)
	if !piped {
		if inserted, err = res.RowsAffected(); err != nil {
			return err
		}
	}
	if inserted == 1 {
		h.nObs++
		return s.tally(ctx, tx, run, idx, veto.Observation{}, false, first)
	}
	var old veto.Observation
	var seq int64
	var outcome string
	if err := s.queryRow(ctx, tx, `SELECT idx, seq, tool, outcome, target_kind, target_id FROM veto_observations WHERE run = ? AND call_id = ?`,
		run, e.CallID).Scan(&idx, &seq, &old.Tool, &outcome, &old.Target.Kind, &old.Target.ID); err != nil {
		return err
	}
	old.Seq, old.CallID, old.Outcome = uint64(seq), e.CallID, veto.Outcome(outcome)
	now := old
	now.Outcome = o
	if e.Target.Known() {
		now.Target = e.Target
	}
	if _, err := s.exec(ctx, tx, `UPDATE veto_observations SET outcome = ?, target_kind = ?, target_id = ? WHERE run = ? AND idx = ?`,
		string(now.Outcome), string(now.Target.Kind), now.Target.ID, run, idx); err != nil {
		return err
	}
	return s.tally(ctx, tx, run, idx, old, true, now)
}

// tally moves the run's tally tables from observation old (existed: it
// was there) to now, at idx; the observations table already holds now.
// Each change is what eventlog.Projection does in memory.
func (s *Store) tally(ctx context.Context, tx *sql.Tx, run string, idx int64, old veto.Observation, existed bool, now veto.Observation) error {
	d := eventlog.TallyChange(old, existed, now)
	for _, c := range d.Calls {
		if c.N == 0 {
			continue
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_tally_calls (run, tool, n) VALUES (?, ?, ?)
			ON CONFLICT (run, tool) DO UPDATE SET n = veto_tally_calls.n + excluded.n`, run, c.Tool, c.N); err != nil {
			return err
		}
	}
	for _, f := range d.Failed {
		if f.N == 0 {
			continue
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_tally_failed (run, target_kind, target_id, tool, n) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run, target_kind, target_id, tool) DO UPDATE SET n = veto_tally_failed.n + excluded.n`,
			run, string(f.Target.Kind), f.Target.ID, f.Tool, f.N); err != nil {
			return err
		}
	}
	if k, ok := d.FileGone(); ok {
		if _, err := s.exec(ctx, tx, `UPDATE veto_tally_files SET n = n - 1 WHERE run = ? AND target_id = ? AND tool = ?`, run, k.ID, k.Tool); err != nil {
			return err
		}
		// The first call on it stopped counting (it was denied after all,
		// or named another target): the next one is first. Rare, so the
		// run's observations are read rather than indexed on every write.
		if _, err := s.exec(ctx, tx, `UPDATE veto_tally_files SET first_idx = COALESCE((SELECT MIN(idx) FROM veto_observations
			WHERE run = ? AND target_kind = 'file' AND target_id = ? AND tool = ? AND outcome <> 'denied'), -1)
			WHERE run = ? AND target_id = ? AND tool = ? AND first_idx = ?`, run, k.ID, k.Tool, run, k.ID, k.Tool, idx); err != nil {
			return err
		}
	}
	if k, ok := d.FileCame(); ok {
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_tally_files (run, target_id, tool, n, first_idx) VALUES (?, ?, ?, 1, ?)
			ON CONFLICT (run, target_id, tool) DO UPDATE SET n = veto_tally_files.n + 1,
				first_idx = CASE WHEN veto_tally_files.n <= 0 OR excluded.first_idx < veto_tally_files.first_idx
					THEN excluded.first_idx ELSE veto_tally_files.first_idx END`, run, k.ID, k.Tool, idx); err != nil {
			return err
		}
	}
	return nil
}
