package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// Events implements veto.Store. Stored bytes that do not decode are
// skipped, and make the run damaged: its history is incomplete from then
// on (E10).
func (s *Store) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	evs, bad, err := s.events(ctx, run, after)
	if bad && err == nil {
		err = s.markDamaged(ctx, run)
	}
	return evs, err
}

// markDamaged records that run's stored events are damaged.
func (s *Store) markDamaged(ctx context.Context, run string) error {
	s.forget(run)
	// Within a transaction the decision holds (Together, a held row),
	// in it: on another connection the update would wait for the lock
	// the decision holds, until its deadline.
	_, err := s.exec(ctx, nil, `UPDATE veto_runs SET damaged = ? WHERE run = ?`, true, run)
	if r := s.rowHeldIn(ctx); r != nil && r.run == run && err == nil {
		r.h.damaged, r.h.recorded = true, true // the append builds on the row as marked
	}
	if h := s.heldIn(ctx); h != nil {
		delete(h.rows, run) // an append after reads the row as marked
	}
	return unavailable(err)
}

func (s *Store) events(ctx context.Context, run string, after uint64) (out []veto.Event, bad bool, err error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT body FROM veto_events WHERE run = ? AND seq > ? ORDER BY seq`), run, int64(after))
	if err != nil {
		return nil, false, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, false, unavailable(err)
		}
		if e, err := eventlog.DecodeEvent(b); err == nil {
			out = append(out, e)
		} else {
			bad = true
		}
	}
	return out, bad, unavailable(rows.Err())
}

// Runs implements veto.Log.
func (s *Store) Runs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run FROM veto_runs ORDER BY run`)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, r)
	}
	return out, unavailable(rows.Err())
}

// Scan implements veto.Log.
func (s *Store) Scan(ctx context.Context, lq veto.LogQuery, fn func(run string, seq uint64, stored []byte) error) error {
	query := `SELECT run, seq, at_ns, body FROM veto_events WHERE 1 = 1`
	var args []any
	if lq.Run != "" {
		query += ` AND run = ?`
		args = append(args, lq.Run)
	}
	if !lq.Since.IsZero() {
		query += ` AND at_ns >= ?`
		args = append(args, lq.Since.UnixNano())
	}
	if len(lq.Kinds) > 0 {
		marks := make([]string, len(lq.Kinds))
		for i, k := range lq.Kinds {
			marks[i] = "?"
			args = append(args, string(k))
		}
		query += ` AND kind IN (` + strings.Join(marks, ", ") + `)`
	}
	if lq.AfterTime != 0 || lq.AfterRun != "" {
		query += ` AND (at_ns > ? OR (at_ns = ? AND (run > ? OR (run = ? AND seq > ?))))`
		args = append(args, lq.AfterTime, lq.AfterTime, lq.AfterRun, lq.AfterRun, int64(lq.AfterSeq))
	}
	query += ` ORDER BY at_ns, run, seq`
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var run string
		var seq, at int64
		var b []byte
		if err := rows.Scan(&run, &seq, &at, &b); err != nil {
			return unavailable(err)
		}
		if err := fn(run, uint64(seq), b); err != nil {
			return err
		}
	}
	return unavailable(rows.Err())
}

// Chain implements veto.Log.
func (s *Store) Chain(ctx context.Context, run string) (uint64, string, [][]byte, error) {
	var first int64
	var prev string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT anchor_seq, anchor_prev FROM veto_runs WHERE run = ?`), run).Scan(&first, &prev)
	if errors.Is(err, sql.ErrNoRows) {
		return 1, "", nil, nil
	}
	if err != nil {
		return 0, "", nil, unavailable(err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT body FROM veto_events WHERE run = ? ORDER BY seq`), run)
	if err != nil {
		return 0, "", nil, unavailable(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return 0, "", nil, unavailable(err)
		}
		out = append(out, b)
	}
	return uint64(first), prev, out, unavailable(rows.Err())
}

// Prune implements veto.Log. For each run it deletes the events older
// than before and moves the run's anchor to its new first event (which
// names the hash of the deleted one), in one transaction per run. The
// projections stay: history and knowledge outlive the log they were
// built from.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, run := range runs {
		n, err := s.pruneRun(ctx, run, before.UnixNano())
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

func (s *Store) pruneRun(ctx context.Context, run string, before int64) (int, error) {
	s.forget(run)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, unavailable(err)
	}
	defer tx.Rollback()
	if s.d.LockRun != nil {
		if err := s.d.LockRun(ctx, tx, s.q, run); err != nil {
			return 0, unavailable(err)
		}
	}
	var maxOld sql.NullInt64
	if err := tx.QueryRowContext(ctx, s.q(`SELECT MAX(seq) FROM veto_events WHERE run = ? AND at_ns < ?`), run, before).Scan(&maxOld); err != nil {
		return 0, unavailable(err)
	}
	if !maxOld.Valid {
		return 0, nil
	}
	// The new first event is the one after the last deleted; it names the
	// deleted event's hash, which becomes the anchor.
	var body []byte
	err = tx.QueryRowContext(ctx, s.q(`SELECT body FROM veto_events WHERE run = ? AND seq = ?`), run, maxOld.Int64+1).Scan(&body)
	anchorSeq, anchorPrev := maxOld.Int64+1, ""
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Every event goes: the anchor is the hash of the last one.
		var last []byte
		if err := tx.QueryRowContext(ctx, s.q(`SELECT body FROM veto_events WHERE run = ? AND seq = ?`), run, maxOld.Int64).Scan(&last); err != nil {
			return 0, unavailable(err)
		}
		anchorPrev = eventlog.ChainHash(last)
	case err != nil:
		return 0, unavailable(err)
	default:
		e, derr := eventlog.DecodeEvent(body)
		if derr != nil {
			return 0, fmt.Errorf("sqlstore: prune: event %d of a run does not decode", anchorSeq)
		}
		anchorPrev = e.Prev
	}
	res, err := tx.ExecContext(ctx, s.q(`DELETE FROM veto_events WHERE run = ? AND seq <= ?`), run, maxOld.Int64)
	if err != nil {
		return 0, unavailable(err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE veto_runs SET anchor_seq = ?, anchor_prev = ? WHERE run = ?`), anchorSeq, anchorPrev, run); err != nil {
		return 0, unavailable(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, unavailable(err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// InsertRaw stores bytes as a run's event without checking them, as a
// damaged or older database would hold them. For tests of damage.
func (s *Store) InsertRaw(ctx context.Context, run string, seq uint64, b []byte) error {
	s.forget(run)
	h, err := s.header(ctx, nil, run)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO veto_events (run, seq, at_ns, kind, tool, body) VALUES (?, ?, ?, '', '', ?)`),
		run, int64(seq), time.Now().UnixNano(), b); err != nil {
		return err
	}
	e, derr := eventlog.DecodeEvent(b)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if derr != nil {
		h.damaged = true
		if seq >= h.next {
			h.next = seq + 1
		}
	} else if err := s.apply(ctx, tx, run, &h, e); err != nil {
		tx.Rollback()
		return err
	}
	h.last = eventlog.ChainHash(b)
	if h.exists {
		_, err = tx.ExecContext(ctx, s.q(`UPDATE veto_runs SET next = ?, started = ?, start_complete = ?, damaged = ?, last_hash = ?, n_obs = ?, n_grants = ?, n_suspended = ? WHERE run = ?`),
			int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, h.nGrants, h.nSuspended, run)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, n_grants, n_suspended, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, 1, '', ?, ?, 0)`),
			run, int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, h.nGrants, h.nSuspended)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
