package evidence_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/evidence"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

var ctx = context.Background()

// backend is one store veto ships with its checkpoint table.
type backend struct {
	name    string
	store   *sqlstore.Store
	dialect string
}

func (b backend) table() *sqlstore.Checkpoints {
	return sqlstore.NewCheckpoints(func() *sql.DB { return b.store.DB() }, b.dialect)
}

// backends opens an SQLite file and a PostgreSQL schema of the test's
// own (skipped, saying how to run it, without a server; a failure in CI).
func backends(t *testing.T) []backend {
	t.Helper()
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	out := []backend{{"sqlite", lite, "sqlite"}}
	if dsn := freshPostgres(t); dsn != "" {
		pg, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		out = append(out, backend{"postgres", pg, "postgres"})
	}
	return out
}

// freshPostgres is pgtest.Fresh, or "" where no server answers (outside
// CI), so that the SQLite half of a test still runs.
func freshPostgres(t *testing.T) string {
	if os.Getenv("CI") == "" {
		db, err := sql.Open("pgx", pgtest.Base())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := db.PingContext(c); err != nil {
			t.Logf("no PostgreSQL at %s: only SQLite", pgtest.Base())
			return ""
		}
	}
	return pgtest.Fresh(t)
}

func newKey(t testing.TB) ed25519.PrivateKey {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func gateOn(t testing.TB, s veto.Store) *veto.Gate {
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// decide has g decide n calls in run, their arguments holding extra.
func decide(t testing.TB, g *veto.Gate, run string, n int, extra string) {
	t.Helper()
	for i := range n {
		c := &veto.Call{ID: fmt.Sprintf("%s-%d-%d", run, time.Now().UnixNano(), i), Tool: "Read",
			Args: map[string]any{"file_path": "README.md", "note": extra}, Run: veto.Run{Ref: run, Fresh: true}}
		if v := g.Decide(ctx, c); !v.Allowed {
			t.Fatalf("run %s: %s", run, v.Reason)
		}
	}
}

func signer(t testing.TB, key ed25519.PrivateKey, table *sqlstore.Checkpoints) *evidence.Signer {
	s, err := evidence.NewSigner(evidence.Options{Key: key, Table: table, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func signAll(t testing.TB, s *evidence.Signer) int {
	t.Helper()
	n, err := s.SignAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func export(t testing.TB, b backend, o evidence.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := evidence.Export(ctx, &buf, b.store, b.table(), o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func verify(t testing.TB, export []byte, pub ed25519.PublicKey) *evidence.Report {
	t.Helper()
	p, err := evidence.Parse(bytes.NewReader(export))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, export)
	}
	return evidence.Verify(p, pub)
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// TestSignedExportVerifies: an export of a signed log verifies on both
// stores, says how many events no checkpoint covers yet, and an export
// of one run or from a time verifies too.
func TestSignedExportVerifies(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			s := signer(t, key, b.table())
			if n := signAll(t, s); n != 0 {
				t.Fatalf("an empty log signed %d checkpoints", n)
			}
			decide(t, g, "r1", 3, "")
			decide(t, g, "r2", 2, "")
			if n := signAll(t, s); n != 1 {
				t.Fatalf("signed %d checkpoints, want 1", n)
			}
			if n := signAll(t, s); n != 0 {
				t.Fatalf("nothing moved, yet %d more checkpoints", n)
			}
			mid := time.Now()
			decide(t, g, "r1", 2, "")
			signAll(t, s)
			decide(t, g, "r2", 2, "") // after the last checkpoint

			r := verify(t, export(t, b, evidence.ExportOptions{}), pubOf(key))
			if !r.OK() {
				t.Fatalf("failures: %v", r.Failures)
			}
			// r1: started + 5 decisions; r2: started + 4.
			if r.Runs != 2 || r.Events != 11 || r.Checkpoints != 2 || r.Uncovered != 2 {
				t.Fatalf("report %+v, want 2 runs, 11 events, 2 checkpoints, 2 uncovered", r)
			}
			r = verify(t, export(t, b, evidence.ExportOptions{Run: "r1"}), pubOf(key))
			if !r.OK() || r.Runs != 1 || r.Events != 6 || r.Uncovered != 0 {
				t.Fatalf("run r1's export: %+v", r)
			}
			r = verify(t, export(t, b, evidence.ExportOptions{Since: mid}), pubOf(key))
			if !r.OK() || r.Events != 4 {
				t.Fatalf("the export since %s: %+v", mid, r)
			}
			// Another key does not verify it.
			r = verify(t, export(t, b, evidence.ExportOptions{}), pubOf(newKey(t)))
			if r.OK() || !strings.Contains(r.Failures[0], "not by this public key") {
				t.Fatalf("verified with another key: %v", r.Failures)
			}
		})
	}
}

// lines is an export's lines, to tamper with.
type lines []string

func linesOf(b []byte) lines { return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") }

func (l lines) bytes() []byte { return []byte(strings.Join(l, "\n") + "\n") }

// find returns the index of the line of run's event seq, or of checkpoint
// n when run is "".
func (l lines) find(t *testing.T, run string, seq uint64) int {
	t.Helper()
	want := fmt.Sprintf(`{"run":%q,"seq":%d,`, run, seq)
	if run == "" {
		want = fmt.Sprintf(`{"checkpoint":{"v":1,"n":%d,`, seq)
	}
	for i, s := range l {
		if strings.HasPrefix(s, want) {
			return i
		}
	}
	t.Fatalf("no line %s", want)
	return 0
}

// TestEvidenceTamperingIsNamed: an export verifies offline with the
// public key; a changed event (in the middle or the last), a removed one
// (in the middle or the last), two swapped, a run removed, a checkpoint's
// signature or body changed and a checkpoint removed each fail, the
// message naming the event (run and sequence number) or the checkpoint;
// on SQLite and PostgreSQL.
// E39
func TestEvidenceTamperingIsNamed(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			s := signer(t, key, b.table())
			decide(t, g, "r1", 3, "")
			decide(t, g, "r2", 1, "")
			signAll(t, s)
			decide(t, g, "r1", 2, "")
			signAll(t, s)
			good := linesOf(export(t, b, evidence.ExportOptions{}))
			if r := verify(t, good.bytes(), pubOf(key)); !r.OK() || r.Uncovered != 0 {
				t.Fatalf("the untouched export: %+v", r)
			}
			edit := func(f func(l lines) lines) []byte {
				return f(append(lines(nil), good...)).bytes()
			}
			cases := []struct {
				name string
				exp  []byte
				want string
			}{
				{"changed in the middle", edit(func(l lines) lines {
					i := l.find(t, "r1", 3)
					l[i] = strings.Replace(l[i], `"tool":"Read"`, `"tool":"Rea"`, 1)
					return l
				}), `run "r1": event 3 was changed`},
				{"changed, the last", edit(func(l lines) lines {
					i := l.find(t, "r1", 6)
					l[i] = strings.Replace(l[i], `"tool":"Read"`, `"tool":"Rea"`, 1)
					return l
				}), `run "r1": event 6 does not match checkpoint 2's signed hash`},
				{"changed, the head of an earlier checkpoint", edit(func(l lines) lines {
					i := l.find(t, "r2", 2)
					l[i] = strings.Replace(l[i], `"tool":"Read"`, `"tool":"Rea"`, 1)
					return l
				}), `run "r2": event 2 does not match checkpoint 1's signed hash`},
				{"removed in the middle", edit(func(l lines) lines {
					i := l.find(t, "r1", 2)
					return append(l[:i], l[i+1:]...)
				}), `run "r1": event 2:`},
				{"removed, the last", edit(func(l lines) lines {
					i := l.find(t, "r1", 6)
					return append(l[:i], l[i+1:]...)
				}), `run "r1": event 6, signed by checkpoint 2, is not in the export`},
				{"two swapped", edit(func(l lines) lines {
					i, j := l.find(t, "r1", 3), l.find(t, "r1", 4)
					l[i], l[j] = l[j], l[i]
					return l
				}), `run "r1": event 3:`},
				{"two events' bytes swapped under their lines", edit(func(l lines) lines {
					i, j := l.find(t, "r1", 3), l.find(t, "r1", 4)
					ei, ej := strings.Index(l[i], `,"event":`), strings.Index(l[j], `,"event":`)
					l[i], l[j] = l[i][:ei]+l[j][ej:], l[j][:ej]+l[i][ei:]
					return l
				}), `run "r1": event 3:`},
				{"a run removed", edit(func(l lines) lines {
					var out lines
					for _, s := range l {
						if !strings.HasPrefix(s, `{"run":"r2",`) {
							out = append(out, s)
						}
					}
					return out
				}), `run "r2": checkpoint 1 signs its event 2, and the export does not hold the run`},
				{"a signature changed", edit(func(l lines) lines {
					i := l.find(t, "", 1)
					k := strings.Index(l[i], `"sig":"`) + len(`"sig":"`)
					c := byte('A')
					if l[i][k] == 'A' {
						c = 'B'
					}
					l[i] = l[i][:k] + string(c) + l[i][k+1:]
					return l
				}), `checkpoint 1: its signature does not verify`},
				{"a checkpoint's head changed", edit(func(l lines) lines {
					i := l.find(t, "", 2)
					l[i] = strings.Replace(l[i], `"seq":6`, `"seq":5`, 1)
					return l
				}), `checkpoint 2: its signature does not verify`},
				{"a checkpoint removed", edit(func(l lines) lines {
					i := l.find(t, "", 1)
					return append(l[:i], l[i+1:]...)
				}), `checkpoint 2:`},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					p, err := evidence.Parse(bytes.NewReader(c.exp))
					if err != nil {
						t.Fatal(err)
					}
					r := evidence.Verify(p, pubOf(key))
					if r.OK() {
						t.Fatalf("a tampered export verifies")
					}
					if !strings.Contains(strings.Join(r.Failures, "\n"), c.want) {
						t.Fatalf("failures %q, none says %q", r.Failures, c.want)
					}
				})
			}
		})
	}
}

