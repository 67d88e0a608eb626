package state

import (
	"context"
	"time"

	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// Durable is an opened state with its decision log and its checks, as
// veto log, veto doctor and veto state use it.
type Durable interface {
	Log
	// CheckRuns reads every run's stored events and says which are
	// damaged in place.
	CheckRuns(ctx context.Context) ([]RunCheck, error)
	// MarkIncomplete records a run's history incomplete for good.
	MarkIncomplete(ctx context.Context, run string) error
	Close() error
}

// RunCheck is what CheckRuns found of one run.
type RunCheck = sqlstore.RunCheck

// DurableOptions are how a command opens a state it reads or checks.
type DurableOptions struct {
	// Verify checks an SQLite file's pages as it opens (quick_check).
	Verify bool
	// Probe proves that the state can take a write: an SQLite file's
	// write lock within Busy and room on its disk.
	Probe bool
	// Busy is how long to wait for another writer's lock, or for the
	// database to answer (0: two seconds for SQLite, no limit but ctx's
	// for PostgreSQL).
	Busy time.Duration
}

// OpenDurable opens the state n (an SQLite file is made when missing,
// with its schema). Its error is a *veto.StateError naming the cause; the
// state is closed then.
func OpenDurable(ctx context.Context, n Name, o DurableOptions) (Durable, error) {
	n, err := n.Resolve()
	if err != nil {
		return nil, err
	}
	if n.DSN != "" {
		if o.Busy > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.Busy)
			defer cancel()
		}
		s, err := postgres.Open(ctx, n.DSN)
		if err != nil {
			return nil, Refusal(n, err)
		}
		return s, nil
	}
	s, err := sqlite.Open(ctx, n.Path, sqlite.Options{Verify: o.Verify, BusyTimeout: o.Busy})
	if err != nil {
		return nil, Refusal(n, err)
	}
	if o.Probe {
		if err := sqlite.Probe(ctx, s, n.Path); err != nil {
			s.Close()
			return nil, Refusal(n, err)
		}
	}
	return s, nil
}

// Repaired is what Repair did to a damaged SQLite state.
type Repaired struct {
	Aside string   // where the damaged file was moved, kept for a post-mortem ("": not moved)
	New   bool     // a new state was started at the path
	Runs  []string // the runs the damaged file's bytes name, marked incomplete in the new state
	// Unread: the damaged file's bytes could not be read, so no run could
	// be marked.
	Unread bool
}

// Repair moves the damaged SQLite state at path aside, starts a new one
// there, and marks every run the damaged file's bytes name incomplete in
// it. It stops at the first failure, a *veto.StateError, with what it
// did so far.
func Repair(ctx context.Context, path string) (Repaired, error) {
	var r Repaired
	runs, rerr := sqlite.RunsIn(path, path+"-wal")
	r.Unread = rerr != nil
	aside, err := sqlite.MoveAside(path, time.Now())
	if err != nil {
		return r, sqlite.Refusal(path, err)
	}
	r.Aside = aside
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return r, sqlite.Refusal(path, err)
	}
	defer s.Close()
	r.New = true
	for _, run := range runs {
		if err := s.MarkIncomplete(ctx, run); err != nil {
			return r, sqlite.Refusal(path, err)
		}
		r.Runs = append(r.Runs, run)
	}
	return r, nil
}
