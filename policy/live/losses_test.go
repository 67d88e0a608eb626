package live_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

const askEcho = "rules:\n  - id: org.ask-echo\n    ask: 'tool == \"Bash\" && args.command.startsWith(\"echo\")'\n    reason: echo_asked\n"

// world is a state with revisions, a policy file and the switches a test
// turns: the state's Acquire failing or blocking, the revision tables
// unreachable, the gate's build panicking.
type world struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	file   string
	st     *sqlstore.Store
	revs   *sqlstore.Revisions
	cel    policy.Compiler
	logged bytes.Buffer
	logMu  sync.Mutex

	acquireFails, tablesDown, buildPanics, buildFails atomic.Bool
	// failAt, downAt: the Acquire of that number (counted from 1) fails,
	// or takes the revision tables down before it answers (0: none).
	failAt, downAt atomic.Int64
	block          chan struct{} // set: Acquire waits on it
	blockMu        sync.Mutex
	acquired       atomic.Int64
}

func newWorld(t *testing.T, policyFile string) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), dir: t.TempDir()}
	st, err := sqlite.Open(w.ctx, filepath.Join(w.dir, "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.st = st
	if w.cel, err = celrule.New(); err != nil {
		t.Fatal(err)
	}
	w.file = filepath.Join(w.dir, "veto.yaml")
	if err := os.WriteFile(w.file, []byte(policyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	w.revs = sqlstore.NewRevisions(func() *sql.DB {
		if w.tablesDown.Load() {
			return nil
		}
		return st.DB()
	}, "sqlite")
	return w
}

func (w *world) Write(b []byte) (int, error) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	return w.logged.Write(b)
}

func (w *world) log() string {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	return w.logged.String()
}

func (w *world) source() live.Source {
	return live.Source{Files: policy.LoadOptions{FlagPath: w.file, Compiler: w.cel}, Revisions: w.revs,
		Logger: slog.New(slog.NewTextHandler(w, nil)),
		Build: func(p *policy.Policy) (*veto.Gate, error) {
			if w.buildPanics.Load() {
				panic("a bug in building the gate")
			}
			if w.buildFails.Load() {
				return nil, errors.New("no gate: CANARY-91bd")
			}
			return p.Gate(policy.BuildOptions{Store: memstore.New(), Home: w.dir})
		},
		Acquire: func(ctx context.Context) (func(), error) {
			n := w.acquired.Add(1)
			if n == w.downAt.Load() {
				w.tablesDown.Store(true)
			}
			if n == w.failAt.Load() {
				return nil, errors.New("the state is down")
			}
			w.blockMu.Lock()
			b := w.block
			w.blockMu.Unlock()
			if b != nil {
				<-b
			}
			if w.acquireFails.Load() {
				return nil, errors.New("the state is down")
			}
			return func() {}, nil
		}}
}

func (w *world) push(head, name, body string) string {
	w.t.Helper()
	p, err := policy.LoadRevision([]policy.NamedFile{{Name: name, Body: []byte(body)}}, w.cel)
	if err != nil {
		w.t.Fatal(err)
	}
	rev := sqlstore.Revision{ID: p.Revision(), By: "test", At: time.Now(),
		Files: []sqlstore.RevisionFile{{Name: name, Body: []byte(body)}}}
	if err := w.revs.Push(w.ctx, rev, head); err != nil {
		w.t.Fatal(err)
	}
	return rev.ID
}

// recorded is a verdict as a recorded decision carries it (Seq set), of a
// call whose command holds a canary.
func recorded(cur *live.Current, n int) (*veto.Call, *veto.Verdict) {
	c := &veto.Call{ID: "c" + strconv.Itoa(n), Tool: "Bash", Args: map[string]any{"command": "echo CANARY-7f3a"},
		Run: veto.Run{Ref: "r", Fresh: true}}
	v := cur.Gate.Decide(context.Background(), c)
	v.Seq = uint64(n + 1)
	return c, &v
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// At start the database's active revision decides, not the files; a
// shadow that is the active revision itself decides nothing again.
func TestLiveStartsOnTheActiveRevision(t *testing.T) {
	w := newWorld(t, denyEcho)
	open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	if err := w.revs.Mark(w.ctx, sqlstore.HeadShadow, open, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	cur := lv.Current()
	if cur.From != "revision" || cur.Rev != open || cur.ShadowRev != open || cur.Shadow != nil || cur.Loaded.IsZero() {
		t.Fatalf("started as %+v", cur)
	}
	if v := cur.Gate.Decide(w.ctx, &veto.Call{Tool: "Bash", Args: map[string]any{"command": "echo hi"}, Cwd: w.dir}); !v.Allowed {
		t.Fatalf("the files decided, not the active revision: %+v", v)
	}
}

// A policy that cannot be taken at start is the instance's refusal to
// start: a file that does not load, a marked revision the database does
// not hold, a shadow revision that does not load.
func TestLiveStartRefusesWhatCannotBeTaken(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		w := newWorld(t, "rules:\n  - id: org.bad\n    deny: 'tool =='\n    reason: x\n")
		if _, err := live.Start(w.ctx, w.source()); err == nil || !strings.Contains(err.Error(), "veto.yaml:3:") {
			t.Fatalf("Start on a broken file: %v", err)
		}
	})
	t.Run("missing revision", func(t *testing.T) {
		w := newWorld(t, denyEcho)
		id := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
		if _, err := w.st.DB().ExecContext(w.ctx, `DELETE FROM veto_policy_revisions WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		_, err := live.Start(w.ctx, w.source())
		if err == nil || !strings.Contains(err.Error(), "the database marks it but does not hold it") || !strings.Contains(err.Error(), id) {
			t.Fatalf("Start on a marked revision the database does not hold: %v", err)
		}
	})
	t.Run("shadow", func(t *testing.T) {
		w := newWorld(t, denyEcho)
		id := w.push(sqlstore.HeadShadow, "deny.yaml", denyEcho)
		if _, err := w.st.DB().ExecContext(w.ctx, `UPDATE veto_policy_revisions SET files = '[]' WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		_, err := live.Start(w.ctx, w.source())
		if err == nil || !strings.HasPrefix(err.Error(), "shadow revision "+id) || !strings.Contains(err.Error(), "the stored revision was changed") {
			t.Fatalf("Start on a changed shadow revision: %v", err)
		}
	})
}

// While the state cannot be acquired, a look takes nothing and counts no
// failure: the change is taken once the state answers. A revision that
// cannot be read is a failure, named so.
func TestLiveWaitsForTheState(t *testing.T) {
	w := newWorld(t, denyEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	w.acquireFails.Store(true)
	if lv.Check(w.ctx) || lv.Failures.Load() != 0 || lv.Current().From != "files" || lv.Current().Err != "" {
		t.Fatalf("with the state down: %+v, %d failures", lv.Current(), lv.Failures.Load())
	}
	w.acquireFails.Store(false)
	if !lv.Check(w.ctx) || lv.Current().Rev != open {
		t.Fatalf("once the state answers: %+v", lv.Current())
	}
	if lv.Reloads.Load() != 1 {
		t.Fatalf("%d reloads, want 1", lv.Reloads.Load())
	}
}

// A panic while looking for a change (a bug in building the gate) is a
// failure: the last good policy keeps deciding, and the log says so
// without the panic's text.
func TestLiveCheckSurvivesAPanic(t *testing.T) {
	w := newWorld(t, denyEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	before := lv.Current()
	w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	w.buildPanics.Store(true)
	if lv.Check(w.ctx) || lv.Failures.Load() != 1 || lv.Current() != before {
		t.Fatalf("after a panic: taken, or %d failures, or another policy: %+v", lv.Failures.Load(), lv.Current())
	}
	if l := w.log(); !strings.Contains(l, "deciding with the last good one") || strings.Contains(l, "a bug in building") {
		t.Fatalf("the log: %q", l)
	}
	w.buildPanics.Store(false)
	if !lv.Check(w.ctx) || lv.Current().From != "revision" {
		t.Fatalf("once the build mends: %+v", lv.Current())
	}
}

// A failure that is not the policy's own (the gate cannot be built) is
// named by place only as a failure: no text of it reaches ErrWhere.
func TestLiveErrWhereOfABuildFailure(t *testing.T) {
	w := newWorld(t, denyEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	w.buildFails.Store(true)
	w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	if lv.Check(w.ctx) {
		t.Fatal("a revision whose gate cannot be built was taken")
	}
	cur := lv.Current()
	if cur.ErrWhere != "the policy could not be read or built" || !strings.Contains(cur.Err, "the gate cannot be built") || cur.ErrAt.IsZero() {
		t.Fatalf("Err %q, ErrWhere %q", cur.Err, cur.ErrWhere)
	}
}

// A files' policy whose gate cannot be built is not taken either.
func TestLiveFilesWhoseGateCannotBeBuilt(t *testing.T) {
	w := newWorld(t, denyEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	before := lv.Current()
	w.buildFails.Store(true)
	if err := os.WriteFile(w.file, []byte("egress:\n  allow: [docs.example.org]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lv.Check(w.ctx) {
		t.Fatal("a file whose gate cannot be built was taken")
	}
	if cur := lv.Current(); cur.Gate != before.Gate || cur.Rev != before.Rev || !strings.Contains(cur.Err, "the gate cannot be built") {
		t.Fatalf("after a file whose gate cannot be built: %+v", cur)
	}
}

// A stored revision that does not load (two files of one name) is not
// taken, its problem's place said without a line; a change after it is
// taken, and the broken revision marked again is tried again, whether the
// change between was taken or undone. The log says each.
func TestLiveRevisionThatDoesNotLoad(t *testing.T) {
	w := newWorld(t, denyEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	twice := sqlstore.Revision{ID: "twice", By: "test", At: time.Now(), Files: []sqlstore.RevisionFile{
		{Name: "a.yaml", Body: []byte("egress:\n  allow: [a.example.org]\n")}, {Name: "a.yaml", Body: []byte("{}\n")}}}
	if err := w.revs.Push(w.ctx, twice, sqlstore.HeadActive); err != nil {
		t.Fatal(err)
	}
	broken := func(failures int64) {
		t.Helper()
		if lv.Check(w.ctx) {
			t.Fatal("a revision that does not load was taken")
		}
		cur := lv.Current()
		if !strings.Contains(cur.Err, "given twice") || cur.ErrWhere != "1 problem(s) at a.yaml" || lv.Failures.Load() != failures {
			t.Fatalf("Err %q, ErrWhere %q, %d failures (want %d)", cur.Err, cur.ErrWhere, lv.Failures.Load(), failures)
		}
	}
	broken(1)
	if !strings.Contains(w.log(), "the policy changed and does not load") {
		t.Fatalf("the log: %q", w.log())
	}
	// A change after it is taken, when it was taken.
	open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	checked := time.Now()
	if !lv.Check(w.ctx) || lv.Current().Rev != open || lv.Current().Err != "" || lv.Current().Loaded.Before(checked) {
		t.Fatalf("the change after a broken revision: %+v", lv.Current())
	}
	if !strings.Contains(w.log(), "policy taken") {
		t.Fatalf("the log: %q", w.log())
	}
	mark := func(id string) {
		t.Helper()
		if err := w.revs.Mark(w.ctx, sqlstore.HeadActive, id, "test", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	mark("twice")
	broken(2)
	// Undone: the open revision marked again; then the broken one again.
	mark(open)
	if lv.Check(w.ctx) || lv.Current().Err != "" || lv.Current().Rev != open {
		t.Fatalf("undone: %+v", lv.Current())
	}
	mark("twice")
	broken(3)
}

// A revision the state cannot give (its Acquire refused, or its table
// unreachable once the heads were read) is a failure named so; the last
// good policy decides.
func TestLiveRevisionUnreadable(t *testing.T) {
	for _, how := range []string{"acquire", "table"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t, denyEcho)
			lv, err := live.Start(w.ctx, w.source())
			if err != nil {
				t.Fatal(err)
			}
			open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
			next := w.acquired.Load() + 2 // the heads' Acquire, then the revision's
			if how == "acquire" {
				w.failAt.Store(next)
			} else {
				w.downAt.Store(next)
			}
			if lv.Check(w.ctx) {
				t.Fatal("a revision the state could not give was taken")
			}
			cur := lv.Current()
			if cur.From != "files" || cur.Err != "revision "+open+": it cannot be read from the state" || lv.Failures.Load() != 1 {
				t.Fatalf("%+v, %d failures", cur, lv.Failures.Load())
			}
		})
	}
}

// A database that cannot be read at start is said in the log, and its
// active revision taken once it answers.
func TestLiveStartWithoutTheDatabaseSaysSo(t *testing.T) {
	w := newWorld(t, denyEcho)
	open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	w.tablesDown.Store(true)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	if lv.Current().From != "files" || !strings.Contains(w.log(), "policy revisions cannot be read; deciding with the policy files") {
		t.Fatalf("started as %+v; the log: %q", lv.Current(), w.log())
	}
	w.tablesDown.Store(false)
	if !lv.Check(w.ctx) || lv.Current().Rev != open {
		t.Fatalf("once the database answers: %+v", lv.Current())
	}
}

// A shadow revision that refuses by another rule differs, though both
// refuse for the same reason.
func TestLiveShadowDiffersByRule(t *testing.T) {
	w := newWorld(t, denyEcho)
	shadow := w.push(sqlstore.HeadShadow, "other.yaml",
		"rules:\n  - id: org.other\n    deny: 'tool == \"Bash\" && args.command.startsWith(\"echo\")'\n    reason: echo_refused\n")
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	cur := lv.Current()
	c, v := recorded(cur, 1)
	if v.Allowed || v.Reason != "echo_refused" {
		t.Fatalf("the files' policy: %+v", v)
	}
	lv.Shadow(cur, c, v)
	waitFor(t, "a difference by rule", func() bool {
		g, err := w.revs.Diffs(w.ctx, shadow)
		return err == nil && len(g) == 1 && g[0].Active == "deny" && g[0].Shadow == "deny" &&
			g[0].ActiveRule == "org.no-echo" && g[0].ShadowRule == "org.other" && g[0].ShadowReason == "echo_refused"
	})
}

// The shadow revision's losses are counted, never a verdict changed:
// a state that cannot be acquired, a difference that cannot be recorded
// (and the log names no argument), a full queue. An ask is compared as
// "ask".
func TestLiveShadowLosses(t *testing.T) {
	w := newWorld(t, "egress:\n  allow: [docs.example.org]\n")
	w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [docs.example.org]\n")
	shadow := w.push(sqlstore.HeadShadow, "ask.yaml", askEcho)
	lv, err := live.Start(w.ctx, w.source())
	if err != nil {
		t.Fatal(err)
	}
	cur := lv.Current()
	if cur.Shadow == nil || cur.ShadowRev != shadow {
		t.Fatalf("no shadow: %+v", cur)
	}
	n := 0
	hand := func() {
		n++
		c, v := recorded(cur, n)
		if !v.Allowed {
			t.Fatalf("the active revision refused: %+v", v)
		}
		lv.Shadow(cur, c, v)
		if !v.Allowed {
			t.Fatal("the shadow changed the verdict")
		}
	}

	// Compared and recorded: the shadow asks where the active allows.
	hand()
	waitFor(t, "the first difference", func() bool { return lv.ShadowDiffs.Load() == 1 })
	waitFor(t, "the first difference stored", func() bool {
		g, err := w.revs.Diffs(w.ctx, shadow)
		return err == nil && len(g) == 1 && g[0].Shadow == "ask" && g[0].Active == "allow" && g[0].ShadowReason == "echo_asked"
	})

	// The state cannot be acquired: not compared, counted dropped.
	w.acquireFails.Store(true)
	hand()
	waitFor(t, "a call dropped with the state down", func() bool { return lv.ShadowDropped.Load() == 1 })
	if lv.ShadowDiffs.Load() != 1 {
		t.Fatalf("%d differences with the state down, want 1", lv.ShadowDiffs.Load())
	}
	w.acquireFails.Store(false)

	// The difference cannot be recorded: counted, dropped, and logged
	// with no argument text.
	w.tablesDown.Store(true)
	hand()
	waitFor(t, "a difference not recorded", func() bool { return lv.ShadowDropped.Load() == 2 })
	w.tablesDown.Store(false)
	if lv.ShadowDiffs.Load() != 2 {
		t.Fatalf("%d differences, want 2", lv.ShadowDiffs.Load())
	}
	if l := w.log(); !strings.Contains(l, "a shadow revision's difference was not recorded") || strings.Contains(l, "CANARY") {
		t.Fatalf("the log: %q", l)
	}

	// The queue full: a call waiting for the shadow while it is held up
	// is dropped, and the decision never waited.
	w.blockMu.Lock()
	w.block = make(chan struct{})
	w.blockMu.Unlock()
	dropped := lv.ShadowDropped.Load()
	start := time.Now()
	for range 1024 + 2 {
		hand()
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("handing calls to a held-up shadow took %s", d)
	}
	if got := lv.ShadowDropped.Load() - dropped; got < 1 {
		t.Fatalf("%d calls dropped with the queue full, want at least 1", got)
	}
	w.blockMu.Lock()
	close(w.block)
	w.block = nil
	w.blockMu.Unlock()
	waitFor(t, "the queue drained", func() bool {
		return lv.ShadowDiffs.Load()+lv.ShadowDropped.Load()-dropped >= 1026 && lv.ShadowDropped.Load()-dropped < 1026
	})
}

// Watch takes a change at its interval and returns when its context
// ends; with no interval given it looks each second.
func TestLiveWatch(t *testing.T) {
	t.Run("default interval", func(t *testing.T) {
		w := newWorld(t, denyEcho)
		lv, err := live.Start(w.ctx, w.source())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(w.ctx)
		done := make(chan struct{})
		go func() { lv.Watch(ctx); close(done) }()
		open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [other.example.org]\n")
		waitFor(t, "the pushed revision taken within two seconds", func() bool { return lv.Current().Rev == open })
		cancel()
		<-done
	})
	w := newWorld(t, "egress:\n  allow: [docs.example.org]\n")
	src := w.source()
	src.Interval = 10 * time.Millisecond
	lv, err := live.Start(w.ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	done := make(chan struct{})
	go func() { lv.Watch(ctx); close(done) }()
	open := w.push(sqlstore.HeadActive, "open.yaml", "egress:\n  allow: [other.example.org]\n")
	waitFor(t, "the pushed revision taken by Watch", func() bool { return lv.Current().Rev == open })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return when its context ended")
	}
}

// FileKey changes with a file's content, its time and its inode (a file
// replaced by one of the same size and time), and names a path not given
// or missing by its name alone.
func TestFileKey(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "veto.yaml")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(p, body string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	key := func() string { return live.FileKey(policy.LoadOptions{FlagPath: f}) }
	missing := key()
	if missing != "\x00\x00"+f+"\x00\x00" {
		t.Fatalf("a missing file's key: %q", missing)
	}
	put(f, "a: 1\n")
	k1 := key()
	if k1 == missing || k1 != key() {
		t.Fatalf("a file's key: %q, then %q", k1, key())
	}
	put(f, "a: 2\n") // same size, same time, same inode
	if key() != k1 {
		t.Fatal("the key reads the content")
	}
	tmp := filepath.Join(dir, "new.yaml")
	put(tmp, "a: 3\n")
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	if key() == k1 {
		t.Fatal("a file replaced by one of the same size and time kept its key")
	}
	k2 := key()
	put(f, "a: 33\n")
	if key() == k2 {
		t.Fatal("a longer file kept its key")
	}
	k3 := key()
	later := at.Add(time.Second)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	if key() == k3 {
		t.Fatal("a file touched kept its key")
	}
}
