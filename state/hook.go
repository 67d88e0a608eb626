package state

import (
	"context"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// Opener opens the state for one hook event: the store and the function
// that lets go of it after the answer. Its error is a *veto.StateError.
type Opener func(ctx context.Context, n Name) (veto.Store, func(), error)

// Key names the state n in a cache of gates: the DSN of a PostgreSQL
// state is kept apart from any path (and must name it in no message).
func Key(n Name) string { return n.key() }

// Once opens the state n for one event and closes it after: veto hook's
// store. An SQLite file's header and schema marker are checked as it
// opens; a PostgreSQL connection is made within busy and its pool closed
// after. busy is also how long an SQLite writer waits for another's lock.
func Once(ctx context.Context, n Name, busy time.Duration) (veto.Store, func(), error) {
	n, err := n.Resolve()
	if err != nil {
		return nil, nil, err
	}
	if n.DSN != "" {
		cctx, cancel := context.WithTimeout(ctx, busy)
		defer cancel()
		st, err := postgres.Open(cctx, n.DSN)
		if err != nil {
			return nil, nil, err
		}
		return postgres.Named(st), func() { st.Close() }, nil
	}
	f := sqlite.OpenFile(n.Path, sqlite.Options{BusyTimeout: busy})
	release, err := f.Acquire(ctx)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, func() { release(); f.Close() }, nil
}

// Cache keeps each state open for a hook server's life. Before each
// request an SQLite file is proved sound (still the file at its path,
// unmoved, else reopened and verified, and refused until it is); a
// PostgreSQL database has one pool, opened at its first use (a database
// that was down is tried again at the next request), which reconnects by
// itself.
type Cache struct {
	busy time.Duration // the stores' busy timeout, and a connection's limit

	mu    sync.Mutex
	files map[string]*sqlite.File
	pg    map[string]*sqlstore.Named // by DSN
}

// NewCache returns an empty cache whose stores wait busy for a lock.
func NewCache(busy time.Duration) *Cache {
	return &Cache{busy: busy, files: map[string]*sqlite.File{}, pg: map[string]*sqlstore.Named{}}
}

// maxOpen bounds the files a cache holds: many state files at once
// reopen.
const maxOpen = 64

// Open is an Opener: the cached store of n, proved sound, and the
// release of it after the answer.
func (c *Cache) Open(ctx context.Context, n Name) (veto.Store, func(), error) {
	n, err := n.Resolve()
	if err != nil {
		return nil, nil, err
	}
	if n.DSN != "" {
		return c.openPostgres(ctx, n.DSN)
	}
	c.mu.Lock()
	f, ok := c.files[n.Path]
	if !ok {
		if len(c.files) >= maxOpen {
			for _, f := range c.files {
				f.Close()
			}
			clear(c.files)
		}
		f = sqlite.OpenFile(n.Path, sqlite.Options{Verify: true, BusyTimeout: c.busy})
		c.files[n.Path] = f
	}
	c.mu.Unlock()
	release, err := f.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	return f, release, nil
}

func (c *Cache) openPostgres(ctx context.Context, dsn string) (veto.Store, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.pg[dsn]; ok {
		return st, func() {}, nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.busy)
	defer cancel()
	st, err := postgres.Open(cctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	c.pg[dsn] = postgres.Named(st)
	return c.pg[dsn], func() {}, nil
}

// Close closes every store the cache holds.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.files {
		f.Close()
	}
	for _, st := range c.pg {
		st.Close()
	}
}
