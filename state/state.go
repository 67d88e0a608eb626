// Package state opens veto's named state: the SQLite file (the embedded
// default, under the user's state directory) or a PostgreSQL database
// named by a DSN, with the checks of docs/state.md: the file's ownership,
// mode and header, damage, a schema newer than this veto's, another
// writer's lock, room on the disk, and a database that may be down when a
// service starts. veto hook, veto serve-hooks, veto serve, veto ui, veto mcp
// and the CLI open their state here; only this package and the stores
// themselves (sqlite, postgres, sqlstore) import the stores.
//
// Every refusal is a *veto.StateError naming its cause (never a driver's
// message, never a DSN), carried through the error chain to the gate,
// which names it in the call's refusal.
package state

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// Name names a state: the PostgreSQL database DSN when it is set, else
// the SQLite file Path ("": the default path, DefaultPath).
type Name struct {
	Path string
	DSN  string // may hold a password: it names the state in no message
}

// Postgres reports whether the state is a PostgreSQL database.
func (n Name) Postgres() bool { return n.DSN != "" }

// key is the name as a cache's key: the DSN is kept apart from any path.
func (n Name) key() string {
	if n.DSN != "" {
		return "postgres\x00" + n.DSN
	}
	return n.Path
}

// DefaultPath is where the embedded state lives: $XDG_STATE_HOME/veto/veto.db,
// else ~/.local/state/veto/veto.db; its error is a *veto.StateError (no
// home directory).
func DefaultPath() (string, error) { return sqlite.DefaultPath() }

// PostgresName is a PostgreSQL state's name in a refusal's reason.
const PostgresName = postgres.Name

// Resolve is n with the default path filled in for an SQLite state.
func (n Name) Resolve() (Name, error) {
	if n.DSN != "" || n.Path != "" {
		return n, nil
	}
	p, err := DefaultPath()
	if err != nil {
		return n, err
	}
	n.Path = p
	return n, nil
}

// Log is a state's decision log, as the service and veto log read it.
type Log interface {
	veto.Store
	veto.Log
	Runs(ctx context.Context) ([]string, error)
	Scan(ctx context.Context, q veto.LogQuery, fn func(run string, seq uint64, body []byte) error) error
	Chain(ctx context.Context, run string) (first uint64, prev string, stored [][]byte, err error)
	Prune(ctx context.Context, before time.Time) (int, error)
}

// Markers returns the function that writes a query's ? markers in the
// dialect's form ("sqlite" or "postgres"), for the tables kept beside the
// stores' own (MCP pins; tokens are Service.Tokens).
func Markers(dialect string) func(query string) string { return sqlstore.Markers(dialect) }

// refusal is err as a *veto.StateError of the state n.
func refusal(n Name, err error) *veto.StateError {
	if n.DSN != "" {
		se := sqlstore.CauseOf(err, postgres.Classify)
		if se.Path == "" {
			c := *se
			c.Path = PostgresName
			se = &c
		}
		return se
	}
	return sqlite.Refusal(n.Path, err)
}

// Refusal is err, met using the state n, as the *veto.StateError naming
// its cause; nil for nil.
func Refusal(n Name, err error) *veto.StateError {
	if err == nil {
		return nil
	}
	if se := veto.StateErrorOf(err); se != nil {
		return se
	}
	return refusal(n, err)
}

// Cause names what is wrong with a state in a sentence, never a driver's
// message: a refusal's reason, or that the state did not answer in time,
// or could not be reached.
func Cause(err error) string {
	if se := veto.StateErrorOf(err); se != nil {
		return se.Reason()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "veto's state did not answer in time"
	}
	return "veto's state cannot be reached"
}

// db is how a state's database is reached for the tables beside the
// store's: now (an SQLite file is reopened when it moves), nil when the
// state cannot be used.
type db = func() *sql.DB
