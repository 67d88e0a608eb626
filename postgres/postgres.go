// Package postgres is veto's shared store: many veto processes on many
// machines append to one PostgreSQL database. A writer locks its run's row
// for one transaction; two writers never both get a sequence number (the
// events' primary key is (run, seq)), and the loser is told to decide
// again.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the driver

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

var dialect = sqlstore.Dialect{
	Name:        "postgres",
	Migrations:  []string{sqlstore.Schema("BYTEA", "BIGINT", "BOOLEAN"), sqlstore.EgressSchema("BIGINT"), sqlstore.TallySchema("BIGINT"), sqlstore.ApprovalSchema("BYTEA", "BIGINT", "BOOLEAN"), sqlstore.ActorSchema(), claimSchema, claimByCallSchema},
	Placeholder: placeholder,
	LockRun: func(ctx context.Context, tx *sql.Tx, q func(string) string, run string) error {
		if _, err := tx.ExecContext(ctx, makeRun, run); err != nil {
			return err
		}
		var one int
		return tx.QueryRowContext(ctx, q(`SELECT 1 FROM veto_runs WHERE run = ? FOR UPDATE`), run).Scan(&one)
	},
	Pipeline:   pipeline,
	PipelineIn: pipelineIn,
	Hold:       hold,
	Gone:       gone,
	Group:      sqlstore.DefaultGroup,
	Conflict: func(err error) bool {
		var pe *pgconn.PgError
		// unique_violation, serialization_failure, deadlock_detected
		return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "40001" || pe.Code == "40P01")
	},
}

// makeRun makes the row of a run not stored yet, for the lock that
// follows it (LockRun, hold).
const makeRun = `INSERT INTO veto_runs (run, next, started, start_complete, damaged, last_hash, n_obs, anchor_seq, anchor_prev, updated_ns)
	VALUES ($1, 1, false, false, false, '', 0, 1, '', 0) ON CONFLICT (run) DO NOTHING`

// maxConns is the most connections a store opens, and keeps. No path
// holds one while it waits for another (TestConformanceOnOneConnection).
var maxConns = 8 // a test sets it (SetMaxConns)

func placeholder(i int) string { return fmt.Sprintf("$%d", i) }

// Name is a PostgreSQL state's name in a refusal's reason: never the
// DSN, which may hold a password.
const Name = "in PostgreSQL"

// Open connects to the database at dsn (postgres://user@host:port/db) and
// applies the schema when missing. Every error is a *veto.StateError
// naming its cause.
func Open(ctx context.Context, dsn string) (*sqlstore.Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, refusal(err)
	}
	// As many connections kept idle as may be open: database/sql keeps
	// two by default, and closes the rest as each is released, so that
	// under concurrency most appends forked a backend and prepared their
	// statements again (TestConcurrentAppendsKeepTheirConnections).
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s, err := sqlstore.New(ctx, db, dialect)
	if err != nil {
		return nil, refusal(err)
	}
	return s, nil
}

// Named is s with its failures returned as *veto.StateError values,
// named by Name and classified by Classify, so that the gate's refusal
// says why.
func Named(s *sqlstore.Store) *sqlstore.Named {
	return &sqlstore.Named{Store: s, Name: Name, Classify: Classify}
}

func refusal(err error) *veto.StateError {
	se := sqlstore.CauseOf(err, Classify)
	if se.Path == "" {
		c := *se
		c.Path = Name
		se = &c
	}
	return se
}

// Classify names the cause of a driver's error by its SQLSTATE, never its
// message: a server shutting down or starting, a full disk, a lock or a
// statement timeout; anything else (a refused connection, say) is
// unreachable.
func Classify(err error) (veto.Cause, string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100":
			return veto.CauseFull, ""
		case pe.Code == "55P03" || pe.Code == "57014":
			return veto.CauseLocked, ""
		case strings.HasPrefix(pe.Code, "57P"):
			return veto.CauseUnreachable, "the server is shutting down or starting"
		case strings.HasPrefix(pe.Code, "08"):
			return veto.CauseUnreachable, "the connection failed"
		}
	}
	return veto.CauseUnreachable, ""
}
