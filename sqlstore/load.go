package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/internal/loaded"
)

// header is a run's row.
type header struct {
	exists                          bool
	next                            uint64
	started, startComplete, damaged bool
	recorded                        bool // damaged as the row records it, not as its last event shows
	last                            string
	nObs                            int64
	nGrants, nSuspended             int64     // grants ever recorded, calls suspended now (see approvals)
	appended                        time.Time // kept: when this store's own pipelined append left the row (pipeline.go)
}

// header reads the run's row and proves its last event the one the row
// names: the stored bytes at next-1 must hash to last_hash (so they are
// the bytes that were appended, and decode). Bytes changed or lost in
// place after they were appended, which no projection knows of, make the
// run damaged (E10): its history is incomplete, and an append records so.
func (s *Store) header(ctx context.Context, tx *sql.Tx, run string) (header, error) {
	return s.scanHeader(run, func(dest ...any) error { return s.queryRow(ctx, tx, headerQuery, run).Scan(dest...) })
}

// headerQuery reads a run's row and its last event.
const headerQuery = `SELECT r.next, r.started, r.start_complete, r.damaged, r.last_hash, r.n_obs, r.anchor_seq, r.n_grants, r.n_suspended, e.body
		FROM veto_runs r LEFT JOIN veto_events e ON e.run = r.run AND e.seq = r.next - 1 WHERE r.run = ?`

// scanHeader makes a run's row from headerQuery's answer, which scan
// reads (sql.ErrNoRows: no row).
func (s *Store) scanHeader(run string, scan func(dest ...any) error) (header, error) {
	h := header{next: 1}
	var next, nObs, anchor int64
	var tail []byte
	err := scan(&next, &h.started, &h.startComplete, &h.damaged, &h.last, &nObs, &anchor, &h.nGrants, &h.nSuspended, &tail)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	h.exists, h.next, h.nObs, h.recorded = true, uint64(next), nObs, h.damaged
	switch {
	case tail == nil && next-1 >= anchor && next > 1:
		h.damaged = true // the last event is gone, and no prune took it
	case tail != nil && eventlog.ChainHash(tail) != h.last:
		h.damaged = true // the last event's bytes changed in place
	}
	return h, nil
}

// Load implements veto.Store. The history is loaded only if a rule reads
// it, and knowledge is looked up per path: a decision costs the same for a
// run of ten observations and of a hundred thousand.
func (s *Store) Load(ctx context.Context, run string) (veto.RunState, error) {
	// A dialect that owns its rows trusts the one its own append left
	// only for a load whose append will prove it (the decision's note).
	n := loaded.From(ctx)
	var note *loaded.Note
	if s.d.OwnRows {
		note = n
	}
	h, ok := header{}, false
	held := s.heldIn(ctx)
	if held != nil {
		// Held (Together): the row an append of the transaction left,
		// which no other writer can have moved since.
		h, ok = held.rows[run]
	} else if n != nil && s.d.Hold != nil && (n.Hold || s.movedWithin(run, racingFor)) {
		// Asked to hold the row (tries lost before), or in a run another
		// writer appends to at once: locked and read in a transaction the
		// decision's append commits (rowhold.go).
		var err error
		if h, ok, err = s.holdRow(ctx, n, run); err != nil {
			return veto.RunState{}, unavailable(err)
		}
		if ok {
			note = nil
		}
	}
	if !ok && (s.d.Pipeline != nil || note != nil) {
		h, ok = s.own(run)
	}
	if !ok {
		var err error
		if h, err = s.header(ctx, nil, run); s.gone(err) {
			h, err = s.header(ctx, nil, run) // once more, on a connection that is not
		}
		if err != nil {
			return veto.RunState{}, unavailable(err)
		}
		if s.d.Pipeline != nil && held == nil {
			s.keep(run, h) // the append's guard proves it still the row (pipeline.go)
		}
	}
	if note != nil {
		note.V = h // the append proves the row still this (append.go)
	}
	st := veto.RunState{Run: run, Next: h.next, Approvals: &approvals{s: s, run: run}}
	if !h.exists {
		return st, nil
	}
	complete := h.started && h.startComplete && !h.damaged
	st.History = veto.LazyHistory(int(h.nObs), complete, func() ([]veto.Observation, error) {
		return s.observations(context.WithoutCancel(ctx), run, h.nObs)
	})
	st.Knowledge = knowledge{s, run}
	st.Tally = tallied{s, run}
	st.Approvals = &approvals{s: s, run: run, damaged: h.damaged, grants: h.nGrants, suspended: h.nSuspended}
	return st, nil
}

