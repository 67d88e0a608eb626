package server_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlstore"
	"github.com/vetohq/veto/state"
)

// trips counts the round trips pgx makes to the server: each query or
// exec outside a batch (begin and commit included), each prepare, each
// pipelined batch. A batch is one trip however many statements it holds.
type trips struct {
	mu    sync.Mutex
	n     int
	stmts []string // what was sent, in order
}

func (t *trips) add(s string) {
	t.mu.Lock()
	t.n++
	t.stmts = append(t.stmts, s)
	t.mu.Unlock()
}

func (t *trips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.add(d.SQL)
	return ctx
}
func (t *trips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (t *trips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	t.add("prepare: " + d.SQL)
	return ctx
}
func (t *trips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
func (t *trips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	t.add("batch")
	return ctx
}
func (t *trips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *trips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// reset returns the count so far and what was sent, and starts again.
func (t *trips) reset() (int, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, s := t.n, t.stmts
	t.n, t.stmts = 0, nil
	return n, s
}

// countedPG is a PostgreSQL store on a schema of the test's own whose
// connections report every round trip to the returned counter.
func countedPG(t testing.TB) (*sqlstore.Store, *trips) {
	t.Helper()
	tr := &trips{}
	return configuredPG(t, func(cfg *pgx.ConnConfig) { cfg.Tracer = tr }), tr
}

// configuredPG is a PostgreSQL store on a schema of the test's own whose
// connections are configured by set.
func configuredPG(t testing.TB, set func(*pgx.ConnConfig)) *sqlstore.Store {
	t.Helper()
	cfg, err := pgx.ParseConfig(freshPG(t))
	if err != nil {
		t.Fatal(err)
	}
	set(cfg)
	name := stdlib.RegisterConnConfig(cfg)
	t.Cleanup(func() { stdlib.UnregisterConnConfig(name) })
	st, err := postgres.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// decideN decides n allowed Reads in run over HTTP, from call id from on.
func decideN(t testing.TB, s *service, tok, run string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		code, v := s.post("/v1/decide", tok, s.call(callID(i), run, "Read", map[string]any{"file_path": filepath.Join(s.work, "README.md")}))
		if code != 200 || v["verdict"] != "allow" {
			t.Fatalf("call %d: %d %v", i, code, v)
		}
	}
}

func callID(i int) string { return "c" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) }

// wantTrips is how many round trips to PostgreSQL one allowed decision in
// a run this instance decided in within the second makes, its load and
// its append: one pipelined batch (12 before: the load's read, then
// begin, the row locked and read again, 6 writes, commit).
const wantTrips = 1

// TestDecideRoundTripsPostgres counts what one decision sends to
// PostgreSQL, through a pgx tracer on the store's connections, once the
// run and its statements are warm.
func TestDecideRoundTripsPostgres(t *testing.T) {
	w := newWorld(t)
	st, tr := countedPG(t)
	s := start(t, w, st, "postgres", nil)
	tok := s.token("agent:trips")
	decideN(t, s, tok, "trips", 0, 5) // the run made, statements prepared, token cached
	tr.reset()
	const n = 10
	decideN(t, s, tok, "trips", 5, n)
	got, sent := tr.reset()
	t.Logf("%d round trips for %d decisions; one decision sends:", got, n)
	for _, q := range sent[:got/n] {
		t.Logf("  %.110s", q)
	}
	if got != n*wantTrips {
		t.Fatalf("%d decisions made %d round trips, want %d each", n, got, wantTrips)
	}
}

// BenchmarkDecidePostgres is BenchmarkDecideSQLite on PostgreSQL; it
// reports the round trips a decision makes.
func BenchmarkDecidePostgres(b *testing.B) {
	w := newWorld(b)
	st, tr := countedPG(b)
	s := start(b, w, st, "postgres", nil)
	tr.reset()
	benchDecide(b, s, w)
	n, _ := tr.reset()
	b.ReportMetric(float64(n)/float64(b.N), "trips/op")
}

// svcStore is a service's store with its database, as start wants it.
type svcStore struct {
	state.Log
	db func() *sql.DB
}

func (s svcStore) DB() *sql.DB { return s.db() }

// BenchmarkDecideSQLiteService is BenchmarkDecideSQLite on the state
// veto serve opens (package state): the file proved sound before each
// request, its tokens in it.
func BenchmarkDecideSQLiteService(b *testing.B) {
	w := newWorld(b)
	ctx := context.Background()
	svc, err := state.OpenService(ctx, state.Name{Path: filepath.Join(b.TempDir(), "veto.db")}, state.ServiceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(svc.Close)
	release, err := svc.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	st := svcStore{svc.Log, svc.DBFunc()}
	release()
	s := start(b, w, st, "sqlite", func(c *server.Config) {
		c.Acquire = svc.Acquire
		c.Tokens = server.NewTokens(svc.Tokens())
	})
	s.toks = s.h.Config().Tokens
	benchDecide(b, s, w)
}

// TestDecideProvesTheStateOnce: a decision whose token was verified
// within the cache's second proves the state once (Config.Acquire), for
// the decision, not once more for the token; a token not in the cache
// is verified with the state proved.
func TestDecideProvesTheStateOnce(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	var mu sync.Mutex
	acquired := 0
	s := start(t, w, st, d, func(c *server.Config) {
		c.Acquire = func(context.Context) (func(), error) {
			mu.Lock()
			acquired++
			mu.Unlock()
			return func() {}, nil
		}
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := acquired
		acquired = 0
		return n
	}
	tok := s.token("agent:once")
	decideN(t, s, tok, "once", 0, 1)
	if n := count(); n != 2 {
		t.Fatalf("the first request proved the state %d times, want 2 (the token, then the decision)", n)
	}
	decideN(t, s, tok, "once", 1, 5)
	if n := count(); n != 5 {
		t.Fatalf("5 requests with a cached token proved the state %d times, want 5", n)
	}
}

// BenchmarkCommitFloorPostgres is the floor a durable decision on
// PostgreSQL cannot go under: one round trip that inserts a row and
// commits it (synchronous_commit as the server has it), on the same
// server, through the same driver.
func BenchmarkCommitFloorPostgres(b *testing.B) {
	st, _ := pgStore(b, freshPG(b))
	ctx := context.Background()
	if _, err := st.DB().ExecContext(ctx, `CREATE TABLE floor (id BIGINT PRIMARY KEY, body BYTEA NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 600) // about a decision event's stored bytes
	i := int64(0)
	for b.Loop() {
		i++
		if _, err := st.DB().ExecContext(ctx, `INSERT INTO floor (id, body) VALUES ($1, $2)`, i, body); err != nil {
			b.Fatal(err)
		}
	}
}
