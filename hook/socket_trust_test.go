package hook_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vetohq/veto/hook/wire"
)

// veto-hook asks a hook server only through a socket in a directory of
// its own user's that no one else can enter. A fake server that answers
// every call with allow listens in each directory: in a private one it is
// asked and heard; reached through a symlink, in a directory others may
// enter or list, or in another user's, it is never asked, and the call is
// decided by veto hook, which denies it.
//
// E26
func TestHookAsksOnlyASocketInItsOwnPrivateDirectory(t *testing.T) {
	base, err := os.MkdirTemp("", "vh") // short: a socket's path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(base, "none.yaml"))
	t.Setenv("VETO_STATE", filepath.Join(base, "state", "veto.db"))
	t.Setenv("VETO_NO_SERVER", "")
	// veto-hook asks only when it knows the build of the veto it would
	// run: this test program's.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VETO_FULL", self)

	private := func(t *testing.T, name string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// fake listens in dir and answers allow to whoever asks.
	fake := func(t *testing.T, dir string) *atomic.Int32 {
		l, err := net.Listen("unix", filepath.Join(dir, "hook.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		var asked atomic.Int32
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				asked.Add(1)
				var rq wire.Request
				json.NewDecoder(c).Decode(&rq)
				c.Write([]byte(`{"exit":0,"stdout":"","stderr":""}` + "\n"))
				c.Close()
			}
		}()
		return &asked
	}
	n := 0
	call := func(t *testing.T, sockDir string) (int, string) {
		t.Helper()
		n++
		t.Setenv("VETO_SOCKET", filepath.Join(sockDir, "hook.sock"))
		ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git reset --hard"},"tool_use_id":"x` + string(rune('a'+n)) + `"}`
		var out, errb bytes.Buffer
		code := wire.Run([]string{"claude-code"}, strings.NewReader(ev), &out, &errb, inProcess, nil)
		return code, out.String() + errb.String()
	}

	t.Run("private", func(t *testing.T) {
		dir := private(t, "own")
		asked := fake(t, dir)
		if code, out := call(t, dir); code != 0 || asked.Load() != 1 {
			t.Fatalf("the server in a private directory: exit %d %q, asked %d times; want its allow heard", code, out, asked.Load())
		}
	})
	refused := map[string]func(t *testing.T) string{
		"symlinked": func(t *testing.T) string {
			link := filepath.Join(base, "link")
			if err := os.Symlink(private(t, "target"), link); err != nil {
				t.Fatal(err)
			}
			return link
		},
		"another-users": func(t *testing.T) string {
			if os.Getuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			d := private(t, "foreign")
			if err := os.Chown(d, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
	for _, mode := range []os.FileMode{0o755, 0o777, 0o710, 0o701, 0o750, 0o705} {
		refused["mode-"+mode.String()] = func(t *testing.T) string {
			d := private(t, "m"+strings.TrimLeft(mode.String(), "d-"))
			if err := os.Chmod(d, mode); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	for name, dir := range refused {
		t.Run(name, func(t *testing.T) {
			d := dir(t)
			asked := fake(t, d)
			code, out := call(t, d)
			if asked.Load() != 0 {
				t.Fatalf("veto-hook asked the server in a %s directory", name)
			}
			if code != 2 || !strings.Contains(out, "rule shell.analyzer, reason git_destructive") {
				t.Fatalf("a %s directory: exit %d %q, want veto hook's denial", name, code, out)
			}
		})
	}
}