// tallied answers veto.Tally from the tally tables.
type tallied knowledge

// Calls implements veto.Tally.
func (k tallied) Calls(ctx context.Context) (map[string]int, error) {
	return k.counts(ctx, `SELECT tool, n FROM veto_tally_calls WHERE run = ? AND n > 0`, k.run)
}

// Failed implements veto.Tally.
func (k tallied) Failed(ctx context.Context, target veto.Target) (map[string]int, error) {
	return k.counts(ctx, `SELECT tool, n FROM veto_tally_failed WHERE run = ? AND target_kind = ? AND target_id = ? AND n > 0`,
		k.run, string(target.Kind), target.ID)
}

func (k tallied) counts(ctx context.Context, query string, args ...any) (map[string]int, error) {
	rows, err := k.s.query(ctx, nil, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var tool string
		var n int64
		if err := rows.Scan(&tool, &n); err != nil {
			return nil, unavailable(err)
		}
		m[tool] = int(n)
	}
	return m, unavailable(rows.Err())
}

// Files implements veto.Tally.
func (k tallied) Files(ctx context.Context) ([]veto.Observation, error) {
	return k.s.observationRows(ctx, 0, `SELECT o.seq, o.call_id, o.tool, o.outcome, o.target_kind, o.target_id
		FROM veto_tally_files f JOIN veto_observations o ON o.run = f.run AND o.idx = f.first_idx
		WHERE f.run = ? AND f.n > 0 ORDER BY o.idx`, k.run)
}

func (s *Store) observations(ctx context.Context, run string, n int64) ([]veto.Observation, error) {
	return s.observationRows(ctx, n, `SELECT seq, call_id, tool, outcome, target_kind, target_id FROM veto_observations
		WHERE run = ? AND idx < ? ORDER BY idx`, run, n)
}

// observationRows runs a query for observations (seq, call_id, tool,
// outcome, target_kind, target_id); n is how many to make room for.
func (s *Store) observationRows(ctx context.Context, n int64, query string, args ...any) ([]veto.Observation, error) {
	rows, err := s.query(ctx, nil, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	out := make([]veto.Observation, 0, n)
	for rows.Next() {
		var o veto.Observation
		var seq int64
		var outcome string
		if err := rows.Scan(&seq, &o.CallID, &o.Tool, &outcome, &o.Target.Kind, &o.Target.ID); err != nil {
			return nil, unavailable(err)
		}
		o.Seq, o.Outcome = uint64(seq), veto.Outcome(outcome)
		out = append(out, o)
	}
	return out, unavailable(rows.Err())
}

type knowledge struct {
	s   *Store
	run string
}

func (k knowledge) File(ctx context.Context, path string) (veto.FileFact, bool, error) {
	var raw string
	err := k.s.queryRow(ctx, nil, `SELECT fact FROM veto_knowledge WHERE run = ? AND path = ?`, k.run, path).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return veto.FileFact{}, false, nil
	}
	if err != nil {
		return veto.FileFact{}, false, unavailable(err)
	}
	var f veto.FileFact
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return veto.FileFact{}, false, unavailable(err)
	}
	return f, true, nil
}

// Egress implements veto.Knowledge.
func (k knowledge) Egress(ctx context.Context) ([]string, error) {
	rows, err := k.s.query(ctx, nil, `SELECT host FROM veto_egress WHERE run = ? ORDER BY seq`, k.run)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, h)
	}
	return out, unavailable(rows.Err())
}

// Files implements veto.Knowledge.
func (k knowledge) Files(ctx context.Context) ([]string, error) {
	rows, err := k.s.query(ctx, nil, `SELECT path FROM veto_knowledge WHERE run = ? ORDER BY path`, k.run)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, p)
	}
	return out, unavailable(rows.Err())
}
