package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// memLog is a log whose events commit when the test says, with the
// times the test gives: an event may commit after a later one.
type memLog struct {
	mu  sync.Mutex
	evs []veto.Event
}

func (l *memLog) commit(run string, seq uint64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, veto.Event{V: veto.EventVersion, Run: run, Seq: seq, Kind: veto.EventAllowed, Time: at, Tool: "Read", CallID: "c"})
}

func (l *memLog) Scan(ctx context.Context, q veto.LogQuery, fn func(string, uint64, []byte) error) error {
	l.mu.Lock()
	evs := slices.Clone(l.evs)
	l.mu.Unlock()
	sort.Slice(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		return a.Seq < b.Seq
	})
	for _, e := range evs {
		if (!q.Since.IsZero() && e.Time.Before(q.Since)) || (len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.Kind)) {
			continue
		}
		b, err := eventlog.EncodeEvent(e)
		if err != nil {
			return err
		}
		if err := fn(e.Run, e.Seq, b); err != nil {
			return err
		}
	}
	return nil
}

// memCursors is a cursor store in memory, over a memLog for the count.
type memCursors struct {
	mu  sync.Mutex
	at  map[string]int64
	log *memLog
}

func (c *memCursors) Load(ctx context.Context, name string) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at[name], nil
}

func (c *memCursors) Save(ctx context.Context, name string, at int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[name] = max(c.at[name], at)
	return nil
}

func (c *memCursors) Count(ctx context.Context, at int64, kinds []veto.EventKind) (int, error) {
	n := 0
	err := c.log.Scan(ctx, veto.LogQuery{Since: time.Unix(0, at), Kinds: kinds}, func(string, uint64, []byte) error { n++; return nil })
	return n, err
}

func (c *memCursors) Keys(ctx context.Context, at int64, kinds []veto.EventKind, fn func(string, uint64, int64) error) error {
	return c.log.Scan(ctx, veto.LogQuery{Since: time.Unix(0, at), Kinds: kinds}, func(run string, seq uint64, b []byte) error {
		e, err := eventlog.DecodeEvent(b)
		if err != nil {
			return err
		}
		return fn(run, seq, e.Time.UnixNano())
	})
}

// memSink keeps what it accepted; while failing it refuses every batch.
type memSink struct {
	mu      sync.Mutex
	got     map[string]int // "run/seq" → times accepted
	failing bool
}

func (s *memSink) Send(ctx context.Context, recs []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing {
		return errors.New("the sink is down")
	}
	for _, r := range recs {
		s.got[fmt.Sprintf("%s/%d", r.Run, r.Seq)]++
	}
	return nil
}

func (s *memSink) Close() error { return nil }

func (s *memSink) has(keys ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if s.got[k] == 0 {
			return false
		}
	}
	return true
}

func (s *memSink) setFailing(v bool) {
	s.mu.Lock()
	s.failing = v
	s.mu.Unlock()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not within 10s: %s", what)
}

