package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

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

// unwatchedKey marks a context whose statements run without its
// cancellation (Dialect.LockAtBegin).
type unwatchedKey struct{}

// begin begins an append's write transaction on a connection of the
// pool, waited for until ctx ends. end ends it: rolled back unless it
// was committed, its connection given back; or, after a panic in the
// middle of a statement (a driver's bug), rolled back on the connection
// itself, which is closed and lost to the pool: database/sql still holds
// a lock the statement took, and ending the transaction through it would
// wait for that lock forever, the database's write lock held (SQLite) or
// the run's row locked (PostgreSQL) all along.
//
// With Dialect.LockAtBegin the transaction is unwatched: database/sql
// would watch its context with a goroutine for the transaction and one
// for each query's rows, and the driver with one for the BEGIN and one
// for the COMMIT. The BEGIN, which waits for another process's write
// lock, then waits up to the database's busy timeout (SQLite:
// Options.BusyTimeout; 1 s for a service, three quarters of a hook's
// timeout, below the deadline either way), not until ctx ends; a ctx
// that ended meanwhile refuses the append's first statement
// (unwatched), and its commit, so nothing is written.
//
// The caller holds the turn (commitOnce). Where the pool has more than
// one connection, the connection is kept for the next turn (s.writer),
// not given back: the only one of the process's connections that writes
// keeps its page cache, which SQLite empties on any connection that
// finds the database written by another since its last transaction (the
// B-tree pages each append walks, read again, most of them from the
// WAL, on whichever connection of the pool the append took). A kept
// connection whose BEGIN fails is given back, and the next append takes
// one of the pool's; one database/sql has closed (a driver's
// driver.ErrBadConn) is let go, and this append takes one of the pool's.
//
// at is what the connection knew of the database at its last commit
// (unmoved): the kept connection's, nothing on one of the pool's, and
// kept with the connection for the next turn.
func (s *Store) begin(ctx context.Context) (tx *sql.Tx, at *dataAt, end func(panicked bool), err error) {
	tctx := ctx
	if s.d.LockAtBegin {
		tctx = context.WithoutCancel(ctx)
	}
	// s.writer and s.marker are the turn's: PostgreSQL's appends, which
	// take no turn, write side by side on the pool's connections.
	var c *sql.Conn
	var marker *sql.Stmt
	at = &dataAt{}
	keep := s.turn != nil && !s.closed && s.db.Stats().MaxOpenConnections != 1
	if s.turn != nil {
		c, marker, *at = s.writer, s.marker, s.at
		s.writer, s.marker, s.at = nil, nil, dataAt{}
	}
	if c != nil {
		if tx, err = c.BeginTx(tctx, nil); errors.Is(err, sql.ErrConnDone) {
			// Closed with its statements by database/sql: closing the
			// marker's again would finalize it twice.
			c, marker = nil, nil
		}
	}
	if c == nil {
		*at = dataAt{}
		if c, err = s.db.Conn(ctx); err != nil {
			return nil, nil, nil, err
		}
		tx, err = c.BeginTx(tctx, nil)
	}
	if err != nil {
		letGo(c, marker)
		return nil, nil, nil, err
	}
	return tx, at, func(panicked bool) {
		if panicked {
			abandon(c)
			return
		}
		tx.Rollback() // after a commit, ErrTxDone
		if keep && usable(c) {
			s.writer, s.marker, s.at = c, marker, *at
			return
		}
		letGo(c, marker)
	}, nil
}

// usable reports whether database/sql has not closed c (after a driver's
// driver.ErrBadConn on it).
func usable(c *sql.Conn) bool {
	return c.Raw(func(any) error { return nil }) == nil
}

// letGo gives c back to the pool, and closes marker, prepared on it,
// first; a c database/sql has closed closed marker with it.
func letGo(c *sql.Conn, marker *sql.Stmt) {
	if marker != nil && usable(c) {
		marker.Close()
	}
	c.Close()
}

