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