func start(t *testing.T, cfg Config) (stop func()) {
	t.Helper()
	x, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// An event whose time is before one already exported, committed after it
// (its writer set the time, then took a while to commit, as another
// PostgreSQL instance may), is still exported: the window behind the
// cursor is read again. With no window it would be skipped.
func TestLateCommitIsExported(t *testing.T) {
	log := &memLog{}
	cur := &memCursors{at: map[string]int64{}, log: log}
	sink := &memSink{got: map[string]int{}}
	stop := start(t, Config{Name: "s", Log: log, Cursors: cur, Sink: sink, Window: 5 * time.Second, Poll: 5 * time.Millisecond,
		SaveEvery: time.Millisecond})
	defer stop()
	now := time.Now()
	log.commit("a", 1, now.Add(-1*time.Second))
	eventually(t, "a/1 exported", func() bool { return sink.has("a/1") })
	time.Sleep(50 * time.Millisecond)           // several passes: the cursor moves as far as it may
	log.commit("b", 1, now.Add(-3*time.Second)) // stamped before a/1, committed after
	eventually(t, "b/1, committed late, exported", func() bool { return sink.has("b/1") })
	time.Sleep(50 * time.Millisecond)
	if n := sink.got["a/1"]; n != 1 {
		t.Errorf("a/1 sent %d times within one process: the window's events are de-duplicated", n)
	}
}

// The cursor is stored only after the sink accepted: while it refuses,
// the cursor stays, every refusal is counted and the backlog grows; when
// it takes batches again every event arrives and the cursor moves.
func TestCursorMovesOnlyAfterTheSinkFlushed(t *testing.T) {
	log := &memLog{}
	cur := &memCursors{at: map[string]int64{}, log: log}
	sink := &memSink{got: map[string]int{}, failing: true}
	m := NewMetrics()
	// The events are stored before the exporter starts: an hour old, they
	// are behind the cursor of a pass that found none (it moves to within
	// the window of now), as no event stored by then can be.
	old := time.Now().Add(-time.Hour)
	var keys []string
	for i := range 10 {
		log.commit("r", uint64(i+1), old.Add(time.Duration(i)*time.Second))
		keys = append(keys, fmt.Sprintf("r/%d", i+1))
	}
	stop := start(t, Config{Name: "s", Log: log, Cursors: cur, Sink: sink, Window: 10 * time.Millisecond, Poll: 5 * time.Millisecond,
		SaveEvery: time.Millisecond, Metrics: m, Batch: 3})
	defer stop()
	eventually(t, "refusals counted", func() bool { return value(m.errors.WithLabelValues("s")) >= 2 })
	if got := value(m.backlog.WithLabelValues("s")); got != 10 {
		t.Errorf("backlog %v while the sink refuses, want 10", got)
	}
	if at, _ := cur.Load(context.Background(), "s"); at != 0 {
		t.Fatalf("the cursor moved to %d while the sink refused every batch", at)
	}
	sink.setFailing(false)
	eventually(t, "every event accepted", func() bool { return sink.has(keys...) })
	eventually(t, "the cursor saved past them", func() bool {
		at, _ := cur.Load(context.Background(), "s")
		return at > old.Add(10*time.Second).UnixNano()
	})
	eventually(t, "the backlog empty", func() bool { return value(m.backlog.WithLabelValues("s")) == 0 })
	if got := value(m.sent.WithLabelValues("s")); got < 10 {
		t.Errorf("sent %v, want at least 10", got)
	}
}

// A restarted exporter goes on from the stored cursor: it sends again
// only what lies within the window, never less than what was not sent.
func TestRestartGoesOnFromTheCursor(t *testing.T) {
	log := &memLog{}
	cur := &memCursors{at: map[string]int64{}, log: log}
	old := time.Now().Add(-time.Hour)
	for i := range 5 {
		log.commit("r", uint64(i+1), old.Add(time.Duration(i)*time.Second))
	}
	first := &memSink{got: map[string]int{}}
	cfg := Config{Name: "s", Log: log, Cursors: cur, Sink: first, Window: time.Second, Poll: 5 * time.Millisecond, SaveEvery: time.Millisecond}
	stop := start(t, cfg)
	eventually(t, "the first five", func() bool { return first.has("r/1", "r/2", "r/3", "r/4", "r/5") })
	stop()
	for i := 5; i < 8; i++ {
		log.commit("r", uint64(i+1), time.Now())
	}
	second := &memSink{got: map[string]int{}}
	cfg.Sink = second
	stop = start(t, cfg)
	defer stop()
	eventually(t, "the three after the restart", func() bool { return second.has("r/6", "r/7", "r/8") })
	if second.has("r/1") {
		t.Errorf("the restarted exporter sent again an event an hour behind its cursor")
	}
}

// The JSON Lines file rotates past its size, keeps the number of rotated
// files asked, each line one stored event; a line cut short by a crash
// is ended before the next.
func TestJSONLRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte(`{"cut short`), 0o600); err != nil {
		t.Fatal(err)
	}
	j := NewJSONL(path, 1000, 2)
	defer j.Close()
	var all []Record
	for i := range 200 {
		b, _ := json.Marshal(map[string]any{"run": "r", "seq": i + 1, "note": "é"})
		all = append(all, Record{Run: "r", Seq: uint64(i + 1), Body: b})
	}
	for i := 0; i < len(all); i += 7 {
		if err := j.Send(context.Background(), all[i:min(i+7, len(all))]); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[float64]bool{}
	for _, name := range []string{"out.jsonl", "out.jsonl.1", "out.jsonl.2"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		if fi.Size() > 1000+100 {
			t.Errorf("%s is %d bytes, past the rotation size", name, fi.Size())
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				if name == "out.jsonl.2" && strings.HasPrefix(sc.Text(), `{"cut short`) {
					continue
				}
				t.Errorf("%s: a line that is not JSON: %q", name, sc.Text())
				continue
			}
			if strings.ContainsFunc(sc.Text(), func(r rune) bool { return r > 126 }) {
				t.Errorf("%s: a line not in US-ASCII: %q", name, sc.Text())
			}
			seen[v["seq"].(float64)] = true
		}
		f.Close()
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Errorf("a third rotated file is kept, want two")
	}
	if !seen[200] || !seen[199] {
		t.Errorf("the newest lines are missing")
	}
	if seen[1] {
		t.Errorf("the oldest lines are still kept, past two rotations")
	}
}

