package hook

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// The hook server: a long-lived veto that keeps the state open and answers
// veto-hook over a Unix socket, so a tool call costs a process start and a
// round trip. veto-hook falls back to answering in its own process when the
// server is absent, slow, or was started under another environment; the
// fallback fails closed like every answer.

// envKeys are the variables an answer depends on: where policy files and
// state are, what ~ and $TMPDIR mean, the project Claude Code names. The
// server answers only requests whose values equal its own (but the
// per-session CLAUDE_PROJECT_DIR, which it takes from the request).
var envKeys = []string{"HOME", "USER", "TMPDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "VETO_MANAGED_POLICY", "VETO_STATE"}

// served counts the requests the server answered (tests read it).
var served atomic.Int64

type request struct {
	V          int               `json:"v"`
	Client     string            `json:"client"`
	State      string            `json:"state"`
	Approve    bool              `json:"approve"`
	TimeoutMS  int64             `json:"timeout_ms"`
	ProjectDir string            `json:"project_dir"`
	Env        map[string]string `json:"env"`
	Event      json.RawMessage   `json:"event"`
}

type response struct {
	Mismatch bool   `json:"mismatch,omitempty"` // the server's environment differs: answer in process
	Exit     int    `json:"exit"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// SocketPath is where the hook server listens: $VETO_SOCKET, else
// $XDG_RUNTIME_DIR/veto/hook.sock, else veto-UID/hook.sock in the
// temporary directory.
func SocketPath() string {
	if p := os.Getenv("VETO_SOCKET"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "veto", "hook.sock")
	}
	return filepath.Join(os.TempDir(), "veto-"+strconv.Itoa(os.Getuid()), "hook.sock")
}

func envNow() map[string]string {
	m := make(map[string]string, len(envKeys))
	for _, k := range envKeys {
		m[k] = os.Getenv(k)
	}
	return m
}

// Serve answers hook requests on l until ctx ends, with o's compiler and
// timeout; idle, when positive, ends it after that long without a request.
func Serve(ctx context.Context, l net.Listener, o Options, idle time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stores := &storeCache{m: map[string]*sqlstore.Store{}}
	gates := &gateCache{m: map[string]cachedGate{}}
	defer stores.close()
	own := envNow()
	var mu sync.Mutex
	last := time.Now()
	if idle > 0 {
		go func() {
			t := time.NewTicker(idle / 4)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					mu.Lock()
					quiet := time.Since(last) > idle
					mu.Unlock()
					if quiet {
						cancel()
						return
					}
				}
			}
		}()
	}
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		last = time.Now()
		mu.Unlock()
		go serveOne(ctx, c, o, own, stores, gates)
	}
}

func serveOne(ctx context.Context, c net.Conn, o Options, own map[string]string, stores *storeCache, gates *gateCache) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var rq request
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&rq); err != nil || rq.V != 1 {
		return // the client answers in process
	}
	a := adapter(rq.Client, rq.ProjectDir)
	var rs response
	switch {
	case a == nil:
		rs.Mismatch = true
	case !sameEnv(own, rq.Env):
		rs.Mismatch = true
	default:
		ro := o
		ro.State, ro.Approve = rq.State, rq.Approve
		if rq.TimeoutMS > 0 {
			ro.Timeout = time.Duration(rq.TimeoutMS) * time.Millisecond
		}
		ro.open, ro.gates = stores.open, gates
		r, _, _ := Reply(ctx, a, bytesReader(rq.Event), ro)
		rs.Exit, rs.Stdout, rs.Stderr = r.Exit, r.Stdout, r.Stderr
		served.Add(1)
	}
	json.NewEncoder(c).Encode(rs)
}

func sameEnv(own, got map[string]string) bool {
	for _, k := range envKeys {
		if own[k] != got[k] {
			return false
		}
	}
	return true
}

// storeCache keeps each state file open for the server's life; a file
// that was replaced or removed is opened again.
type storeCache struct {
	mu sync.Mutex
	m  map[string]*sqlstore.Store
	fi map[string]os.FileInfo
}

func (sc *storeCache) open(ctx context.Context, path string) (veto.Store, func(), error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.fi == nil {
		sc.fi = map[string]os.FileInfo{}
	}
	if s, ok := sc.m[path]; ok {
		if fi, err := os.Stat(path); err == nil && os.SameFile(fi, sc.fi[path]) {
			return s, func() {}, nil
		}
		s.Close()
		delete(sc.m, path)
	}
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	sc.m[path], sc.fi[path] = s, fi
	return s, func() {}, nil
}

func (sc *storeCache) close() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, s := range sc.m {
		s.Close()
	}
}

// ask sends one event to the server at sock; ok is false when the answer
// must be made in process (no server, an error, a mismatch).
func ask(sock, client string, event []byte, o Options, deadline time.Duration) (agent.Reply, bool) {
	if !json.Valid(event) || private(filepath.Dir(sock)) != nil {
		return agent.Reply{}, false // another user's socket is never asked
	}
	d := net.Dialer{Timeout: 200 * time.Millisecond}
	c, err := d.Dial("unix", sock)
	if err != nil {
		return agent.Reply{}, false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	rq := request{V: 1, Client: client, State: o.State, Approve: o.Approve, TimeoutMS: o.Timeout.Milliseconds(),
		ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR"), Env: envNow(), Event: event}
	if err := json.NewEncoder(c).Encode(rq); err != nil {
		return agent.Reply{}, false
	}
	var rs response
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&rs); err != nil || rs.Mismatch {
		return agent.Reply{}, false
	}
	return agent.Reply{Exit: rs.Exit, Stdout: rs.Stdout, Stderr: rs.Stderr}, true
}

// private checks that dir belongs to this user and no one else may enter
// or write it: the only place a socket whose answers are trusted may be.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the socket's directory %s must be a directory of this user's that no one else can enter (mode 0700)", dir)
	}
	return nil
}

// Listen opens the server's socket at path, in a directory only this user
// can enter; a stale socket left by a dead server is replaced.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := private(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("a hook server already listens on %s", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return net.Listen("unix", path)
}

// gateCache keeps the gate built for a set of policy files (by path, size,
// modification time and inode) and a state file, so a server builds it
// once, not per event. A changed file is a new key.
type gateCache struct {
	mu sync.Mutex
	m  map[string]cachedGate
}

type cachedGate struct {
	p *policy.Policy
	g *veto.Gate
}

func (gc *gateCache) key(lo policy.LoadOptions, state string) string {
	var b strings.Builder
	for _, f := range []string{lo.UserPath, lo.ProjectPath, lo.FlagPath, lo.ManagedPath, state} {
		b.WriteString(f)
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "|%d|%d", fi.Size(), fi.ModTime().UnixNano())
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				fmt.Fprintf(&b, "|%d|%d", st.Dev, st.Ino)
			}
		}
		b.WriteByte(0)
	}
	return b.String()
}

// get returns the cached policy and gate; g is nil on a miss. done is a
// no-op: a cached gate's store stays open.
func (gc *gateCache) get(key string) (p *policy.Policy, g *veto.Gate, done func()) {
	done = func() {}
	if gc == nil {
		return nil, nil, done
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	c, ok := gc.m[key]
	if !ok {
		return nil, nil, done
	}
	return c.p, c.g, done
}

func (gc *gateCache) put(key string, p *policy.Policy, g *veto.Gate) {
	if gc == nil {
		return
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if len(gc.m) >= 64 {
		clear(gc.m) // bounded: many projects at once rebuild
	}
	gc.m[key] = cachedGate{p, g}
}
