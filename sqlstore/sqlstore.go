// Package sqlstore is the part of veto's durable stores that SQLite and
// PostgreSQL share: the tables, the atomic append with the expected
// sequence number, the per-run projections (history, knowledge) kept so a
// decision never scans the log, the hash chain, and the log queries.
// Packages sqlite and postgres open the database and supply the dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/runlock"
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
	// Scrub, when set, makes the database drop what it may still hold of
	// deleted rows (SQLite: the WAL's frames), after the arguments a
	// person was shown are deleted.
	Scrub func(ctx context.Context, db *sql.DB) error
	// Pipeline, when set, runs appends as one batch, one round trip and
	// one commit (pipeline.go, group.go): each piece's Guard proved, then
	// its statements, in order; all or none. When a piece's guard or
	// statement fails, at is its index (ErrNotPipelined: its guard found
	// it must read first); at < 0 when the batch failed as a whole (the
	// connection, the commit). Nothing is stored on any error.
	Pipeline func(ctx context.Context, db *sql.DB, pieces []Piece) (at int, err error)
	// Hold, when set, begins a transaction on c, locks run's row in it
	// (made when missing, as LockRun makes it) and then runs read, scanning
	// its one row into dest (sql.ErrNoRows: none), all in one round trip
	// (PostgreSQL: one pipelined batch); the transaction stays open on c.
	// A try that holds a run's row from its load to its append holds it so
	// (rowhold.go).
	Hold func(ctx context.Context, c *sql.Conn, run string, read Stmt, dest ...any) error
	// PipelineIn, with Hold, runs pieces as Pipeline does, in the
	// transaction Hold left open on c, and commits it, in one round trip.
	// When a piece fails, the transaction is left open and as it was
	// before the batch (a savepoint), so that after ErrNotPipelined the
	// append is made statement by statement there.
	PipelineIn func(ctx context.Context, c *sql.Conn, pieces []Piece) (at int, err error)
	// Group is the most appends one commit carries (group.go); 0 or 1:
	// each append commits alone.
	Group int
	// OwnRows: with no Pipeline, a decision's load within a second of
	// this store's own append to the run reads nothing and takes the row
	// that append left; the append, reading the row under the write lock
	// as it always does, proves it the row the decision was made on
	// (internal/loaded), else nothing is written and the run is decided
	// again on a fresh load. A load of anything else reads the row.
	OwnRows bool
	// DataVersion, where the dialect has one, is a statement answering
	// a number that changes on a connection whenever another connection
	// has committed since that connection's last transaction (SQLite's
	// PRAGMA data_version; another process's commits included, its own
	// not). The appends' kept connection reads it first in each write
	// transaction: unchanged since its last commit, nothing but its own
	// appends wrote, and the rows and the schema are as they left them
	// (unmoved). "": every append reads the rows it builds on.
	DataVersion string
	// LockAtBegin: a write transaction takes the database's one write
	// lock at BEGIN (SQLite's BEGIN IMMEDIATE), and no statement an append
	// runs after it waits for a lock, so the transaction and its
	// statements run without the context's cancellation (unwatched, see
	// begin): database/sql and the driver watch a cancellable context with
	// a goroutine each, per transaction, query and statement. The context
	// is still checked before each statement and before the commit; the
	// BEGIN waits for another process's writer up to the busy timeout.
	LockAtBegin bool
	// Gone, when set, reports an error that says the server ended the
	// session of the connection it came on before running the statement
	// (PostgreSQL: shut down, restarted, the backend terminated). The
	// pool's idle connections ended with it, and each would fail the
	// request that took it next: the store lets them go (LetIdleGo), and a
	// read of the decision's load is made once more on a new one.
	Gone func(err error) bool
}

// LetIdleGo closes db's idle connections now, keeping as many idle after
// as it may open: the server ended their sessions (Dialect.Gone).
func LetIdleGo(db *sql.DB) {
	n := db.Stats().MaxOpenConnections
	if n <= 0 {
		n = 2 // database/sql's own default
	}
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(n)
}

// gone reports whether err says the connection it came on had ended
// (Dialect.Gone), and then lets the pool's idle connections go.
func (s *Store) gone(err error) bool {
	if err == nil || s.d.Gone == nil || !s.d.Gone(err) {
		return false
	}
	LetIdleGo(s.db)
	return true
}

// Store is a veto.Store and veto.Log on a SQL database.
type Store struct {
	db *sql.DB
	d  Dialect

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // the hot path's statements, prepared once
	wanted map[string]bool      // met inside a transaction, to prepare after
	rounds int                  // appends so far: a one-shot process prepares nothing
	heads  map[string]header    // with a Pipeline or OwnRows: each run's row as last read or appended (pipeline.go)
	shared map[string]time.Time // with a Pipeline or OwnRows: when another writer last moved a run under an append
	held   runlock.Locks        // with Dialect.Hold: one try of a run at a time holds its row (rowhold.go)
	nHeld  int                  // runs whose rows tries of this store hold

	g group // appends waiting for the next commit (group.go)

	// With Dialect.LockAtBegin the process's appends take turns here,
	// before the database's write lock: a turn is waited for until the
	// append's context ends, in the order asked, where SQLite's busy
	// handler would have each waiting writer sleep 1, 2, 5, 10 ms and
	// more between tries. writer is the connection they write on, kept
	// between turns (see begin).
	turn   chan struct{}
	writer *sql.Conn
	marker *sql.Stmt // the schema marker's read, prepared on writer (MigrationsUnwatched)
	at     dataAt    // what writer knew of the database at its last commit (unmoved)
	closed bool      // Close has let writer go: an append ending after gives its connection back
}

var (
	_ veto.Store     = (*Store)(nil)
	_ veto.Log       = (*Store)(nil)
	_ veto.Knowledge = knowledge{}
)

// unavailable wraps a failure to reach or use the database: the gate
// refuses the call, state_unavailable, on it.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", veto.ErrStateUnavailable, err)
}

// New wraps db: it checks that the database answers and applies the
// dialect's migrations that have not run. On failure it closes db.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %w", veto.ErrStateUnavailable, err)
	}
	s := &Store{db: db, d: d}
	if d.LockAtBegin {
		s.turn = make(chan struct{}, 1)
	}
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
	if s.turn != nil {
		// The kept connection is in use to database/sql, which would not
		// close it: the last append's turn is waited for, and it is.
		s.turn <- struct{}{}
		if s.writer != nil {
			letGo(s.writer, s.marker)
		}
		s.writer, s.marker, s.closed = nil, nil, true
		<-s.turn
	}
	s.mu.Lock()
	stmts := s.stmts
	s.stmts = nil
	s.mu.Unlock()
	for _, st := range stmts {
		st.Close()
	}
	return s.db.Close()
}