// TestCanaryInNoExportOrCheckpoint: a canary in a call's arguments
// appears in no export and in no row of the checkpoint tables.
func TestCanaryInNoExportOrCheckpoint(t *testing.T) {
	const canary = "CANARY-3b91e7-never-stored"
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			decide(t, g, "canary-run-1", 3, canary)
			s := signer(t, key, b.table())
			signAll(t, s)
			exp := export(t, b, evidence.ExportOptions{})
			if bytes.Contains(exp, []byte(canary)) {
				t.Fatalf("the export holds the canary")
			}
			if !bytes.Contains(exp, []byte(`"canary-run-1"`)) {
				t.Fatalf("the export lacks the run: the check proves nothing")
			}
			for _, q := range []string{`SELECT n, at_ns, hash, body, sig FROM veto_checkpoints`, `SELECT run, seq, hash FROM veto_checkpoint_heads`} {
				rows, err := b.store.DB().QueryContext(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					n++
					cols, _ := rows.Columns()
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						t.Fatal(err)
					}
					if row := fmt.Sprint(vals...); strings.Contains(row, canary) {
						t.Fatalf("%s: a row holds the canary", q)
					}
				}
				rows.Close()
				if n == 0 {
					t.Fatalf("%s: no rows: the check proves nothing", q)
				}
			}
		})
	}
}