// The cursor table is made at first use, in SQLite and PostgreSQL; a
// cursor never moves back; the backlog counts by the events' index.
func TestCursorsTable(t *testing.T) {
	ctx := context.Background()
	open := map[string]func(t *testing.T) (*sqlstore.Store, string){
		"sqlite": func(t *testing.T) (*sqlstore.Store, string) {
			s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s, "sqlite"
		},
		"postgres": func(t *testing.T) (*sqlstore.Store, string) {
			s, err := postgres.Open(ctx, pgtest.Fresh(t))
			if err != nil {
				t.Fatal(err)
			}
			return s, "postgres"
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			st, dialect := open(t)
			defer st.Close()
			c := NewCursors(st.DB, sqlstore.Markers(dialect))
			if at, err := c.Load(ctx, "a"); err != nil || at != 0 {
				t.Fatalf("Load of a new sink = %d, %v", at, err)
			}
			for _, at := range []int64{100, 50} {
				if err := c.Save(ctx, "a", at); err != nil {
					t.Fatal(err)
				}
			}
			if at, err := c.Load(ctx, "a"); err != nil || at != 100 {
				t.Fatalf("Load = %d, %v; want 100 (never back)", at, err)
			}
			// Another handle on the same database: the table is there.
			if at, err := NewCursors(st.DB, sqlstore.Markers(dialect)).Load(ctx, "a"); err != nil || at != 100 {
				t.Fatalf("Load through another handle = %d, %v", at, err)
			}
			at := time.Now()
			evs := []veto.Event{{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: at, Complete: new(true)},
				{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, Time: at, CallID: "c1", Tool: "Read"}}
			if err := st.Append(ctx, "r", 1, evs); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Count(ctx, 0, decisionKinds); err != nil || n != 1 {
				t.Errorf("Count of decisions = %d, %v; want 1", n, err)
			}
			if n, err := c.Count(ctx, at.Add(time.Second).UnixNano(), nil); err != nil || n != 0 {
				t.Errorf("Count after the events = %d, %v; want 0", n, err)
			}
			var keys []string
			err := c.Keys(ctx, 0, nil, func(run string, seq uint64, ns int64) error {
				keys = append(keys, fmt.Sprintf("%s/%d@%v", run, seq, ns == at.UnixNano()))
				return nil
			})
			if err != nil || strings.Join(keys, " ") != "r/1@true r/2@true" {
				t.Errorf("Keys = %v, %v", keys, err)
			}
		})
	}
}

// value is a counter's or gauge's value now.
func value(c prometheus.Collector) float64 {
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	(<-ch).Write(&m)
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
