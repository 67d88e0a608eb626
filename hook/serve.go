package hook

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/state"
)

// The hook server: a long-lived veto that keeps the state open and answers
// veto-hook (package wire) over a Unix socket, so a tool call costs the
// start of a small program and a round trip. veto-hook hands the event to
// veto hook when the server is absent, slow, or was started under another
// environment, and starts one when none runs; every path fails closed.

// served counts the requests the server answered (tests read it).
var served atomic.Int64

// SocketPath is where the hook server listens (wire.SocketPath).
func SocketPath() string { return wire.SocketPath() }

// Serve answers hook requests on l until ctx ends, with o's compiler and
// timeout; idle, when positive, ends it after that long without a request.
func Serve(ctx context.Context, l net.Listener, o Options, idle time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stores := state.NewCache(BusyTimeout(o.Timeout))
	gates := &gateCache{m: map[string]cachedGate{}, probe: probe.NewLive(4096)}
	defer stores.Close()
	// Requests under way when the server stops are answered first: they
	// run on a context that stopping does not cancel (each has its own
	// deadline), and the stores close after the last.
	var inflight sync.WaitGroup
	defer inflight.Wait()
	base := context.WithoutCancel(ctx)
	own, build := wire.EnvNow(), wire.Build()
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
	go watchSocket(ctx, l, cancel)
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
		inflight.Add(1)
		deciders.run(func() {
			defer inflight.Done()
			serveOne(base, c, o, own, build, stores, gates)
		})
	}
}

func serveOne(ctx context.Context, c net.Conn, o Options, own map[string]string, build string, stores *state.Cache, gates *gateCache) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	rq, err := wire.ReadRequest(c, maxRequest)
	if err != nil || rq.V != 1 {
		return // the client answers in process
	}
	a := agent.For(rq.Client, agent.Env{ProjectDir: rq.ProjectDir, Vars: rq.ClientEnv})
	rs := wire.Response{Build: build}
	switch {
	case rq.Status:
		// only the build
	case rq.Build != build:
		// Another build of veto-hook (its own socket is keyed by its build,
		// so this happens with an explicit VETO_SOCKET, or with veto and
		// veto-hook from different builds): it is answered by veto hook.
		// This server stays for its own clients; stepping aside would only
		// have another of the same build started at the next call.
		rs.Mismatch = true
	case a == nil:
		rs.Mismatch = true
	case !wire.SameEnv(own, rq.Env):
		rs.Mismatch = true
	default:
		// The client behind the request is noted for the presence proof
		// while the event is decided, and before the answer goes: the
		// call it allows may be one that asks for that proof.
		noted := make(chan struct{})
		go func() {
			defer close(noted)
			notePeer(c, rq.Client)
		}()
		defer func() { <-noted }()
		ro := o
		ro.State, ro.Approve = rq.State, rq.Approve
		if rq.TimeoutMS > 0 {
			ro.Timeout = time.Duration(rq.TimeoutMS) * time.Millisecond
		}
		if ro.Timeout <= 0 {
			ro.Timeout = 2 * time.Second
		}
		// The answer is due before veto-hook gives up on it: a decision is
		// never recorded after veto-hook has handed the event to veto hook
		// (a server stopped and continued past the deadline finds its
		// context ended, and records nothing).
		ro.Timeout = ServerTimeout(ro.Timeout)
		if rq.DeadlineNS > 0 {
			// Read late (the server was stopped, or busy): what is left of
			// veto-hook's wait, and nothing when it has given up.
			left := ServerTimeout(time.Until(time.Unix(0, rq.DeadlineNS)))
			if left <= 0 {
				return // veto hook answers it
			}
			ro.Timeout = min(ro.Timeout, left)
		}
		ro.open, ro.gates = stores.Open, gates
		// The connection lasts as long as the answer may take (an event
		// veto waits on for a person takes minutes), and no longer than
		// veto-hook waits for it: once veto-hook is gone (the client
		// stopped it, or it gave up), nothing more is decided or recorded.
		c.SetDeadline(time.Now().Add(ro.Timeout + 5*time.Second))
		rctx, gone := context.WithTimeout(ctx, ro.Timeout)
		defer gone()
		go func() {
			// veto-hook sends nothing after the request but its newline,
			// which a read that ended at the closing brace leaves here:
			// what comes is read and dropped, and only the end of the
			// connection (veto-hook gone, or the answer given) ends it.
			var b [64]byte
			for {
				if _, err := c.Read(b[:]); err != nil {
					break
				}
			}
			gone()
		}()
		r, _ := replyTo(rctx, a, rq.Event, nil, ro)
		rs.Exit, rs.Stdout, rs.Stderr = r.Exit, r.Stdout, r.Stderr
		served.Add(1)
		<-noted
	}
	c.Write(wire.AppendResponse(nil, &rs))
}

// maxRequest is the longest request the server reads: an event veto-hook
// may send, and room for the rest (the environment's few paths).
const maxRequest = wire.MaxEvent + 64<<10

