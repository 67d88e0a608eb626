// Package faultdb is a database/sql driver for tests that wraps a real
// driver and makes chosen calls fail: the Nth begin, commit, exec, query,
// row or scan whose query contains a given text. Everything else reaches
// the real driver unchanged, so a test sees the real database's answers
// up to the fault and the store's handling of the fault after it.
//
// It is for tests only: no veto binary imports it.
package faultdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Op is a kind of driver call a fault can be put on.
type Op string

// The calls a fault can be put on.
const (
	Ping     Op = "ping"     // a connection's Ping
	Begin    Op = "begin"    // beginning a transaction
	Commit   Op = "commit"   // committing one
	Rollback Op = "rollback" // rolling one back
	Prepare  Op = "prepare"  // preparing a statement
	Exec     Op = "exec"     // running a statement for no rows (plain or prepared)
	Query    Op = "query"    // running a query (plain or prepared)
	Next     Op = "next"     // fetching a row: rows.Next is false, rows.Err the fault
	Scan     Op = "scan"     // a query whose rows do not scan (one column more than asked for)
)

// ErrInjected is the error a fault returns unless it names another.
var ErrInjected = errors.New("faultdb: injected fault")

// Fault fails calls of one kind.
type Fault struct {
	Op Op
	// Match: the call's query contains it ("" matches every query; begin,
	// commit and rollback have none). For next and scan, the query that
	// made the rows.
	Match string
	// N: the Nth matching call fails (1 the first); 0 fails every one.
	N int
	// Err is returned; nil means ErrInjected.
	Err error
	// Hold, when set, makes the matching call wait until Hold is closed
	// and then reach the real driver: it holds the call, it does not fail
	// it.
	Hold <-chan struct{}
	// Panic, when set, makes the matching call panic with it, as a
	// driver's bug would, instead of failing.
	Panic any

	seen  int
	fired int
}

// Faults is a set of faults, shared by every connection of a DB.
type Faults struct {
	mu     sync.Mutex
	faults []*Fault
}

// Add arms f and returns it, to read how often it fired.
func (fs *Faults) Add(f Fault) *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	p := &f
	fs.faults = append(fs.faults, p)
	return p
}

// Fail arms a fault on the nth call of op whose query contains match.
func (fs *Faults) Fail(op Op, match string, n int) *Fault {
	return fs.Add(Fault{Op: op, Match: match, N: n})
}

// Clear disarms every fault.
func (fs *Faults) Clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.faults = nil
}

// Fired is how many times f failed a call.
func (fs *Faults) Fired(f *Fault) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return f.fired
}

// check returns the error of the first armed fault that fails this call,
// after waiting out the faults that hold it.
func (fs *Faults) check(op Op, query string) error {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	var holds []<-chan struct{}
	for _, f := range fs.faults {
		if f.Op != op || !strings.Contains(query, f.Match) {
			continue
		}
		f.seen++
		if f.N == 0 || f.seen == f.N {
			f.fired++
			if f.Hold != nil {
				holds = append(holds, f.Hold)
				continue
			}
			err, n, p := f.Err, f.seen, f.Panic
			fs.mu.Unlock()
			for _, h := range holds {
				<-h
			}
			if p != nil {
				panic(p)
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: %s #%d", ErrInjected, op, n)
		}
	}
	fs.mu.Unlock()
	for _, h := range holds {
		<-h
	}
	return nil
}

// OpenDB returns a DB on the real driver d at dsn with the faults of fs.
func OpenDB(d driver.Driver, dsn string, fs *Faults) *sql.DB {
	return sql.OpenDB(connector{d: d, dsn: dsn, fs: fs})
}

type connector struct {
	d   driver.Driver
	dsn string
	fs  *Faults
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	var inner driver.Conn
	var err error
	if dc, ok := c.d.(driver.DriverContext); ok {
		var cn driver.Connector
		if cn, err = dc.OpenConnector(c.dsn); err != nil {
			return nil, err
		}
		inner, err = cn.Connect(ctx)
	} else {
		inner, err = c.d.Open(c.dsn)
	}
	if err != nil {
		return nil, err
	}
	return &conn{c: inner, fs: c.fs}, nil
}

func (c connector) Driver() driver.Driver { return c.d }

type conn struct {
	c  driver.Conn
	fs *Faults
}

var (
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.fs.check(Prepare, query); err != nil {
		return nil, err
	}
	var st driver.Stmt
	var err error
	if p, ok := c.c.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.c.Prepare(query)
	}
	if err != nil {
		return nil, err
	}
	return &stmt{s: st, query: query, fs: c.fs}, nil
}

