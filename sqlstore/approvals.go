package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

var _ veto.Approvals = (*approvals)(nil)

// applyApprovals folds one event into the run's questions, answers and
// suspensions, as eventlog.Projection does in memory. A decision in a run
// with no suspended call costs nothing here.
func (s *Store) applyApprovals(ctx context.Context, tx *sql.Tx, run string, h *header, e veto.Event) error {
	if e.Approval != 0 {
		if _, err := s.exec(ctx, tx, `UPDATE veto_answers SET used = ? WHERE run = ? AND seq = ?`, true, run, int64(e.Approval)); err != nil {
			return err
		}
	}
	switch {
	case e.Kind == veto.EventDenied && e.Awaiting == veto.AwaitApproval:
		if _, err := s.exec(ctx, tx, `UPDATE veto_questions SET is_last = ? WHERE run = ? AND call_id = ? AND is_last`, false, run, e.CallID); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_questions (run, seq, call_id, at_ns, tool, rule, reason, risk, args_hash, is_last, answered, actor_kind, actor_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, run, int64(e.Seq), e.CallID, e.Time.UnixNano(), e.Tool, e.Rule, e.Reason,
			int64(e.Risk), e.ArgsHash, true, false, e.Actor.Kind, e.Actor.ID); err != nil {
			return err
		}
	case e.Kind == veto.EventApproved || e.Kind == veto.EventApprovalRefused:
		granted := e.Kind == veto.EventApproved
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_answers (run, seq, call_id, granted, tool, args_hash, expires_ns, used, for_kind, for_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, run, int64(e.Seq), e.CallID, granted, e.Tool, e.ArgsHash, e.Expires.UnixNano(), false,
			e.For.Kind, e.For.ID); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `UPDATE veto_questions SET answered = ? WHERE run = ? AND call_id = ?`, true, run, e.CallID); err != nil {
			return err
		}
		if granted {
			h.nGrants++
		}
	case e.Kind == veto.EventSuspended:
		res, err := s.exec(ctx, tx, `INSERT INTO veto_suspended (run, call_id) VALUES (?, ?) ON CONFLICT (run, call_id) DO NOTHING`, run, e.CallID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			h.nSuspended += n
		}
	}
	if isDecision(e.Kind) && h.nSuspended > 0 {
		res, err := s.exec(ctx, tx, `DELETE FROM veto_suspended WHERE run = ? AND call_id = ?`, run, e.CallID)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		h.nSuspended -= n
	}
	return nil
}

// backfill folds the events already recorded into what migration n
// added: the fourth's questions, answers and suspensions, with the
// fifth's actors, so it runs once the fifth has, for a database that was
// older than the fourth (from: the migrations it had). A damaged event is
// left out (the run's row says it is damaged already, or a read of it
// will).
func (s *Store) backfill(ctx context.Context, tx *sql.Tx, n, from int) error {
	if n != 5 || from >= 4 {
		return nil
	}
	type row struct {
		run string
		seq int64
		b   []byte
	}
	var afterRun string
	afterSeq := int64(-1)
	for {
		rows, err := tx.QueryContext(ctx, s.q(`SELECT run, seq, body FROM veto_events
			WHERE kind IN ('invocation_allowed', 'invocation_denied', 'tool_denied', 'approval_granted', 'approval_refused', 'call_suspended')
			AND (run > ? OR run = ? AND seq > ?) ORDER BY run, seq LIMIT 1000`), afterRun, afterRun, afterSeq)
		if err != nil {
			return err
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.run, &r.seq, &r.b); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, r := range batch {
			e, err := eventlog.DecodeEvent(r.b)
			if err != nil {
				continue
			}
			h := header{nSuspended: 1} // every decision looks for its suspension
			if err := s.applyApprovals(ctx, tx, r.run, &h, e); err != nil {
				return err
			}
		}
		last := batch[len(batch)-1]
		afterRun, afterSeq = last.run, last.seq
	}
	_, err := tx.ExecContext(ctx, s.q(`UPDATE veto_runs SET
		n_grants = (SELECT COUNT(*) FROM veto_answers a WHERE a.run = veto_runs.run AND a.granted),
		n_suspended = (SELECT COUNT(*) FROM veto_suspended p WHERE p.run = veto_runs.run)`))
	return err
}

