package export

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// veto log stream streams a state's decisions to a sink without a
// service, until interrupted, and keeps its cursor for the next run.
func TestLogStreamFollows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs veto")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "veto.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	if err := st.Append(ctx, "r", 1, []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: now, Complete: new(true)},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, Time: now, CallID: "c1", Tool: "Read"},
	}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	cmd := exec.Command(vetoProgram(t), "log", "stream", "--state", path, "--export-jsonl", out, "--export-name", "t")
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	eventually(t, "the decision in the file", func() bool {
		got, _, _ := fromJSONL(t, out)
		return got["r/2"] == 1 && len(got) == 1
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("veto log stream exited with %v after SIGTERM, want 0", err)
	}
	at, err := NewCursors(st.DB, sqlstore.Markers("sqlite")).Load(ctx, "t jsonl:"+out)
	if err != nil || at == 0 {
		t.Fatalf("the cursor after the run: %d, %v", at, err)
	}
}

// A reader of the JSON Lines on stdout that goes away does not end the
// exporter: its writes fail (EPIPE) and are counted, and it runs on.
func TestStdoutReaderGoneEndsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs veto")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "veto.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cmd := exec.Command(vetoProgram(t), "log", "stream", "--state", path, "--export-jsonl", "-")
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r.Close() // the reader is gone before anything is written
	now := time.Now()
	if err := st.Append(ctx, "r", 1, []veto.Event{
		{V: veto.EventVersion, Run: "r", Seq: 1, Kind: veto.EventRunStarted, Time: now, Complete: new(true)},
		{V: veto.EventVersion, Run: "r", Seq: 2, Kind: veto.EventAllowed, Time: now, CallID: "c1", Tool: "Read"},
	}); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("veto log stream ended when its reader went away: %v", err)
	case <-time.After(3 * time.Second): // several attempts to write
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		t.Fatalf("after SIGTERM: %v, want exit 0", err)
	}
}
