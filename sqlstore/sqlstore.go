// Package sqlstore is the part of veto's durable stores that SQLite and
// PostgreSQL share: the tables, the atomic append with the expected
// sequence number, the per-run projections (history, knowledge) kept so a
// decision never scans the log, the hash chain, and the log queries.
// Packages sqlite and postgres open the database and supply the dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// Dialect is what differs between databases.
type Dialect struct {
	Name string
	// Migrations are applied in order; the store records how many ran.
	Migrations []string
	// Placeholder returns the i-th (1-based) parameter marker.
	Placeholder func(i int) string
	// LockRun takes the run's write lock inside tx (PostgreSQL: a row
	// lock; SQLite: nothing, the transaction holds the database's).
	LockRun func(ctx context.Context, tx *sql.Tx, q func(string) string, run string) error
	// Conflict reports errors that mean another writer won: a unique
	// violation or a serialization failure.
	Conflict func(err error) bool
}

// Store is a veto.Store and veto.Log on a SQL database.
type Store struct {
	db *sql.DB
	d  Dialect

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // the hot path's statements, prepared once
	wanted map[string]bool      // met inside a transaction, to prepare after
	rounds int                  // appends so far: a one-shot process prepares nothing
}

var (
	_ veto.Store     = (*Store)(nil)
	_ veto.Log       = (*Store)(nil)
	_ veto.Knowledge = knowledge{}
)

// ErrUnavailable wraps every failure to reach or use the database; the
// gate denies state_unavailable on it.
var ErrUnavailable = errors.New("sqlstore: state unavailable")

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// New wraps db: it checks that the database answers and applies the
// dialect's migrations that have not run. On failure it closes db.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	s := &Store{db: db, d: d}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, unavailable(err)
	}
	return s, nil
}

// DB returns the database, for tests that damage it.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	stmts := s.stmts
	s.stmts = nil
	s.mu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
	return s.db.Close()
}

// The hot path's statements are prepared once per store: parsing SQL costs
// more than running these statements (most of a decision's time in
// SQLite). A statement is prepared on the database, never inside a
// transaction and never under s.mu: that needs a connection of the pool,
// which transactions waiting on either could be holding. Inside a
// transaction an unprepared query runs as it is, and is prepared after.

// stmt returns query's prepared statement, nil when there is none yet.
func (s *Store) stmt(query string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stmts[query]
}

// want notes query, met inside a transaction, for prepareWanted.
func (s *Store) want(query string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wanted == nil {
		s.wanted = map[string]bool{}
	}
	s.wanted[query] = true
}

// prepare prepares query on the database, outside any transaction.
func (s *Store) prepare(ctx context.Context, query string) *sql.Stmt {
	st, err := s.db.PrepareContext(ctx, s.q(query))
	if err != nil {
		return nil // it runs unprepared
	}
	s.mu.Lock()
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	old, dup := s.stmts[query]
	if !dup {
		s.stmts[query] = st
		delete(s.wanted, query)
	}
	s.mu.Unlock()
	if dup {
		// Prepared twice at once. Closing waits for every connection it was
		// prepared on, and one may be in a transaction waiting on s.mu or on
		// a run another transaction holds: never under the lock, nor in
		// this caller's way.
		go st.Close()
		return old
	}
	return st
}

// prepareWanted prepares the queries met inside transactions, from the
// second append on (a process that appends once, as veto hook does, would
// only pay for it); call it with no transaction open.
func (s *Store) prepareWanted(ctx context.Context) {
	s.mu.Lock()
	if s.rounds++; s.rounds < 2 || len(s.wanted) == 0 {
		s.mu.Unlock()
		return
	}
	var qs []string
	for q := range s.wanted {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	for _, q := range qs {
		s.prepare(ctx, q)
	}
}

// use returns the statement to run query with: prepared, and bound to tx
// when there is one; nil when it must run unprepared.
func (s *Store) use(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	st := s.stmt(query)
	switch {
	case st != nil && tx != nil:
		return tx.StmtContext(ctx, st)
	case st != nil:
		return st
	case tx != nil:
		s.want(query)
		return nil
	}
	return s.prepare(ctx, query)
}

// exec runs query within tx (nil: on the database), prepared when it can.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.use(ctx, tx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if tx != nil {
		return tx.ExecContext(ctx, s.q(query), args...)
	}
	return s.db.ExecContext(ctx, s.q(query), args...)
}

// query is exec for rows.
func (s *Store) query(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st := s.use(ctx, tx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryContext(ctx, s.q(query), args...)
	}
	return s.db.QueryContext(ctx, s.q(query), args...)
}

// queryRow is exec for one row.
func (s *Store) queryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.use(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryRowContext(ctx, s.q(query), args...)
	}
	return s.db.QueryRowContext(ctx, s.q(query), args...)
}