// approvals answers veto.Approvals from the run's tables, with what the
// run's row said when it was loaded.
type approvals struct {
	s                 *Store
	run               string
	damaged           bool
	grants, suspended int64
}

// Grant implements veto.Approvals.
func (a *approvals) Grant(ctx context.Context, tool, hash string, actor veto.Actor, now time.Time) (uint64, error) {
	if a.damaged || a.grants == 0 {
		return 0, nil
	}
	return a.seq(ctx, `SELECT seq FROM veto_answers WHERE run = ? AND tool = ? AND args_hash = ? AND for_kind = ? AND for_id = ?
		AND granted AND NOT used AND expires_ns > ? ORDER BY seq LIMIT 1`, a.run, tool, hash, actor.Kind, actor.ID, now.UnixNano())
}

// Refusal implements veto.Approvals.
func (a *approvals) Refusal(ctx context.Context, callID, tool, hash string) (uint64, error) {
	return a.seq(ctx, `SELECT seq FROM veto_answers WHERE run = ? AND call_id = ? AND NOT granted AND NOT used
		AND tool = ? AND args_hash = ? ORDER BY seq LIMIT 1`, a.run, callID, tool, hash)
}

func (a *approvals) seq(ctx context.Context, query string, args ...any) (uint64, error) {
	var seq int64
	err := a.s.queryRow(ctx, nil, query, args...).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, unavailable(err)
	}
	return uint64(seq), nil
}

const questionCols = `run, seq, call_id, at_ns, tool, rule, reason, risk, args_hash, answered, actor_kind, actor_id`

func scanQuestion(sc interface{ Scan(...any) error }) (veto.Question, error) {
	var q veto.Question
	var seq, at, risk int64
	err := sc.Scan(&q.Run, &seq, &q.CallID, &at, &q.Tool, &q.Rule, &q.Reason, &risk, &q.ArgsHash, &q.Answered, &q.Actor.Kind, &q.Actor.ID)
	q.Seq, q.Time, q.Risk = uint64(seq), time.Unix(0, at).UTC(), veto.Risk(risk)
	return q, err
}

