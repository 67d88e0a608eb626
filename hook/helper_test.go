package hook_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vetohq/veto/hook"
)

// testServer is a hook server in a short temporary directory (a socket
// path has a length limit), with a workspace ws holding main.go, no policy
// files but the test's, and the environment veto-hook would send: its
// socket in VETO_SOCKET, its state in VETO_STATE.
type testServer struct {
	dir, ws, sock string
	cancel        context.CancelFunc
	finished      chan struct{} // closed when Serve returns
	err           error         // what Serve returned
}

func startServer(t testing.TB) *testServer { t.Helper(); return startServerWith(t, hook.Options{}) }

// startServerWith starts it with the options o (Postgres, say).
func startServerWith(t testing.TB, o hook.Options) *testServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "vh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &testServer{dir: dir, ws: filepath.Join(dir, "ws"), sock: filepath.Join(dir, "run", "hook.sock"), finished: make(chan struct{})}
	os.MkdirAll(filepath.Join(s.ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(s.ws, "main.go"), []byte("package main\n"), 0o644)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	t.Setenv("VETO_STATE", filepath.Join(dir, "state", "veto.db"))
	t.Setenv("VETO_SOCKET", s.sock)
	t.Setenv("VETO_NO_SERVER", "")
	// veto-hook is answered by a server of the veto it would run: this
	// test program, which is the server's build.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VETO_FULL", self)
	l, err := hook.Listen(s.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		o.Timeout = 2 * time.Second
		s.err = hook.Serve(ctx, l, o, 0)
		close(s.finished)
	}()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop ends the server and waits for Serve to return.
func (s *testServer) stop(t testing.TB) {
	t.Helper()
	s.cancel()
	select {
	case <-s.finished:
		if s.err != nil {
			t.Errorf("Serve: %v", s.err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the server did not stop within 5 s")
	}
}