// TestPrunedExportVerifies: after veto log prune an export starts each
// run from its anchor and still verifies; the checkpoints stay.
func TestPrunedExportVerifies(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			s := signer(t, key, b.table())
			decide(t, g, "p1", 3, "")
			decide(t, g, "p2", 2, "")
			signAll(t, s)
			time.Sleep(2 * time.Millisecond)
			cut := time.Now()
			time.Sleep(2 * time.Millisecond)
			decide(t, g, "p1", 2, "")
			signAll(t, s)
			n, err := b.store.Prune(ctx, cut)
			if err != nil || n != 7 {
				t.Fatalf("pruned %d events (%v), want 7", n, err)
			}
			r := verify(t, export(t, b, evidence.ExportOptions{}), pubOf(key))
			if !r.OK() {
				t.Fatalf("the pruned log's export: %v", r.Failures)
			}
			if r.Events != 2 || r.Checkpoints != 2 || len(r.Notes) == 0 {
				t.Fatalf("report %+v, want 2 events, 2 checkpoints and a note of where runs start", r)
			}
		})
	}
}

// TestSignerSignsByCountAndAtStop: a running signer signs once Every
// events were stored, and once more when it stops, so that nothing
// decided before the stop is left uncovered.
func TestSignerSignsByCountAndAtStop(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			s, err := evidence.NewSigner(evidence.Options{Key: key, Table: b.table(), Every: 5, Poll: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { s.Run(rctx) })
			decide(t, g, "c1", 6, "")
			for deadline := time.Now().Add(time.Minute); ; {
				last, err := b.table().Last(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if last.N > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no checkpoint after 7 events with Every 5")
				}
				time.Sleep(5 * time.Millisecond)
			}
			decide(t, g, "c1", 2, "")
			decide(t, g, "c2", 1, "")
			cancel()
			wg.Wait()
			r := verify(t, export(t, b, evidence.ExportOptions{}), pubOf(key))
			if !r.OK() || r.Uncovered != 0 || r.Checkpoints < 2 {
				t.Fatalf("after the stop: %+v", r)
			}
		})
	}
}

