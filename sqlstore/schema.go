package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/vetohq/veto"
)

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
		return &veto.StateError{Cause: veto.CauseNewer, Detail: fmt.Sprintf("%d migrations, this veto knows %d", done, len(s.d.Migrations))}
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
		if err := s.backfill(ctx, tx, i+1, done); err != nil {
			tx.Rollback()
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

// Migrations returns how many migrations the database records: veto's
// schema marker. More than the dialect knows is a StateError of cause
// veto.CauseNewer.
func (s *Store) Migrations(ctx context.Context) (int, error) {
	var done int
	err := s.queryRow(ctx, nil, markerQuery).Scan(&done)
	return s.migrations(done, err)
}

// markerQuery reads veto's schema marker.
const markerQuery = `SELECT CAST(value AS INTEGER) FROM veto_meta WHERE key = 'migrations'`

// MigrationsUnwatched is Migrations, read on a connection of the pool
// waited for until ctx ends, and run without ctx's cancellation, which
// the driver and database/sql would each watch with a goroutine: a
// long-lived process proves its file with it before every request
// (sqlite.File). The read is of one row and, with Dialect.LockAtBegin
// (WAL mode), waits for no lock. Without LockAtBegin it is Migrations.
//
// When no append of the process is writing, it is read on the
// connection the appends keep (see begin), prepared there once: SQLite
// parsed the query at every request, and, on a connection the appends
// do not write on, read its page again after each append. While an
// append has the turn it is read on a connection of the pool, as the
// proof is not worth queueing behind the append for.
func (s *Store) MigrationsUnwatched(ctx context.Context) (int, error) {
	if !s.d.LockAtBegin {
		return s.Migrations(ctx)
	}
	if done, ok, err := s.markerOnWriter(ctx); ok {
		return s.migrations(done, err)
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return 0, unavailable(err)
	}
	// A read that panics (a driver's bug) leaves a lock of database/sql's
	// on c held, which closing c would wait for forever: c is then lost
	// to the pool, not closed.
	read := false
	defer func() {
		if read {
			c.Close()
		}
	}()
	var done int
	err = c.QueryRowContext(context.WithoutCancel(ctx), markerQuery).Scan(&done)
	read = true
	return s.migrations(done, err)
}

// markerOnWriter reads the marker on the appends' kept connection, when
// there is one and the turn is free (ok); the statement is prepared on it
// at its first read, and let go with it (begin, Close). A read that
// panics (a driver's bug) leaves a lock of database/sql's on the
// connection held: it is let go, neither closed nor used again, and the
// next append takes one of the pool's.
func (s *Store) markerOnWriter(ctx context.Context) (done int, ok bool, err error) {
	if ctx.Err() != nil {
		return 0, false, nil // refused by the pool's wait
	}
	select {
	case s.turn <- struct{}{}:
	default:
		return 0, false, nil
	}
	defer func() { <-s.turn }()
	if s.writer == nil {
		return 0, false, nil
	}
	panicked := true
	defer func() {
		if panicked {
			s.writer, s.marker = nil, nil
		}
	}()
	uctx := context.WithoutCancel(ctx)
	if s.marker == nil {
		st, err := s.writer.PrepareContext(uctx, markerQuery)
		if err != nil {
			panicked = false
			return 0, false, nil // read on the pool's, unprepared
		}
		s.marker = st
	}
	err = s.marker.QueryRowContext(uctx).Scan(&done)
	panicked = false
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		// The connection failed as one (database/sql closes it): let go,
		// its statement with it, and read on one of the pool's.
		letGo(s.writer, s.marker)
		s.writer, s.marker = nil, nil
		return 0, false, nil
	}
	return done, true, err
}

// migrations is Migrations' answer for the marker done, read with err.
func (s *Store) migrations(done int, err error) (int, error) {
	if err != nil {
		return 0, unavailable(err)
	}
	if done > len(s.d.Migrations) {
		return done, &veto.StateError{Cause: veto.CauseNewer, Detail: fmt.Sprintf("%d migrations, this veto knows %d", done, len(s.d.Migrations))}
	}
	return done, nil
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

// ActorSchema is the fifth migration: the actor a question was asked of,
// and the actor a grant is for, so that a grant lets only that actor's
// call through (veto.Approvals.Grant). Answers recorded before it name no
// actor and let no call through; a question asked before it is about no
// actor, and a grant of it only a call of no actor.
func ActorSchema() string {
	return `
ALTER TABLE veto_questions ADD COLUMN actor_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE veto_questions ADD COLUMN actor_id TEXT NOT NULL DEFAULT '';
ALTER TABLE veto_answers ADD COLUMN for_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE veto_answers ADD COLUMN for_id TEXT NOT NULL DEFAULT '';
DROP INDEX veto_answers_grants;
CREATE INDEX veto_answers_grants ON veto_answers (run, tool, args_hash, for_kind, for_id, seq) WHERE granted AND NOT used;`
}

// ApprovalSchema is the fourth migration: each run's questions, a
// person's answers to them and its suspended calls (see veto.Approvals),
// kept as events are appended; the counts on the run's row let a decision
// in a run with no grant or suspension skip the lookup, and the answers'
// indexes hold only the answers no decision used, so that a lookup does
// not pass over every use of a grant the person gave again and again. veto_shown holds
// what a person is shown of a question (veto.Shown), apart from the log.
// The rows of the events already recorded are folded in by backfill.
func ApprovalSchema(blob, bigint, boolean string) string {
	return strings.NewReplacer("BLOB", blob, "BIGINT", bigint, "BOOL", boolean).Replace(`
ALTER TABLE veto_runs ADD COLUMN n_grants BIGINT NOT NULL DEFAULT 0;
ALTER TABLE veto_runs ADD COLUMN n_suspended BIGINT NOT NULL DEFAULT 0;
CREATE TABLE veto_questions (
	run TEXT NOT NULL,
	seq BIGINT NOT NULL,
	call_id TEXT NOT NULL,
	at_ns BIGINT NOT NULL,
	tool TEXT NOT NULL,
	rule TEXT NOT NULL,
	reason TEXT NOT NULL,
	risk BIGINT NOT NULL,
	args_hash TEXT NOT NULL,
	is_last BOOL NOT NULL,
	answered BOOL NOT NULL,
	PRIMARY KEY (run, seq)
);
CREATE INDEX veto_questions_call ON veto_questions (run, call_id, seq);
CREATE INDEX veto_questions_about ON veto_questions (run, tool, args_hash, seq);
CREATE INDEX veto_questions_open ON veto_questions (at_ns) WHERE is_last AND NOT answered;
CREATE TABLE veto_answers (
	run TEXT NOT NULL,
	seq BIGINT NOT NULL,
	call_id TEXT NOT NULL,
	granted BOOL NOT NULL,
	tool TEXT NOT NULL,
	args_hash TEXT NOT NULL,
	expires_ns BIGINT NOT NULL,
	used BOOL NOT NULL,
	PRIMARY KEY (run, seq)
);
CREATE INDEX veto_answers_grants ON veto_answers (run, tool, args_hash, seq) WHERE granted AND NOT used;
CREATE INDEX veto_answers_refusals ON veto_answers (run, call_id, seq) WHERE NOT granted AND NOT used;
CREATE TABLE veto_suspended (
	run TEXT NOT NULL,
	call_id TEXT NOT NULL,
	PRIMARY KEY (run, call_id)
);
CREATE TABLE veto_shown (
	run TEXT NOT NULL,
	call_id TEXT NOT NULL,
	expires_ns BIGINT NOT NULL,
	body BLOB NOT NULL,
	PRIMARY KEY (run, call_id)
);`)
}
