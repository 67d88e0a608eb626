package hook_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/sqlite"
)

// stateDamage is what a test does to the state file, and the words the
// denial must hold.
type stateDamage struct {
	name, cause, detail string
	do                  func(t *testing.T, path string)
}

var stateDamages = []stateDamage{
	{"truncated to 0", "is damaged (", "the file is empty", func(t *testing.T, p string) { check(t, os.Truncate(p, 0)) }},
	{"truncated to 100 bytes", "is damaged (", "the file is 100 bytes, not a whole number", func(t *testing.T, p string) { check(t, os.Truncate(p, 100)) }},
	{"B-tree page bytes flipped", "is damaged (", "", func(t *testing.T, p string) {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		check(t, err)
		defer f.Close()
		fi, _ := f.Stat()
		for off := int64(4096); off < fi.Size(); off += 4096 {
			f.WriteAt([]byte{0x37, 0xff, 0xff, 0xff, 0xff}, off)
		}
	}},
	{"overwritten with garbage", "is damaged (", "", func(t *testing.T, p string) {
		fi, err := os.Stat(p)
		check(t, err)
		b := make([]byte, fi.Size())
		r := rand.New(rand.NewPCG(3, 4))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		check(t, os.WriteFile(p, b, 0o600))
	}},
	{"replaced by a newer schema", "was written by a newer veto", "", func(t *testing.T, p string) {
		other := filepath.Join(filepath.Dir(p), "newer.db")
		s, err := sqlite.Open(context.Background(), other, sqlite.Options{})
		check(t, err)
		_, err = s.DB().Exec(`UPDATE veto_meta SET value = '99' WHERE key = 'migrations'`)
		check(t, err)
		s.Close()
		check(t, os.Rename(other, p))
	}},
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// seed gives the state a run of many decisions, checkpointed into the
// file, so that the file has pages of its own for damage to hit.
func seed(t *testing.T, path string, call func(id, tool, input string) (int, string), ws string) {
	t.Helper()
	for i := 0; i < 60; i++ {
		if code, out := call(fmt.Sprintf("seed%d", i), "Read", `{"file_path":"`+ws+`/main.go"}`); code != 0 {
			t.Fatalf("seed %d: %d %q", i, code, out)
		}
	}
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	check(t, err)
	_, err = s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	check(t, err)
	s.Close()
}

// A damaged state denies every call, in the client's blocking form, with
// the cause named: through veto hook (a process of its own per event) and
// through the hook server, which had the file open before the damage.
func TestDamagedStateIsRefused(t *testing.T) {
	for _, d := range stateDamages {
		t.Run(d.name, func(t *testing.T) {
			for _, served := range []bool{false, true} {
				t.Run(map[bool]string{false: "veto hook", true: "served"}[served], func(t *testing.T) {
					srv := startServer(t)
					state := os.Getenv("VETO_STATE")
					call := func(id, tool, input string) (int, string) {
						ev := `{"session_id":"s","cwd":"` + srv.ws + `","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
						var out, errb bytes.Buffer
						if !served {
							r, _ := hook.Reply(context.Background(), hook.AdapterFor("claude-code"), strings.NewReader(ev), hook.Options{State: state, Timeout: 2 * time.Second})
							return r.Exit, r.Stdout + r.Stderr
						}
						noFallback := func([]string, []byte, io.Writer, io.Writer) (int, bool) {
							t.Error("the server did not answer")
							return 0, false
						}
						code := wire.Run([]string{"claude-code"}, strings.NewReader(ev), &out, &errb, noFallback, nil)
						return code, out.String() + errb.String()
					}
					seed(t, state, call, srv.ws)
					if code, out := call("before", "Read", `{"file_path":"`+srv.ws+`/main.go"}`); code != 0 {
						t.Fatalf("before the damage: %d %q", code, out)
					}
					d.do(t, state)
					for i := 0; i < 3; i++ {
						code, out := call(fmt.Sprintf("after%d", i), "Read", `{"file_path":"`+srv.ws+`/main.go"}`)
						if code != 2 || !strings.Contains(out, "state_unavailable") || !strings.Contains(out, state+" "+d.cause) || !strings.Contains(out, d.detail) {
							t.Fatalf("call %d after the damage: exit %d %q, want exit 2 naming %q", i, code, out, d.cause)
						}
					}
				})
			}
		})
	}
}

// Each cause of a state refusal is named in the denial: a lock held past
// the busy timeout, a path that is a directory or under a file, a
// directory that cannot be made.
func TestStateRefusalsNameTheirCause(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(dir, "none.yaml"))
	ev := `{"session_id":"s","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + ws + `/x"},"tool_use_id":"t1"}`
	ask := func(state string) (int, string) {
		r, _ := hook.Reply(context.Background(), hook.AdapterFor("claude-code"), strings.NewReader(ev), hook.Options{State: state, Timeout: 800 * time.Millisecond})
		return r.Exit, r.Stdout + r.Stderr
	}

	locked := filepath.Join(dir, "locked", "veto.db")
	holder, err := sqlite.Open(context.Background(), locked, sqlite.Options{})
	check(t, err)
	defer holder.Close()
	tx, err := holder.DB().Begin() // BEGIN IMMEDIATE: the write lock
	check(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT INTO veto_meta (key, value) VALUES ('held', '1')`)
	check(t, err)

	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(dir, "adir", "veto.db"), 0o700)
	for _, c := range []struct{ name, state, want string }{
		{"locked", locked, locked + " is locked by another writer past the busy timeout"},
		{"a directory", filepath.Join(dir, "adir", "veto.db"), "is not a usable path (not a regular file)"},
		{"under a file", filepath.Join(dir, "file", "veto.db"), "is not a usable path"},
		{"cannot be made", "/proc/veto-no-such/veto.db", "/proc/veto-no-such/veto.db cannot be reached"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := ask(c.state)
			if code != 2 || !strings.Contains(out, "state_unavailable") || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d %q, want exit 2 naming %q", code, out, c.want)
			}
		})
	}
}