// TestTwoSignersOnePostgresChain: two instances on one PostgreSQL
// database, each deciding and signing at once with the same key, make one
// chain of checkpoints, numbered without a gap, that verifies.
func TestTwoSignersOnePostgresChain(t *testing.T) {
	dsn := pgtest.Fresh(t)
	key := newKey(t)
	var insts []backend
	for i := range 2 {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		insts = append(insts, backend{fmt.Sprint("pg", i), s, "postgres"})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i, in := range insts {
		g := gateOn(t, in.store)
		sg := signer(t, key, in.table())
		wg.Go(func() {
			for j := range 40 {
				for _, run := range []string{fmt.Sprintf("run-%d-%d", i, j%4), "shared"} {
					c := &veto.Call{ID: fmt.Sprintf("c-%d-%d-%s", i, j, run), Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}}
					if v := g.Decide(ctx, c); !v.Allowed {
						errs <- fmt.Errorf("run %s: %s", run, v.Reason)
						return
					}
				}
				if _, err := sg.SignOnce(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	signAll(t, signer(t, key, insts[0].table()))
	r := verify(t, export(t, insts[1], evidence.ExportOptions{}), pubOf(key))
	if !r.OK() || r.Uncovered != 0 || r.Runs != 9 {
		t.Fatalf("two signers' chain: %+v", r)
	}
	if r.Checkpoints < 10 {
		t.Fatalf("%d checkpoints of 80 signings: the signers did not interleave", r.Checkpoints)
	}
}

// TestKeyFiles: keygen writes the private key 0600 and the public key
// beside it, refuses to overwrite, and a private key open to others is
// refused, its message naming no key material.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sign.key")
	id, err := evidence.GenerateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the private key's mode: %v %v", fi.Mode(), err)
	}
	priv, err := evidence.LoadPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := evidence.LoadPublic(path + ".pub")
	if err != nil || !pub.Equal(priv.Public()) || evidence.KeyID(pub) != id {
		t.Fatalf("the public key does not match: %v", err)
	}
	if _, err := evidence.GenerateKey(path); err == nil {
		t.Fatal("keygen overwrote a key")
	}
	raw, _ := os.ReadFile(path)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		os.Chmod(path, mode)
		_, err := evidence.LoadPrivate(path)
		if err == nil || !strings.Contains(err.Error(), "open to others") {
			t.Fatalf("mode %04o: %v", mode, err)
		}
		if strings.Contains(err.Error(), string(raw[30:50])) {
			t.Fatal("the message shows the key")
		}
	}
	if _, err := evidence.LoadPrivate(path + ".pub"); err == nil {
		t.Fatal("a public key loads as a private one")
	}
}

// TestLiveExportVerifies: an export made while calls are decided and
// checkpoints signed verifies: it holds only checkpoints made before it
// read the events, so none signs an event it lacks.
func TestLiveExportVerifies(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			g := gateOn(t, b.store)
			s, err := evidence.NewSigner(evidence.Options{Key: key, Table: b.table(), Every: 2, Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Go(func() { s.Run(rctx) })
			wg.Go(func() {
				for i := 0; rctx.Err() == nil; i++ {
					c := &veto.Call{ID: fmt.Sprint("live-", i), Tool: "Read", Run: veto.Run{Ref: fmt.Sprint("live", i%3), Fresh: true}}
					if v := g.Decide(ctx, c); !v.Allowed {
						t.Errorf("refused: %s", v.Reason)
						return
					}
				}
			})
			defer func() { cancel(); wg.Wait() }()
			// Export until the exports held at least 5 checkpoints, 20
			// times at least.
			for i, deadline := 0, time.Now().Add(time.Minute); ; i++ {
				r := verify(t, export(t, b, evidence.ExportOptions{}), pubOf(key))
				if !r.OK() {
					t.Fatalf("a live export: %v", r.Failures)
				}
				if i >= 20 && r.Checkpoints >= 5 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d checkpoints after a minute of deciding", r.Checkpoints)
				}
			}
		})
	}
}

