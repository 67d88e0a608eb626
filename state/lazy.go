package state

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlstore"
)

// lazyPG is a PostgreSQL store that a service can start without: while
// the database cannot be reached every use fails (the gate denies
// state_unavailable, its cause named), and it is tried again, at most
// once a second, until it answers. After that the pool reconnects by
// itself.
type lazyPG struct {
	dsn     string
	connect time.Duration // how long one try may take

	mu   sync.Mutex
	s    *sqlstore.Store
	n    *sqlstore.Named // s, its failures named with their cause
	last time.Time
	err  error
}

// retryEvery bounds how often an unreachable database is tried.
const retryEvery = time.Second

func (l *lazyPG) get(ctx context.Context) (*sqlstore.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	if !l.last.IsZero() && time.Since(l.last) < retryEvery {
		return nil, l.err
	}
	l.last = time.Now()
	cctx, cancel := context.WithTimeout(ctx, l.connect)
	defer cancel()
	s, err := postgres.Open(cctx, l.dsn)
	if err != nil {
		l.err = fmt.Errorf("%w: %w", veto.ErrStateUnavailable, err)
		return nil, l.err
	}
	l.s, l.n, l.err = s, postgres.Named(s), nil
	return s, nil
}

// named is the store whose failures name their cause in a decision.
func (l *lazyPG) named(ctx context.Context) (*sqlstore.Named, error) {
	if _, err := l.get(ctx); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, nil
}

func (l *lazyPG) acquire(ctx context.Context) (func(), error) {
	_, err := l.get(ctx)
	return func() {}, err
}

func (l *lazyPG) db() *sql.DB {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		return nil
	}
	return l.s.DB()
}

func (l *lazyPG) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		l.s.Close()
	}
}

func (l *lazyPG) Load(ctx context.Context, run string) (veto.RunState, error) {
	s, err := l.named(ctx)
	if err != nil {
		return veto.RunState{}, err
	}
	return s.Load(ctx, run)
}

func (l *lazyPG) Append(ctx context.Context, run string, next uint64, evs []veto.Event) error {
	s, err := l.named(ctx)
	if err != nil {
		return err
	}
	return s.Append(ctx, run, next, evs)
}

func (l *lazyPG) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	s, err := l.named(ctx)
	if err != nil {
		return nil, err
	}
	return s.Events(ctx, run, after)
}

// Decided finds a call's recorded decision (idempotent deciding).
func (l *lazyPG) Decided(ctx context.Context, run, callID string) (veto.Event, bool, error) {
	s, err := l.named(ctx)
	if err != nil {
		return veto.Event{}, false, err
	}
	return s.Decided(ctx, run, callID)
}

func (l *lazyPG) Runs(ctx context.Context) ([]string, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Runs(ctx)
}

func (l *lazyPG) Scan(ctx context.Context, q veto.LogQuery, fn func(string, uint64, []byte) error) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Scan(ctx, q, fn)
}

func (l *lazyPG) Waiting(ctx context.Context, q veto.WaitQuery) ([]veto.Question, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Waiting(ctx, q)
}

func (l *lazyPG) Chain(ctx context.Context, run string) (uint64, string, [][]byte, error) {
	s, err := l.get(ctx)
	if err != nil {
		return 0, "", nil, err
	}
	return s.Chain(ctx, run)
}

func (l *lazyPG) Prune(ctx context.Context, before time.Time) (int, error) {
	s, err := l.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.Prune(ctx, before)
}
