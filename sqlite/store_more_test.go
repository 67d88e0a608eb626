package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/sqlite"
)

// A run's knowledge lists the files its successful reads taught, through
// the built-in policy's gate over the store.
func TestKnowledgeListsTheFilesRead(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ws := filepath.Join(root, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "b.go"), []byte("package b\n"), 0o644))
	c, err := celrule.New()
	must(t, err)
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, c)
	must(t, err)
	s, err := sqlite.Open(ctx, filepath.Join(root, "veto.db"), sqlite.Options{})
	must(t, err)
	defer s.Close()
	g, err := p.Gate(policy.BuildOptions{Store: s, Home: root})
	must(t, err)
	run := veto.Run{Ref: "k", Fresh: true}
	for _, f := range []string{"b.go", "a.go"} {
		call := &veto.Call{ID: "r-" + f, Tool: "Read", Args: map[string]any{"file_path": f}, Cwd: ws, Run: run}
		if v := g.Decide(ctx, call); !v.Allowed {
			t.Fatal(v)
		}
		must(t, g.ObserveCall(ctx, call, veto.Succeeded))
	}
	st, err := s.Load(ctx, "k")
	must(t, err)
	files, err := st.Knowledge.Files(ctx)
	if want := []string{ws + "/a.go", ws + "/b.go"}; err != nil || !slices.Equal(files, want) {
		t.Fatalf("Files = %q %v, want %q", files, err, want)
	}
	if f, ok, err := st.Knowledge.File(ctx, ws+"/a.go"); err != nil || !ok || f.Hash == "" {
		t.Fatalf("File = %+v %v %v", f, ok, err)
	}
}

// Scan's filters: from a time on, and after a cursor.
func TestScanSinceAndAfter(t *testing.T) {
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	must(t, err)
	defer s.Close()
	g, err := veto.NewGate(veto.Config{Store: s})
	must(t, err)
	base := time.Unix(1_800_000_000, 0)
	for i, run := range []string{"a", "b", "c"} {
		v := g.Decide(ctx, &veto.Call{ID: "x", Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}, Time: base.Add(time.Duration(i) * time.Hour)})
		if !v.Allowed {
			t.Fatal(v)
		}
	}
	type at struct {
		run string
		seq uint64
	}
	scan := func(lq veto.LogQuery) []at {
		var out []at
		must(t, s.Scan(ctx, lq, func(run string, seq uint64, _ []byte) error { out = append(out, at{run, seq}); return nil }))
		return out
	}
	all := scan(veto.LogQuery{})
	if len(all) != 6 { // each run: its start and its decision
		t.Fatalf("all: %v", all)
	}
	if got := scan(veto.LogQuery{Since: base.Add(time.Hour)}); !slices.Equal(got, all[2:]) {
		t.Errorf("since the second run: %v, want %v", got, all[2:])
	}
	cursor := veto.LogQuery{AfterTime: base.UnixNano(), AfterRun: "a", AfterSeq: 1}
	if got := scan(cursor); !slices.Equal(got, all[1:]) {
		t.Errorf("after a/1: %v, want %v", got, all[1:])
	}
}

// A state a newer veto wrote is refused, saying so.
func TestNewerStateSaysSo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "veto.db")
	populated(t, p, 1)
	markNewer(t, p)
	_, err := sqlite.Open(ctx, p, sqlite.Options{})
	wantCause(t, err, veto.CauseNewer, p)
	var se *veto.StateError
	if !errors.As(err, &se) || !strings.Contains(se.Reason(), "was written by a newer veto") {
		t.Fatalf("the refusal's reason does not say why: %v", err)
	}
}