func (a *approvals) question(ctx context.Context, query string, args ...any) (veto.Question, bool, error) {
	q, err := scanQuestion(a.s.queryRow(ctx, nil, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return veto.Question{}, false, nil
	}
	if err != nil {
		return veto.Question{}, false, unavailable(err)
	}
	return q, true, nil
}

// Asked implements veto.Approvals.
func (a *approvals) Asked(ctx context.Context, callID string) (veto.Question, bool, error) {
	return a.question(ctx, `SELECT `+questionCols+` FROM veto_questions WHERE run = ? AND call_id = ? ORDER BY seq DESC LIMIT 1`, a.run, callID)
}

// AskedAbout implements veto.Approvals.
func (a *approvals) AskedAbout(ctx context.Context, tool, hash string) (veto.Question, bool, error) {
	return a.question(ctx, `SELECT `+questionCols+` FROM veto_questions WHERE run = ? AND tool = ? AND args_hash = ? ORDER BY seq DESC LIMIT 1`,
		a.run, tool, hash)
}

// Suspended implements veto.Approvals.
func (a *approvals) Suspended(ctx context.Context, callID string) (bool, error) {
	if a.suspended == 0 {
		return false, nil
	}
	var one int
	err := a.s.queryRow(ctx, nil, `SELECT 1 FROM veto_suspended WHERE run = ? AND call_id = ?`, a.run, callID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, unavailable(err)
}

// Keep implements veto.Approvals: in one transaction it drops what
// expired by sh.Asked and, past veto.MaxShown, the oldest, then stores sh;
// what it dropped is scrubbed as Forget does. Within a transaction held
// (Together) it is a savepoint of that one, and the scrub, which cannot
// run inside a transaction, follows its commit.
func (a *approvals) Keep(ctx context.Context, sh veto.Shown) error {
	b, err := veto.EncodeShown(&sh)
	if err != nil {
		return err
	}
	if h := a.s.heldIn(ctx); h != nil {
		var dropped int64
		err := a.s.savepoint(ctx, h, func() error {
			var err error
			dropped, err = a.keep(ctx, h.tx, sh, b)
			return err
		})
		if err == nil && dropped > 0 && a.s.d.Scrub != nil {
			h.after = append(h.after, func(ctx context.Context) error { return a.s.d.Scrub(ctx, a.s.db) })
		}
		if err != nil && !errors.Is(err, veto.ErrStateUnavailable) {
			err = unavailable(err)
		}
		return err
	}
	tx, err := a.s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback()
	// A request that only decides and records was proved without the
	// marker (internal/loaded.Appending): its writes prove it.
	if err := a.s.proveSchema(ctx, tx); err != nil {
		return err
	}
	dropped, err := a.keep(ctx, tx, sh, b)
	if err != nil {
		return unavailable(err)
	}
	if err := tx.Commit(); err != nil {
		return unavailable(err)
	}
	if dropped > 0 && a.s.d.Scrub != nil {
		return unavailable(a.s.d.Scrub(ctx, a.s.db)) // what expired or was dropped leaves the WAL too
	}
	return nil
}

// keep is Keep's work within tx: how many rows it dropped.
func (a *approvals) keep(ctx context.Context, tx *sql.Tx, sh veto.Shown, b []byte) (dropped int64, err error) {
	q := a.s.q
	res, err := tx.ExecContext(ctx, q(`DELETE FROM veto_shown WHERE expires_ns <= ? OR run = ? AND call_id = ?`), sh.Asked.UnixNano(), sh.Run, sh.CallID)
	if err != nil {
		return 0, err
	}
	dropped, _ = res.RowsAffected()
	var held int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM veto_shown`).Scan(&held); err != nil {
		return 0, err
	}
	if held >= veto.MaxShown {
		if _, err := tx.ExecContext(ctx, q(`DELETE FROM veto_shown WHERE (run, call_id) IN
			(SELECT run, call_id FROM veto_shown ORDER BY expires_ns, run, call_id LIMIT ?)`), held-veto.MaxShown+1); err != nil {
			return 0, err
		}
		dropped++
	}
	if _, err := tx.ExecContext(ctx, q(`INSERT INTO veto_shown (run, call_id, expires_ns, body) VALUES (?, ?, ?, ?)`),
		sh.Run, sh.CallID, sh.Expires.UnixNano(), b); err != nil {
		return 0, err
	}
	return dropped, nil
}

// Shown implements veto.Approvals.
func (a *approvals) Shown(ctx context.Context, callID string, now time.Time) (veto.Shown, bool, error) {
	var b []byte
	err := a.s.db.QueryRowContext(ctx, a.s.q(`SELECT body FROM veto_shown WHERE run = ? AND call_id = ? AND expires_ns > ?`),
		a.run, callID, now.UnixNano()).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return veto.Shown{}, false, nil
	}
	if err != nil {
		return veto.Shown{}, false, unavailable(err)
	}
	sh, err := veto.DecodeShown(b)
	return sh, err == nil, err
}

// Forget implements veto.Approvals: the row is deleted and the dialect
// scrubs what the database may still hold of it (SQLite: its WAL).
func (a *approvals) Forget(ctx context.Context, callID string) error {
	res, err := a.s.db.ExecContext(ctx, a.s.q(`DELETE FROM veto_shown WHERE run = ? AND call_id = ?`), a.run, callID)
	if err != nil {
		return unavailable(err)
	}
	if n, _ := res.RowsAffected(); n > 0 && a.s.d.Scrub != nil {
		return unavailable(a.s.d.Scrub(ctx, a.s.db))
	}
	return nil
}

// Waiting implements veto.Log.
func (s *Store) Waiting(ctx context.Context, q veto.WaitQuery) ([]veto.Question, error) {
	query := `SELECT ` + questionCols + ` FROM veto_questions WHERE is_last AND NOT answered AND at_ns >= ?`
	args := []any{q.Since.UnixNano()}
	if q.Run != "" {
		query += ` AND run = ?`
		args = append(args, q.Run)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query+` ORDER BY at_ns DESC, run, seq DESC`), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []veto.Question
	for rows.Next() {
		qq, err := scanQuestion(rows)
		if err != nil {
			return nil, unavailable(err)
		}
		out = append(out, qq)
	}
	return out, unavailable(rows.Err())
}