// abandon rolls back the transaction open on c and closes c's
// connection, without the locks of database/sql's that a panicking
// statement left held; c is not given back. A driver that panics again
// here is let be: Raw would then close c, and wait for the transaction's
// lock forever. A rollback that fails leaves the write lock held (SQLite)
// until the process ends, and every later decision refused as locked;
// each abandoned connection is one fewer in the pool, until the process
// ends (fail closed: a store with none left refuses every decision at
// its deadline).
func abandon(c *sql.Conn) {
	c.Raw(func(dc any) error {
		defer func() { recover() }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if ex, ok := dc.(driver.ExecerContext); ok {
			ex.ExecContext(ctx, "ROLLBACK", nil)
		}
		if cl, ok := dc.(io.Closer); ok {
			cl.Close()
		}
		return nil
	})
}

// unwatched is ctx for the statements of a transaction that holds the
// database's write lock (Dialect.LockAtBegin), which wait for no lock
// and for no connection of the pool: each is refused once ctx has ended,
// and runs without its cancellation, which the driver would watch with a
// goroutine of its own (see watched). Without LockAtBegin it is ctx.
func (s *Store) unwatched(ctx context.Context) context.Context {
	if !s.d.LockAtBegin {
		return ctx
	}
	return context.WithValue(ctx, unwatchedKey{}, true)
}

// watched returns the context to run one statement with: within
// unwatched, once the context is checked, one without its cancellation,
// which the driver would watch with a goroutine of its own. A context
// that has ended is returned as it is, and the statement is refused
// with its error before it runs.
func watched(ctx context.Context) context.Context {
	if ctx.Value(unwatchedKey{}) != nil && ctx.Err() == nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// exec runs query within tx (nil: on the database), prepared when it can.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if p := pipelined(ctx); p != nil {
		p.stmts = append(p.stmts, Stmt{Query: query, Args: args})
		return pipedResult{}, nil
	}
	if tx == nil {
		if h := s.heldIn(ctx); h != nil {
			defer h.notePanic()
			res, err := s.exec(ctx, h.tx, query, args...)
			h.noteErr(err)
			return res, err
		}
		if r := s.rowHeldIn(ctx); r != nil {
			return r.c.ExecContext(ctx, s.q(query), args...) // the held row's try: on its connection, in its transaction (rowhold.go)
		}
	}
	ctx = watched(ctx)
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
	if tx == nil {
		if h := s.heldIn(ctx); h != nil {
			defer h.notePanic()
			rows, err := s.query(ctx, h.tx, query, args...)
			h.noteErr(err)
			return rows, err
		}
		if r := s.rowHeldIn(ctx); r != nil {
			return r.c.QueryContext(ctx, s.q(query), args...) // the held row's try: on its connection, in its transaction (rowhold.go)
		}
	}
	ctx = watched(ctx)
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
	if tx == nil {
		if h := s.heldIn(ctx); h != nil {
			defer h.notePanic()
			r := s.queryRow(ctx, h.tx, query, args...)
			h.noteErr(r.Err()) // the query's, not sql.ErrNoRows, which only Scan returns
			return r
		}
		if r := s.rowHeldIn(ctx); r != nil {
			return r.c.QueryRowContext(ctx, s.q(query), args...) // the held row's try: on its connection, in its transaction (rowhold.go)
		}
	}
	ctx = watched(ctx)
	if st := s.use(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if tx != nil {
		return tx.QueryRowContext(ctx, s.q(query), args...)
	}
	return s.db.QueryRowContext(ctx, s.q(query), args...)
}

// q rewrites "?" markers into the dialect's.
func (s *Store) q(query string) string { return Rebind(query, s.d.Placeholder) }

// Rebind rewrites a query's "?" markers with placeholder (the i-th,
// 1-based); nil leaves them.
func Rebind(query string, placeholder func(i int) string) string {
	if placeholder == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString(placeholder(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// Markers is the rewriting of "?" markers for a dialect by name, for
// tables kept beside veto's own (tokens, pins): "postgres" numbers them
// ($1, $2, …); any other keeps them.
func Markers(dialect string) func(query string) string {
	if dialect != "postgres" {
		return func(q string) string { return q }
	}
	return func(q string) string { return Rebind(q, func(i int) string { return "$" + strconv.Itoa(i) }) }
}

// pipedResult is the result of a statement collected for a pipelined
// batch: not run yet, so it knows no rows (an append that needs them is
// not pipelined).
type pipedResult struct{}

var errPiped = errors.New("sqlstore: a pipelined statement's rows are not known")

func (pipedResult) LastInsertId() (int64, error) { return 0, errPiped }
func (pipedResult) RowsAffected() (int64, error) { return 0, errPiped }