func (c *conn) Close() error { return c.c.Close() }

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.fs.check(Begin, ""); err != nil {
		return nil, err
	}
	var t driver.Tx
	var err error
	if b, ok := c.c.(driver.ConnBeginTx); ok {
		t, err = b.BeginTx(ctx, opts)
	} else {
		t, err = c.c.Begin() //nolint:staticcheck // the driver has nothing newer
	}
	if err != nil {
		return nil, err
	}
	return &tx{t: t, fs: c.fs}, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.c.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip // database/sql prepares it, and the statement checks
	}
	if err := c.fs.check(Exec, query); err != nil {
		return nil, err
	}
	return e.ExecContext(ctx, query, args)
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.c.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if err := c.fs.check(Query, query); err != nil {
		return nil, err
	}
	r, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return newRows(r, query, c.fs), nil
}

func (c *conn) Ping(ctx context.Context) error {
	if err := c.fs.check(Ping, ""); err != nil {
		return err
	}
	if p, ok := c.c.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.c.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.c.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.c.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

type tx struct {
	t  driver.Tx
	fs *Faults
}

func (t *tx) Commit() error {
	if err := t.fs.check(Commit, ""); err != nil {
		t.t.Rollback() // the commit failed: nothing of it is stored
		return err
	}
	return t.t.Commit()
}

func (t *tx) Rollback() error {
	if err := t.fs.check(Rollback, ""); err != nil {
		t.t.Rollback()
		return err
	}
	return t.t.Rollback()
}

type stmt struct {
	s     driver.Stmt
	query string
	fs    *Faults
}

var (
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

func (s *stmt) Close() error  { return s.s.Close() }
func (s *stmt) NumInput() int { return s.s.NumInput() }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	if err := s.fs.check(Exec, s.query); err != nil {
		return nil, err
	}
	return s.s.Exec(args) //nolint:staticcheck // a driver without the context form
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	if err := s.fs.check(Query, s.query); err != nil {
		return nil, err
	}
	r, err := s.s.Query(args) //nolint:staticcheck // a driver without the context form
	if err != nil {
		return nil, err
	}
	return newRows(r, s.query, s.fs), nil
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.s.(driver.StmtExecContext)
	if !ok {
		vs, err := values(args)
		if err != nil {
			return nil, err
		}
		return s.Exec(vs)
	}
	if err := s.fs.check(Exec, s.query); err != nil {
		return nil, err
	}
	return e.ExecContext(ctx, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.s.(driver.StmtQueryContext)
	if !ok {
		vs, err := values(args)
		if err != nil {
			return nil, err
		}
		return s.Query(vs)
	}
	if err := s.fs.check(Query, s.query); err != nil {
		return nil, err
	}
	r, err := q.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return newRows(r, s.query, s.fs), nil
}

func values(args []driver.NamedValue) ([]driver.Value, error) {
	vs := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("faultdb: named arguments need the driver's context methods")
		}
		vs[i] = a.Value
	}
	return vs, nil
}

// rows passes rows on, failing the Nth fetch (next) or reporting one
// column more than the query has, so that no Scan of it succeeds (scan).
type rows struct {
	r     driver.Rows
	query string
	fs    *Faults
	extra bool // one column more: every Scan fails
}

func newRows(r driver.Rows, query string, fs *Faults) *rows {
	return &rows{r: r, query: query, fs: fs, extra: fs.check(Scan, query) != nil}
}

func (r *rows) Columns() []string {
	cs := r.r.Columns()
	if r.extra {
		cs = append(append([]string(nil), cs...), "faultdb_extra")
	}
	return cs
}

func (r *rows) Close() error { return r.r.Close() }

func (r *rows) Next(dest []driver.Value) error {
	if err := r.fs.check(Next, r.query); err != nil {
		return err
	}
	if r.extra {
		dest[len(dest)-1] = nil
		dest = dest[:len(dest)-1]
	}
	return r.r.Next(dest)
}