// q rewrites "?" markers into the dialect's.
func (s *Store) q(query string) string {
	if s.d.Placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString(s.d.Placeholder(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS veto_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		return err
	}
	var done int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT CAST(value AS INTEGER) FROM veto_meta WHERE key = ?`), "migrations").Scan(&done)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if done > len(s.d.Migrations) {
		return fmt.Errorf("the database was written by a newer veto (%d migrations, this veto knows %d)", done, len(s.d.Migrations))
	}
	for i := done; i < len(s.d.Migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.d.Migrations[i]); err != nil {
			tx.Rollback()
			if i == 0 && s.d.Conflict != nil && s.d.Conflict(err) {
				return s.migrate(ctx) // another process migrated first
			}
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM veto_meta WHERE key = ?`), "migrations"); err != nil {
			tx.Rollback()
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO veto_meta (key, value) VALUES (?, ?)`), "migrations", fmt.Sprint(i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			if s.d.Conflict != nil && s.d.Conflict(err) {
				return s.migrate(ctx)
			}
			return err
		}
	}
	return nil
}

// header is a run's row.
type header struct {
	exists                          bool
	next                            uint64
	started, startComplete, damaged bool
	last                            string
	nObs                            int64
}

func (s *Store) header(ctx context.Context, tx *sql.Tx, run string) (header, error) {
	h := header{next: 1}
	var next, nObs int64
	err := s.queryRow(ctx, tx, `SELECT next, started, start_complete, damaged, last_hash, n_obs FROM veto_runs WHERE run = ?`, run).
		Scan(&next, &h.started, &h.startComplete, &h.damaged, &h.last, &nObs)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	h.exists, h.next, h.nObs = true, uint64(next), nObs
	return h, nil
}

// Load implements veto.Store. The history is loaded only if a rule reads
// it, and knowledge is looked up per path: a decision costs the same for a
// run of ten observations and of a hundred thousand.
func (s *Store) Load(ctx context.Context, run string) (veto.RunState, error) {
	h, err := s.header(ctx, nil, run)
	if err != nil {
		return veto.RunState{}, unavailable(err)
	}
	st := veto.RunState{Run: run, Next: h.next}
	if !h.exists {
		return st, nil
	}
	complete := h.started && h.startComplete && !h.damaged
	st.History = veto.LazyHistory(int(h.nObs), complete, func() ([]veto.Observation, error) {
		return s.observations(context.WithoutCancel(ctx), run, h.nObs)
	})
	st.Knowledge = knowledge{s, run}
	st.Tally = tallied{s, run}
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

// Append implements veto.Store: one transaction checks the run's next
// sequence number, chains and stores the events, and updates the
// projections; a crash leaves all of it or none.
func (s *Store) Append(ctx context.Context, run string, next uint64, events []veto.Event) error {
	defer s.prepareWanted(ctx) // after the transaction ends
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(err)
	}
	err = s.append(ctx, tx, run, next, events)
	if err != nil {
		tx.Rollback()
		if errors.Is(err, veto.ErrConflict) || (s.d.Conflict != nil && s.d.Conflict(err)) {
			return veto.ErrConflict
		}
		return unavailable(err)
	}
	if err := tx.Commit(); err != nil {
		if s.d.Conflict != nil && s.d.Conflict(err) {
			return veto.ErrConflict
		}
		return unavailable(err)
	}
	return nil
}

func (s *Store) append(ctx context.Context, tx *sql.Tx, run string, next uint64, events []veto.Event) error {
	if s.d.LockRun != nil {
		if err := s.d.LockRun(ctx, tx, s.q, run); err != nil {
			return err
		}
	}
	h, err := s.header(ctx, tx, run)
	if err != nil {
		return err
	}
	if h.next != next {
		return veto.ErrConflict
	}
	for _, e := range events {
		e.Prev = h.last
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_events (run, seq, at_ns, kind, tool, body) VALUES (?, ?, ?, ?, ?, ?)`,
			run, int64(e.Seq), e.Time.UnixNano(), string(e.Kind), e.Tool, b); err != nil {
			return err
		}
		h.last = eventlog.ChainHash(b)
		if err := s.apply(ctx, tx, run, &h, e); err != nil {
			return err
		}
	}
	if h.exists {
		_, err = s.exec(ctx, tx, `UPDATE veto_runs SET next = ?, started = ?, start_complete = ?, damaged = ?, last_hash = ?, n_obs = ?, updated_ns = ? WHERE run = ?`,
			int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, time.Now().UnixNano(), run)
	} else {
		_, err = s.exec(ctx, tx, `INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, 1, '', ?)`,
			run, int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, time.Now().UnixNano())
	}
	return err
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
func (s *Store) observe(ctx context.Context, tx *sql.Tx, run string, h *header, e veto.Event, o veto.Outcome) error {
	var old veto.Observation
	var idx, seq int64
	var outcome string
	err := s.queryRow(ctx, tx, `SELECT idx, seq, tool, outcome, target_kind, target_id FROM veto_observations WHERE run = ? AND call_id = ?`,
		run, e.CallID).Scan(&idx, &seq, &old.Tool, &outcome, &old.Target.Kind, &old.Target.ID)
	existed := err == nil
	switch {
	case errors.Is(err, sql.ErrNoRows):
		idx = h.nObs
		now := veto.Observation{Seq: e.Seq, CallID: e.CallID, Tool: e.Tool, Outcome: o, Target: e.Target}
		if _, err := s.exec(ctx, tx, `INSERT INTO veto_observations (run, idx, seq, call_id, tool, outcome, target_kind, target_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			run, idx, int64(e.Seq), e.CallID, e.Tool, string(o), string(e.Target.Kind), e.Target.ID); err != nil {
			return err
		}
		h.nObs++
		return s.tally(ctx, tx, run, idx, veto.Observation{}, false, now)
	case err != nil:
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
	return s.tally(ctx, tx, run, idx, old, existed, now)
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

// Events implements veto.Store. Stored bytes that do not decode are
// skipped.
func (s *Store) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT body FROM veto_events WHERE run = ? AND seq > ? ORDER BY seq`), run, int64(after))
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	var out []veto.Event
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, unavailable(err)
		}
		if e, err := eventlog.DecodeEvent(b); err == nil {
			out = append(out, e)
		}
	}
	return out, unavailable(rows.Err())
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
		_, err = tx.ExecContext(ctx, s.q(`UPDATE veto_runs SET next = ?, started = ?, start_complete = ?, damaged = ?, last_hash = ?, n_obs = ? WHERE run = ?`),
			int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs, run)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, 1, '', 0)`),
			run, int64(h.next), h.started, h.startComplete, h.damaged, h.last, h.nObs)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// EgressSchema is the second migration: the egress allow-list projection,
// one row per egress_allowed event.
func EgressSchema(bigint string) string {
	return `CREATE TABLE veto_egress (
	run TEXT NOT NULL,
	seq ` + bigint + ` NOT NULL,
	host TEXT NOT NULL,
	PRIMARY KEY (run, seq)
)`
}

// TallySchema is the third migration: the run's tally (see veto.Tally),
// added up from the observations already recorded.
func TallySchema(bigint string) string {
	return strings.NewReplacer("BIGINT", bigint).Replace(`
