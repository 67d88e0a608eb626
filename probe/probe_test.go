package probe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/probe"
)

func TestLive(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("hello"))
	ctx := context.Background()

	f, err := probe.Live{}.File(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Exists || f.Dir || f.Size != 5 || f.Hash != hex.EncodeToString(sum[:]) || f.Path != file || f.ModTime.IsZero() {
		t.Fatalf("fact %+v", f)
	}
	if d, err := (probe.Live{}).File(ctx, dir); err != nil || !d.Exists || !d.Dir || d.Hash != "" {
		t.Fatalf("dir fact %+v %v", d, err)
	}
	if m, err := (probe.Live{}).File(ctx, filepath.Join(dir, "missing")); err != nil || m.Exists {
		t.Fatalf("missing fact %+v %v", m, err)
	}

	// Same content, same size, another mtime: still the same file.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	touched, _ := probe.Live{}.File(ctx, file)
	if !touched.Same(f) {
		t.Fatal("a touched file with the same content is not the same")
	}
	// Same size, other content: changed.
	if err := os.WriteFile(file, []byte("HELLO"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, _ := probe.Live{}.File(ctx, file)
	if changed.Same(f) {
		t.Fatal("a file with other content of the same size is the same")
	}
}

func TestRecordedAnswersOnlyFromEvents(t *testing.T) {
	fact := veto.FileFact{Path: "/w/a", Exists: true, Size: 3, Hash: "abc"}
	r := probe.NewRecorded([]veto.Event{
		{Kind: veto.EventProbe, CallID: "c", Fact: &fact},
		{Kind: veto.EventAllowed, CallID: "c"},
	})
	got, err := r.File(context.Background(), "/w/a")
	if err != nil || got != fact {
		t.Fatalf("recorded %+v %v", got, err)
	}
	// A path that exists on this machine but was never recorded is an error,
	// never a look at the world.
	if _, err := r.File(context.Background(), os.TempDir()); !errors.Is(err, probe.ErrNotRecorded) {
		t.Fatalf("unrecorded path: %v", err)
	}
}

// Each call's decision probes and successful results answer for that call
// alone; what another call saw, a failed call's files or a live path are
// never an answer (E23: a recorded probe never falls back to the live one).
func TestRecordedAnswersPerCall(t *testing.T) {
	ctx := context.Background()
	a1 := veto.FileFact{Path: "/w/a", Exists: true, Hash: "1"}
	a2 := veto.FileFact{Path: "/w/a", Exists: true, Hash: "2"}
	b := veto.FileFact{Path: "/w/b", Exists: true, Hash: "b"}
	c := veto.FileFact{Path: "/w/c", Exists: true, Hash: "c"}
	live := t.TempDir()
	r := probe.NewRecorded([]veto.Event{
		{Kind: veto.EventProbe, CallID: "c1", Fact: &a1},
		{Kind: veto.EventProbe, CallID: "c2"}, // no fact: nothing
		{Kind: veto.EventObserved, CallID: "c1", Outcome: veto.Succeeded, Files: []veto.FileFact{a2, b}},
		{Kind: veto.EventObserved, CallID: "c3", Outcome: veto.Failed, Files: []veto.FileFact{{Path: "/w/f", Hash: "f"}}},
		{Kind: veto.EventAllowed, CallID: "c4", Fact: &c},
	})
	for _, tc := range []struct {
		name string
		p    veto.Probe
		path string
		want *veto.FileFact
	}{
		{"decision", r.Decision("c1"), "/w/a", &a1},
		{"decision-other-path", r.Decision("c1"), "/w/b", nil},
		{"decision-live-path", r.Decision("c1"), live, nil},
		{"decision-other-call", r.Decision("c3"), "/w/a", nil},
		{"decision-without-fact", r.Decision("c2"), "/w/a", nil},
		{"result", r.Result("c1"), "/w/a", &a2},
		{"result-second-file", r.Result("c1"), "/w/b", &b},
		{"result-failed", r.Result("c3"), "/w/f", nil},
		{"result-of-decision-only", r.Result("c2"), "/w/a", nil},
		{"any-latest", r, "/w/a", &a2},
		{"any-failed", r, "/w/f", nil},
		{"any-second-file", r, "/w/b", &b},
		{"any-not-a-probe", r, "/w/c", nil},
		{"decision-not-a-probe", r.Decision("c4"), "/w/c", nil},
		{"any-live", r, live, nil},
	} {
		got, err := tc.p.File(ctx, tc.path)
		switch {
		case tc.want == nil && !errors.Is(err, probe.ErrNotRecorded):
			t.Errorf("%s: %+v %v, want ErrNotRecorded", tc.name, got, err)
		case tc.want != nil && (err != nil || got != *tc.want):
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, *tc.want)
		}
	}
}

// The hash is the file's SHA-256 at every size around the read buffer's;
// a cancelled look, or a path through a file, is an error.
func TestLiveHashesEverySize(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, n := range []int{0, 1, 32<<10 - 1, 32 << 10, 32<<10 + 1, 64 << 10, 100<<10 + 3} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		f, err := probe.Live{}.File(ctx, p)
		if err != nil || f.Hash != hex.EncodeToString(sum[:]) || f.Size != int64(n) {
			t.Errorf("%d bytes: %+v %v", n, f, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := (probe.Live{}).File(done, dir); err == nil {
		t.Error("a cancelled look answered")
	}
	file := filepath.Join(dir, "f")
	if f, err := (probe.Live{}).File(ctx, filepath.Join(file, "below")); err == nil {
		t.Errorf("a path through a file: %+v", f)
	}
}
