package state

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// Service is a state a long-lived process decides on (veto serve, veto
// ui, veto mcp, veto token): an SQLite file proved sound before each
// request (Acquire), or a PostgreSQL pool.
type Service struct {
	// Store is the store the gate decides on; Log the same state's log.
	Store veto.Store
	Log   Log
	// StartErr is why the state could not be used when it was opened: a
	// lazily opened service starts anyway and refuses every call, its
	// cause named, until the state is sound.
	StartErr error

	acquire func(ctx context.Context) (func(), error)
	// together holds one write transaction for several appends (Together).
	together func(ctx context.Context, f func(ctx context.Context)) error
	db       db
	dialect  string
	tokens   *sqlstore.Tokens
	close    func()
}

// ServiceOptions are how a service opens its state.
type ServiceOptions struct {
	// Lazy: a state that cannot be used yet (a database down, a file
	// damaged, locked or on a full disk) is no error; the service starts
	// and every request is refused with the cause until it mends.
	Lazy bool
	// Busy is how long an SQLite writer waits for another's lock (0: one
	// second); Connect how long a PostgreSQL connection may take (0: ten
	// seconds, two when Lazy).
	Busy, Connect time.Duration
}

// OpenService opens the state n for a service. Without o.Lazy a state that
// cannot be used is an error, a *veto.StateError.
func OpenService(ctx context.Context, n Name, o ServiceOptions) (*Service, error) {
	if o.Busy <= 0 {
		o.Busy = time.Second
	}
	if n.DSN != "" && o.Lazy {
		if o.Connect <= 0 {
			o.Connect = 2 * time.Second
		}
		l := &lazyPG{dsn: n.DSN, connect: o.Connect}
		_, err := l.get(ctx)
		return withTokens(&Service{Store: l, Log: l, StartErr: err, acquire: l.acquire, db: l.db, dialect: "postgres", close: l.close}), nil
	}
	if n.DSN != "" {
		if o.Connect <= 0 {
			o.Connect = 10 * time.Second
		}
		cctx, cancel := context.WithTimeout(ctx, o.Connect)
		defer cancel()
		s, err := postgres.Open(cctx, n.DSN)
		if err != nil {
			return nil, Refusal(n, err)
		}
		named := postgres.Named(s) // its failures name their cause
		return withTokens(&Service{Store: named, Log: named, db: s.DB, dialect: "postgres", close: func() { s.Close() }}), nil
	}
	n, err := n.Resolve()
	if err != nil {
		return nil, err
	}
	f := sqlite.OpenFile(n.Path, sqlite.Options{Verify: true, BusyTimeout: o.Busy})
	release, err := f.Acquire(ctx)
	if err != nil && !o.Lazy {
		f.Close()
		return nil, err
	}
	if err == nil {
		release()
	}
	// A service starts on a state it cannot use yet (damaged, locked,
	// full): every request is refused with the cause, and the file is
	// proved again at each one, as veto state repair or the disk mends it.
	fl := &fileLog{f: f}
	return withTokens(&Service{Store: fl, Log: fl, StartErr: err, acquire: f.Acquire, together: fl.together, db: func() *sql.DB {
		if st := f.Store(); st != nil {
			return st.DB()
		}
		return nil // the file is not open (damaged, locked): every use is refused
	},
		dialect: "sqlite", close: func() { f.Close() }}), nil
}

// withTokens is s with its token store, in the same database.
func withTokens(s *Service) *Service {
	s.tokens = sqlstore.NewTokens(s.db, s.dialect)
	return s
}

// Acquire proves the state sound before a request and holds it until
// release is called: an SQLite file still the file at its path, unmoved,
// else reopened and verified; a PostgreSQL database reached. Its error is
// a *veto.StateError.
func (s *Service) Acquire(ctx context.Context) (release func(), err error) {
	if s.acquire == nil {
		return func() {}, nil
	}
	return s.acquire(ctx)
}

// Together runs f with one write transaction held for it, on an SQLite
// file (sqlite.File.Together): what f appends is stored in one commit, or
// none of it is, and the error is that commit's. Elsewhere f runs as it
// would alone. The caller holds Acquire.
func (s *Service) Together(ctx context.Context, f func(ctx context.Context)) error {
	if s.together == nil {
		f(ctx)
		return nil
	}
	return s.together(ctx, f)
}

// Tokens is veto serve's tokens, kept in the state's database beside the
// store's tables: a PostgreSQL state's tokens are every instance's; an
// SQLite state's follow the file when it is reopened. Use it while the
// state is acquired, as the store.
func (s *Service) Tokens() veto.TokenStore { return s.tokens }

// DB is the state's database now, for the tables kept beside the
// store's (MCP pins); nil while it cannot be reached.
func (s *Service) DB() *sql.DB { return s.db() }

// DBFunc is DB as a function, for a table that must follow an SQLite file
// reopened when it moved.
func (s *Service) DBFunc() func() *sql.DB { return s.db }

// Dialect is "sqlite" or "postgres".
func (s *Service) Dialect() string { return s.dialect }

// Close closes the state.
func (s *Service) Close() { s.close() }

// fileLog is an SQLite file as a service's store and decision log, used
// while the file is acquired. Its appends take turns in the process:
// SQLite has one writer at a time, and writers queued here wait in order
// rather than in SQLite's busy loop, which sleeps in growing steps (at
// concurrency 64, 14 of about 730 calls in 3 s ran past its timeout).
type fileLog struct {
	f  *sqlite.File
	mu sync.Mutex
}

func (l *fileLog) Load(ctx context.Context, run string) (veto.RunState, error) {
	return l.f.Load(ctx, run)
}

func (l *fileLog) Append(ctx context.Context, run string, next uint64, evs []veto.Event) error {
	if ctx.Value(heldBy{}) != l { // within together, which holds mu
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	return l.f.Append(ctx, run, next, evs)
}

// heldBy marks a context within together: its appends are the
// transaction's, and mu is held for them.
type heldBy struct{}

// together is the file's Together, its appends taking their turn here
// first, as every other append of the file does: the same order, so that
// one holding the transaction and one waiting for it never wait for each
// other.
func (l *fileLog) together(ctx context.Context, f func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Together(ctx, func(ctx context.Context) { f(context.WithValue(ctx, heldBy{}, l)) })
}

func (l *fileLog) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	return l.f.Events(ctx, run, after)
}

func (l *fileLog) Runs(ctx context.Context) ([]string, error) { return l.f.Store().Runs(ctx) }

func (l *fileLog) Scan(ctx context.Context, q veto.LogQuery, fn func(string, uint64, []byte) error) error {
	return l.f.Store().Scan(ctx, q, fn)
}

func (l *fileLog) Chain(ctx context.Context, run string) (uint64, string, [][]byte, error) {
	return l.f.Store().Chain(ctx, run)
}

func (l *fileLog) Prune(ctx context.Context, before time.Time) (int, error) {
	return l.f.Store().Prune(ctx, before)
}

func (l *fileLog) Waiting(ctx context.Context, q veto.WaitQuery) ([]veto.Question, error) {
	return l.f.Store().Waiting(ctx, q)
}

// Decided is the call's decision (veto.Decisions): an observation is
// taken only for a call decided in its run, for the same actor.
func (l *fileLog) Decided(ctx context.Context, run, callID string) (veto.Event, bool, error) {
	return l.f.Decided(ctx, run, callID)
}

// A service's store finds a call's decision: without it every
// observation would be refused as of a call never decided.
var (
	_ veto.Decisions = (*fileLog)(nil)
	_ veto.Decisions = (*lazyPG)(nil)
)