CREATE TABLE veto_tally_calls (
	run TEXT NOT NULL,
	tool TEXT NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (run, tool)
);
CREATE TABLE veto_tally_failed (
	run TEXT NOT NULL,
	target_kind TEXT NOT NULL,
	target_id TEXT NOT NULL,
	tool TEXT NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (run, target_kind, target_id, tool)
);
CREATE TABLE veto_tally_files (
	run TEXT NOT NULL,
	target_id TEXT NOT NULL,
	tool TEXT NOT NULL,
	n BIGINT NOT NULL,
	first_idx BIGINT NOT NULL,
	PRIMARY KEY (run, target_id, tool)
);
INSERT INTO veto_tally_calls (run, tool, n)
	SELECT run, tool, COUNT(*) FROM veto_observations WHERE outcome <> 'denied' GROUP BY run, tool;
INSERT INTO veto_tally_failed (run, target_kind, target_id, tool, n)
	SELECT run, target_kind, target_id, tool, COUNT(*) FROM veto_observations
	WHERE outcome = 'failed' AND target_kind <> '' GROUP BY run, target_kind, target_id, tool;
INSERT INTO veto_tally_files (run, target_id, tool, n, first_idx)
	SELECT run, target_id, tool, COUNT(*), MIN(idx) FROM veto_observations
	WHERE outcome <> 'denied' AND target_kind = 'file' GROUP BY run, target_id, tool;`)
}

// Schema is the tables, in a dialect's column types.
func Schema(blob, bigint, boolean string) string {
	return strings.NewReplacer("BLOB", blob, "BIGINT", bigint, "BOOL", boolean).Replace(`
CREATE TABLE veto_runs (
	run TEXT PRIMARY KEY,
	next BIGINT NOT NULL,
	started BOOL NOT NULL,
	start_complete BOOL NOT NULL,
	damaged BOOL NOT NULL,
	last_hash TEXT NOT NULL,
	n_obs BIGINT NOT NULL,
	anchor_seq BIGINT NOT NULL,
	anchor_prev TEXT NOT NULL,
	updated_ns BIGINT NOT NULL
);
CREATE TABLE veto_events (
	run TEXT NOT NULL,
	seq BIGINT NOT NULL,
	at_ns BIGINT NOT NULL,
	kind TEXT NOT NULL,
	tool TEXT NOT NULL,
	body BLOB NOT NULL,
	PRIMARY KEY (run, seq)
);
CREATE INDEX veto_events_at ON veto_events (at_ns, run, seq);
CREATE TABLE veto_observations (
	run TEXT NOT NULL,
	idx BIGINT NOT NULL,
	seq BIGINT NOT NULL,
	call_id TEXT NOT NULL,
	tool TEXT NOT NULL,
	outcome TEXT NOT NULL,
	target_kind TEXT NOT NULL,
	target_id TEXT NOT NULL,
	PRIMARY KEY (run, idx),
	UNIQUE (run, call_id)
);
CREATE TABLE veto_knowledge (
	run TEXT NOT NULL,
	path TEXT NOT NULL,
	fact TEXT NOT NULL,
	PRIMARY KEY (run, path)
);`)
}