// ServerTimeout is the deadline a server answers within when veto-hook
// waits timeout more: nine tenths of it.
func ServerTimeout(timeout time.Duration) time.Duration {
	return timeout * 9 / 10
}

// Listen opens the server's socket at path, in a directory only this user
// can enter. One server per socket: it holds a lock (path.lock) for its
// life, and a second one is refused. A stale socket left by a dead server
// is replaced.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := wire.Private(filepath.Dir(path)); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("a hook server already listens on %s", path)
		}
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		lock.Close()
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &lockedListener{Listener: l, lock: lock}, nil
}

// lockedListener releases the server's lock after closing (and so
// removing) its socket.
type lockedListener struct {
	net.Listener
	lock *os.File
	once sync.Once
}

func (l *lockedListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { l.lock.Close() })
	return err
}

// watchSocket ends the server (cancel) when its socket file is removed or
// replaced, since nothing could reach it any more, or when its own program
// file is replaced, since an upgrade must not leave it deciding.
func watchSocket(ctx context.Context, l net.Listener, cancel func()) {
	path := l.Addr().String()
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	self, _ := os.Executable()
	exe, exeErr := os.Stat(self)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now, err := os.Stat(path); err != nil || !os.SameFile(fi, now) {
				cancel()
				return
			}
			if exeErr == nil {
				if now, err := os.Stat(self); err != nil || !os.SameFile(exe, now) || !now.ModTime().Equal(exe.ModTime()) {
					cancel()
					return
				}
			}
		}
	}
}

// ServerBuild returns the build of the hook server answering on the socket
// at path; ok is false when none answers.
func ServerBuild(path string) (build string, ok bool) {
	if wire.Private(filepath.Dir(path)) != nil {
		return "", false
	}
	c, err := net.DialTimeout("unix", path, 200*time.Millisecond)
	if err != nil {
		return "", false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if err := json.NewEncoder(c).Encode(wire.Request{V: 1, Status: true}); err != nil {
		return "", false
	}
	var rs wire.Response
	if err := json.NewDecoder(bufio.NewReader(c)).Decode(&rs); err != nil {
		return "", false
	}
	return rs.Build, true
}

// Stop ends the hook server on the socket at path: it removes the socket,
// which the server notices within a second, and waits up to wait for the
// server to let go of its lock. It reports whether a server was running.
func Stop(path string, wait time.Duration) (bool, error) {
	if err := wire.Private(filepath.Dir(path)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	_, running := ServerBuild(path)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return running, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return running, nil
	}
	if err != nil {
		return running, err
	}
	defer lock.Close()
	for end := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
			return running, nil
		}
		if time.Now().After(end) {
			return running, fmt.Errorf("the hook server on %s still runs %s after its socket was removed", path, wait)
		}
	}
}

// gateCache keeps the gate built for a set of policy files (by path, size,
// modification time and inode) and a state file, so a server builds it
// once, not per event. A changed file is a new key.
type gateCache struct {
	mu sync.Mutex
	m  map[string]cachedGate
	// probe is every gate's: the hashes it remembers outlive a gate rebuilt
	// for a changed policy.
	probe probe.Live
	// active is the revision each shared database marked active when
	// last asked, by state.
	active map[string]askedHead
}

// heads returns the revision db marks active, asked at most once a
// second per state (a pushed revision is in force within 2 s); with no
// cache (a one-shot veto hook), every time.
func (gc *gateCache) heads(ctx context.Context, name state.Name, db *sql.DB) (string, error) {
	ask := func() (string, error) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		h, err := state.NewRevisions(func() *sql.DB { return db }, "postgres").Heads(qctx)
		return h.Active, err
	}
	if gc == nil {
		return ask()
	}
	k := state.Key(name)
	gc.mu.Lock()
	h, ok := gc.active[k]
	gc.mu.Unlock()
	if ok && time.Since(h.at) < time.Second {
		return h.rev, nil
	}
	rev, err := ask()
	if err != nil {
		return "", err
	}
	gc.mu.Lock()
	if gc.active == nil {
		gc.active = map[string]askedHead{}
	}
	gc.active[k] = askedHead{rev: rev, at: time.Now()}
	gc.mu.Unlock()
	return rev, nil
}

// askedHead is the active revision a database marked when last asked.
type askedHead struct {
	rev string
	at  time.Time
}

type cachedGate struct {
	p *policy.Policy
	g *veto.Gate
}

func (gc *gateCache) key(lo policy.LoadOptions, state string) string {
	// The state by name only: the gate holds the state's store, which
	// follows its file itself (state.Cache).
	return state + "\x00" + live.FileKey(lo)
}

// get returns the cached policy and gate; g is nil on a miss.
func (gc *gateCache) get(key string) (p *policy.Policy, g *veto.Gate) {
	if gc == nil {
		return nil, nil
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	c, ok := gc.m[key]
	if !ok {
		return nil, nil
	}
	return c.p, c.g
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