// TestDamagedEventExportedAsStored: stored bytes that are not JSON go to
// the export in base64, as stored, and verification names the event.
func TestDamagedEventExportedAsStored(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			key := newKey(t)
			decide(t, gateOn(t, b.store), "d1", 2, "")
			if err := b.store.InsertRaw(ctx, "d1", 4, []byte("not json\n{")); err != nil {
				t.Fatal(err)
			}
			signAll(t, signer(t, key, b.table()))
			exp := export(t, b, evidence.ExportOptions{})
			if !bytes.Contains(exp, []byte(`{"run":"d1","seq":4,"event_b64":"`)) {
				t.Fatalf("the damaged event is not in base64:\n%s", exp)
			}
			r := verify(t, exp, pubOf(key))
			if r.OK() || !strings.Contains(strings.Join(r.Failures, "\n"), `run "d1": event 4`) {
				t.Fatalf("the damaged event: %v", r.Failures)
			}
		})
	}
}

// countingTable counts a table's looks for the runs that moved.
type countingTable struct {
	evidence.Table
	mu    sync.Mutex
	moved int
}

func (c *countingTable) Moved(ctx context.Context, limit int) ([]evidence.StoredHead, error) {
	c.mu.Lock()
	c.moved++
	c.mu.Unlock()
	return c.Table.Moved(ctx, limit)
}

func (c *countingTable) looks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moved
}

// TestIdleSignerStopsLooking: once nothing was stored for longer than
// the margin, a signer due by its interval no longer reads the runs'
// heads at every poll; a new event makes it sign again.
func TestIdleSignerStopsLooking(t *testing.T) {
	b := backends(t)[0]
	key := newKey(t)
	g := gateOn(t, b.store)
	table := &countingTable{Table: b.table()}
	s, err := evidence.NewSigner(evidence.Options{Key: key, Table: table, Interval: time.Millisecond, Poll: time.Millisecond, Margin: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(rctx) })
	defer func() { cancel(); wg.Wait() }()
	waitFor := func(n uint64) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			last, err := table.Last(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if last.N >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint %d", n)
			}
		}
	}
	decide(t, g, "idle", 2, "")
	waitFor(1)
	time.Sleep(200 * time.Millisecond) // past the margin: quiet
	before := table.looks()
	time.Sleep(200 * time.Millisecond) // about 200 polls
	if after := table.looks(); after != before {
		t.Fatalf("an idle log was looked through %d more times", after-before)
	}
	decide(t, g, "idle", 1, "")
	waitFor(2)
}