// A closed store answers every call with an error, never a partial
// answer.
func TestClosedStoreFailsEveryCall(t *testing.T) {
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	must(t, err)
	decide(t, s, "r", 2)
	st, err := s.Load(ctx, "r")
	must(t, err)
	s.Close()
	if _, err := s.Events(ctx, "r", 0); err == nil {
		t.Error("Events")
	}
	if _, err := s.Runs(ctx); err == nil {
		t.Error("Runs")
	}
	if _, _, _, err := s.Chain(ctx, "r"); err == nil {
		t.Error("Chain")
	}
	if err := s.Scan(ctx, veto.LogQuery{}, func(string, uint64, []byte) error { return nil }); err == nil {
		t.Error("Scan")
	}
	if _, err := s.Prune(ctx, time.Now().Add(time.Hour)); err == nil {
		t.Error("Prune")
	}
	if _, err := s.Load(ctx, "r"); err == nil {
		t.Error("Load")
	}
	if _, _, err := st.Knowledge.File(ctx, "/w/a"); err == nil {
		t.Error("Knowledge.File")
	}
	if _, err := st.Knowledge.Files(ctx); err == nil {
		t.Error("Knowledge.Files")
	}
	if _, err := st.Knowledge.Egress(ctx); err == nil {
		t.Error("Knowledge.Egress")
	}
}

// Decided finds each kind of decision recorded for a call: allowed,
// denied by a rule, and the tool denied.
func TestDecidedFindsEveryKindOfDecision(t *testing.T) {
	root := t.TempDir()
	c, err := celrule.New()
	must(t, err)
	l, err := policy.Parse(policy.KindUser, "user.yaml", []byte("offer: {unavailable: [WebFetch]}\n"))
	must(t, err)
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, l}, c)
	must(t, err)
	s, err := sqlite.Open(ctx, filepath.Join(root, "veto.db"), sqlite.Options{})
	must(t, err)
	defer s.Close()
	g, err := p.Gate(policy.BuildOptions{Store: s, Home: root})
	must(t, err)
	run := veto.Run{Ref: "d", Fresh: true}
	for id, want := range map[string]veto.EventKind{"allowed": veto.EventAllowed, "denied": veto.EventDenied, "tool": veto.EventToolDenied} {
		args := map[string]any{"pattern": "x"}
		tool := "Grep"
		switch id {
		case "denied":
			tool, args = "Bash", map[string]any{"command": "git reset --hard"}
		case "tool":
			tool, args = "WebFetch", map[string]any{"url": "https://a.example/", "prompt": "p"}
		}
		g.Decide(ctx, &veto.Call{ID: id, Tool: tool, Args: args, Cwd: root, Run: run})
		e, ok, err := s.Decided(ctx, "d", id)
		if err != nil || !ok || e.Kind != want {
			t.Errorf("%s: Decided = %+v %v %v, want a %s event", id, e.Kind, ok, err, want)
		}
	}
	if _, ok, err := s.Decided(ctx, "d", "none"); ok || err != nil {
		t.Errorf("a call never decided: %v %v", ok, err)
	}
}

// TestConcurrentDecisionsKeepTheirConnections: thirty-two gates deciding
// at once on one store keep its connections, at most sixteen: none is
// closed for want of an idle slot and opened again (its pragmas and
// veto's schema parsed, its statements prepared again) for the next
// decision, and no more are opened than the WAL's read marks bear.
func TestConcurrentDecisionsKeepTheirConnections(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "veto.db"))
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			run := fmt.Sprintf("w%d", w)
			for i := range 10 {
				if v := g.Decide(ctx, &veto.Call{ID: fmt.Sprintf("%s-%d", run, i), Tool: "Read", Run: veto.Run{Ref: run, Fresh: true}}); !v.Allowed {
					t.Errorf("%s decision %d: %s", run, i, v.Reason)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := s.DB().Stats(); st.MaxIdleClosed != 0 || st.MaxOpenConnections != 16 || st.OpenConnections > 16 {
		t.Fatalf("%d connections closed for want of an idle slot, %d open, at most %d: want none closed, at most 16", st.MaxIdleClosed, st.OpenConnections, st.MaxOpenConnections)
	}
}
