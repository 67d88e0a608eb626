package hook_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/sqlite"
)

// TestFaults is the fault-injection suite of docs/state.md: real veto and
// veto-hook processes, built here, on real files, a real tmpfs and a
// PostgreSQL server of the suite's own. It runs only with VETO_FAULTS=1
// (.ci/run sets it): it takes minutes, and mounts a tmpfs (it must run as
// root). VETO_FAULTS_CALLS sets the calls each of the 16 concurrent
// processes makes (default 200).
//
// Each case checks the blocking form of every refusal (exit 2, the
// reason on stderr, as Claude Code needs), the cause named in the reason,
// that every decision acknowledged (allowed) is in the state once, and
// veto log verify. It prints the table docs/state.md shows.
func TestFaults(t *testing.T) {
	if os.Getenv("VETO_FAULTS") != "1" {
		t.Skip("the fault-injection suite runs with VETO_FAULTS=1")
	}
	calls := 200
	if n, err := strconv.Atoi(os.Getenv("VETO_FAULTS_CALLS")); err == nil && n > 0 {
		calls = n
	}
	r := newRig(t)
	start := time.Now()
	t.Run("concurrency", func(t *testing.T) { r.concurrency(t, calls) })
	t.Run("sigkill-hook", r.killHook)
	t.Run("sigkill-server", r.killServer)
	t.Run("sigstop-server", r.stopServer)
	t.Run("damage", r.damage)
	t.Run("full-disk", r.fullDisk)
	t.Run("lock", r.lock)
	t.Run("path", r.path)
	t.Run("postgres-restart", r.postgresRestart)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| fault | path | verdict | cause named | decisions lost |\n|---|---|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.fault, row.path, row.verdict, row.cause, row.lost)
	}
	fmt.Fprintf(&b, "\n%d calls a process in the concurrency cases; the suite took %s\n", calls, time.Since(start).Round(time.Second))
	fmt.Print(b.String())
}

type row struct{ fault, path, verdict, cause, lost string }

type rig struct {
	bin, dir, ws string
	unrunnable   string // veto's build that cannot run: only a server can answer
	mu           sync.Mutex
	rows         []row
	k            int
}

func newRig(t *testing.T) *rig {
	dir, err := os.MkdirTemp("", "vf")
	check(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &rig{bin: filepath.Join(dir, "bin"), dir: dir, ws: filepath.Join(dir, "ws")}
	for _, cmd := range []string{"veto", "veto-hook"} {
		b := exec.Command("go", "build", "-o", filepath.Join(r.bin, cmd), "../cmd/"+cmd)
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := b.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", cmd, err, out)
		}
	}
	os.MkdirAll(filepath.Join(r.ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(r.ws, "main.go"), []byte("package main\n"), 0o644)
	b, err := os.ReadFile(filepath.Join(r.bin, "veto"))
	check(t, err)
	r.unrunnable = filepath.Join(dir, "veto-unrunnable")
	check(t, os.WriteFile(r.unrunnable, b[:64<<10], 0o644))
	return r
}

func (r *rig) add(w row) {
	r.mu.Lock()
	r.rows = append(r.rows, w)
	r.mu.Unlock()
}

// setup is where a case's calls go: a SQLite state (or a PostgreSQL
// database), and for the served path a socket of its own.
type setup struct {
	r      *rig
	state  string
	pg     string
	sock   string
	served bool
	full   string // the veto veto-hook hands events to
	xdg    string // XDG_STATE_HOME, when set: the state is the default in it
}

func (r *rig) setup(t *testing.T, served bool, stateDir string) *setup {
	r.mu.Lock()
	r.k++
	k := r.k
	r.mu.Unlock()
	if stateDir == "" {
		stateDir = filepath.Join(r.dir, fmt.Sprintf("s%d", k))
	}
	s := &setup{r: r, state: filepath.Join(stateDir, "veto.db"), sock: filepath.Join(r.dir, "run", fmt.Sprintf("%d.sock", k)),
		served: served, full: filepath.Join(r.bin, "veto")}
	t.Cleanup(s.stopServer)
	return s
}

func (s *setup) path() string {
	if s.served {
		return "served"
	}
	return "veto hook"
}

func (s *setup) environ() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.r.dir,
		"TMPDIR=" + filepath.Join(s.r.dir, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(s.r.dir, "config"),
		"XDG_RUNTIME_DIR=" + filepath.Join(s.r.dir, "xdg"),
		"VETO_MANAGED_POLICY=" + filepath.Join(s.r.dir, "none.yaml"),
		"VETO_SOCKET=" + s.sock,
		"VETO_FULL=" + s.full,
	}
	if s.xdg != "" {
		env = append(env, "XDG_STATE_HOME="+s.xdg)
	} else {
		env = append(env, "VETO_STATE="+s.state)
	}
	if s.pg != "" {
		env = append(env, "VETO_POSTGRES="+s.pg)
	}
	if !s.served {
		env = append(env, "VETO_NO_SERVER=1")
	}
	return env
}

func (s *setup) event(session, id string) []byte {
	return []byte(`{"session_id":"` + session + `","cwd":"` + s.r.ws + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` +
		s.r.ws + `/main.go"},"tool_use_id":"` + id + `"}`)
}

type answer struct {
	id     string
	code   int // -1: killed, no answer
	stderr string
}

// call runs veto-hook claude-code with the event on stdin.
func (s *setup) call(session, id string) answer {
	c := exec.Command(filepath.Join(s.r.bin, "veto-hook"), "claude-code")
	return s.run(c, session, id, 0)
}

// run runs c with the event; kill > 0 SIGKILLs it after that long.
func (s *setup) run(c *exec.Cmd, session, id string, kill time.Duration) answer {
	c.Env = s.environ()
	c.Stdin = bytes.NewReader(s.event(session, id))
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		return answer{id: id, code: -1, stderr: err.Error()}
	}
	if kill > 0 {
		tm := time.AfterFunc(kill, func() { c.Process.Kill() })
		defer tm.Stop()
	}
	err := c.Wait()
	a := answer{id: id, stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		a.code = ee.ExitCode()
	default:
		a.code = -1
	}
	return a
}

// veto runs the veto command on the setup's state.
func (s *setup) veto(args ...string) (int, string) {
	c := exec.Command(filepath.Join(s.r.bin, "veto"), args...)
	c.Env = s.environ()
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, string(out)
}

// startServer makes the served path's first call, which starts a server,
// and waits for its socket.
func (s *setup) startServer(t *testing.T) {
	if !s.served {
		return
	}
	if a := s.call("warm", "warm-"+filepath.Base(s.sock)); a.code != 0 {
		t.Fatalf("the first call: exit %d: %s", a.code, a.stderr)
	}
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("unix", s.sock); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no server answers on the socket")
}

// serverPIDs are the processes serving the setup's socket (the suite's
// own: their command line names its socket).
func (s *setup) serverPIDs() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[0] == filepath.Join(s.r.bin, "veto") && slices.Contains(args, "serve-hooks") {
			env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
			if slices.Contains(args, s.sock) || bytes.Contains(env, []byte("VETO_SOCKET="+s.sock+"\x00")) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func (s *setup) stopServer() {
	if !s.served {
		return
	}
	c := exec.Command(filepath.Join(s.r.bin, "veto"), "serve-hooks", "--stop", "--socket", s.sock)
	c.Env = s.environ()
	c.Run()
	for _, pid := range s.serverPIDs() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// decisions counts the decision events recorded for each call id.
func (s *setup) decisions(t *testing.T) map[string]int {
	ctx := context.Background()
	var log veto.Log
	if s.pg != "" {
		st, err := postgres.Open(ctx, s.pg)
		check(t, err)
		defer st.Close()
		log = st
	} else {
		st, err := sqlite.Open(ctx, s.state, sqlite.Options{})
		check(t, err)
		defer st.Close()
		log = st
	}
	n := map[string]int{}
	err := log.Scan(ctx, veto.LogQuery{Kinds: []veto.EventKind{veto.EventAllowed, veto.EventDenied, veto.EventToolDenied}},
		func(_ string, _ uint64, b []byte) error {
			e, err := eventlog.DecodeEvent(b)
			if err != nil {
				return err
			}
			n[e.CallID]++
			return nil
		})
	check(t, err)
	return n
}

// lost counts the answers allowed (acknowledged) whose call has no
// decision in the state, and the calls decided twice.
func (s *setup) lost(t *testing.T, as []answer) (lost, twice int) {
	n := s.decisions(t)
	for _, a := range as {
		if a.code == 0 && n[a.id] == 0 {
			lost++
		}
	}
	for _, c := range n {
		if c > 1 {
			twice++
		}
	}
	return lost, twice
}

// verify runs veto log verify on the setup's state.
func (s *setup) verify(t *testing.T) {
	t.Helper()
	args := []string{"log", "verify", "--state", s.state}
	if s.pg != "" {
		args = []string{"log", "verify", "--postgres", s.pg}
	}
	if code, out := s.veto(args...); code != 0 || !strings.Contains(out, "every chain holds") {
		t.Errorf("veto log verify: exit %d: %s", code, out)
	}
}

var causeWords = regexp.MustCompile(`is damaged \([^)]*\)?|was written by a newer veto( \([^)]*\))?|is locked by another writer[^,]*|is contended|cannot be reached|is not a usable path|cannot be written: the disk is full|did not decide within [0-9.a-zµ]*`)

var markedBefore = regexp.MustCompile(`is damaged \(found damaged before: .*; marked in [^)]*\)`)

// verdicts summarises the answers' exit codes, checks that each refusal
// has the blocking form with a reason, and returns the causes named.
func verdicts(t *testing.T, as []answer) (verdict, causes string) {
	t.Helper()
	codes := map[int]int{}
	seen := map[string]bool{}
	var named []string
	for _, a := range as {
		codes[a.code]++
		if a.code == 0 || a.code == -1 {
			continue
		}
		if a.code != 2 || !strings.Contains(a.stderr, "blocked") {
			t.Errorf("call %s: exit %d, not the blocking form: %q", a.id, a.code, a.stderr)
		}
		c := causeWords.FindString(a.stderr)
		if c == "" {
			c = "(none: " + firstLine(a.stderr) + ")"
		}
		c = markedBefore.ReplaceAllString(strings.TrimSpace(c), "is damaged (found so before; marked)")
		if !seen[c] {
			seen[c] = true
			named = append(named, c)
		}
	}
	var ks []int
	for k := range codes {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var parts []string
	for _, k := range ks {
		name := fmt.Sprintf("exit %d", k)
		if k == -1 {
			name = "killed"
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", name, codes[k]))
	}
	if len(named) == 0 {
		named = []string{"—"}
	}
	return strings.Join(parts, ", "), strings.Join(named, "; ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// parallel runs workers × n calls, worker w calling fn(w, i).
func parallel(workers, n int, fn func(w, i int) answer) []answer {
	out := make([]answer, workers*n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				out[w*n+i] = fn(w, i)
			}
		}()
	}
	wg.Wait()
	return out
}

func (r *rig) finish(t *testing.T, s *setup, fault string, as []answer, wantCause string) {
	t.Helper()
	r.finishShown(t, s, fault, as, as, wantCause)
}

// finishShown: the verdict of the answers shown, the losses of all.
func (r *rig) finishShown(t *testing.T, s *setup, fault string, as, shown []answer, wantCause string) {
	t.Helper()
	verdict, causes := verdicts(t, shown)
	causes = strings.ReplaceAll(causes, r.dir, "…")
	lost, twice := s.lost(t, as)
	s.verify(t)
	if lost != 0 || twice != 0 {
		t.Errorf("%s: %d acknowledged decisions lost, %d calls decided twice", fault, lost, twice)
	}
	if wantCause != "" && !strings.Contains(causes, wantCause) {
		t.Errorf("%s: causes named %q, want %q", fault, causes, wantCause)
	}
	acked := 0
	for _, a := range as {
		if a.code == 0 {
			acked++
		}
	}
	l := fmt.Sprintf("%d of %d acknowledged", lost, acked)
	if twice > 0 {
		l += fmt.Sprintf(", %d decided twice", twice)
	}
	r.add(row{fault, s.path(), verdict, causes, l})
}

// concurrency: 16 processes × n calls, one run and a run each, with and
// without the server.
func (r *rig) concurrency(t *testing.T, n int) {
	for _, served := range []bool{false, true} {
		for _, many := range []bool{false, true} {
			s := r.setup(t, served, "")
			s.startServer(t)
			runs := "one run"
			if many {
				runs = "a run each"
			}
			as := parallel(16, n, func(w, i int) answer {
				session := "one"
				if many {
					session = fmt.Sprintf("w%d", w)
				}
				return s.call(session, fmt.Sprintf("c%d-%d", w, i))
			})
			r.finish(t, s, fmt.Sprintf("16 processes × %d calls, %s", n, runs), as, "")
			s.stopServer()
		}
	}
}

// killHook: veto hook processes SIGKILLed at random points of their
// answer, 8 at a time, in one run.
func (r *rig) killHook(t *testing.T) {
	s := r.setup(t, false, "")
	rng := rand.New(rand.NewPCG(16, 1))
	var mu sync.Mutex
	as := parallel(8, 40, func(w, i int) answer {
		mu.Lock()
		kill := time.Duration(1+rng.IntN(60)) * time.Millisecond
		if rng.IntN(3) == 0 {
			kill = 0 // a third answer
		}
		mu.Unlock()
		c := exec.Command(filepath.Join(r.bin, "veto"), "hook", "claude-code")
		return s.run(c, "one", fmt.Sprintf("k%d-%d", w, i), kill)
	})
	r.finish(t, s, "veto hook SIGKILLed at random points (8 × 40 calls)", as, "")
}

// killServer: the server SIGKILLed at random points while 8 processes
// call through it; veto-hook starts a new one.
func (r *rig) killServer(t *testing.T) {
	s := r.setup(t, true, "")
	s.startServer(t)
	done := make(chan struct{})
	var kills atomic.Int64
	go func() {
		rng := rand.New(rand.NewPCG(16, 2))
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(100+rng.IntN(400)) * time.Millisecond):
			}
			for _, pid := range s.serverPIDs() {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					kills.Add(1)
				}
			}
		}
	}()
	as := parallel(8, 40, func(w, i int) answer { return s.call("one", fmt.Sprintf("k%d-%d", w, i)) })
	close(done)
	time.Sleep(50 * time.Millisecond)
	r.finish(t, s, fmt.Sprintf("the server SIGKILLed at random points (%d kills, 8 × 40 calls)", kills.Load()), as, "")
	if kills.Load() == 0 {
		t.Error("no server was killed")
	}
}

// stopServer: the server SIGSTOPped with a call in flight and SIGCONTed
// after veto-hook gave up: the server decides nothing past the deadline,
// so the call has at most one decision (veto hook's, if veto-hook had
// time left to ask it).
func (r *rig) stopServer(t *testing.T) {
	s := r.setup(t, true, "")
	s.startServer(t)
	pids := s.serverPIDs()
	if len(pids) == 0 {
		t.Fatal("no server to stop")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	a := s.call("one", "stopped1")
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	time.Sleep(2500 * time.Millisecond) // the server reads the request, past its deadline
	// Answered (by veto hook) or blocked (veto-hook's deadline passed
	// waiting): never two decisions, and one if it was allowed.
	if n := s.decisions(t)["stopped1"]; n > 1 || (a.code == 0 && n != 1) {
		t.Errorf("%d decisions for the call in flight, answered exit %d", n, a.code)
	}
	r.finish(t, s, "the server SIGSTOPped with a call in flight, SIGCONTed after veto-hook gave up", []answer{a}, "")
}

// path: XDG_STATE_HOME with "?", "#" and "%20" in it: exactly that file,
// 0600, and no other.
func (r *rig) path(t *testing.T) {
	for _, served := range []bool{false, true} {
		s := r.setup(t, served, "")
		s.xdg = filepath.Join(r.dir, "st?x=1#y%20z-"+filepath.Base(s.sock))
		s.state = filepath.Join(s.xdg, "veto", "veto.db")
		s.startServer(t)
		as := []answer{s.call("q", "q1"), s.call("q", "q2")}
		fi, err := os.Stat(s.state)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the state at exactly the path: %v %v", fi, err)
		}
		if _, err := os.Stat(filepath.Join(r.dir, "st")); err == nil {
			t.Error("a stray file at the path cut at '?'")
		}
		r.finish(t, s, "XDG_STATE_HOME with ?, # and %20 (exactly that file, 0600, no stray …/st)", as, "")
		s.stopServer()
	}
}

// seeded is a setup whose state holds 60 decisions, checkpointed into the
// file, so damage has pages to hit; on the served path only the server
// can answer after it.
func (r *rig) seeded(t *testing.T, served bool, stateDir string) (*setup, []answer) {
	s := r.setup(t, served, stateDir)
	s.startServer(t)
	var as []answer
	for i := 0; i < 60; i++ {
		a := s.call("seed", fmt.Sprintf("seed%d", i))
		if a.code != 0 {
			t.Fatalf("seed %d: exit %d: %s", i, a.code, a.stderr)
		}
		as = append(as, a)
	}
	st, err := sqlite.Open(context.Background(), s.state, sqlite.Options{})
	check(t, err)
	_, err = st.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	check(t, err)
	st.Close()
	if served {
		s.full = r.unrunnable
	}
	return s, as
}

// damage: each kind of damage, through veto hook and through a server
// that holds the file open. After it, veto state check names it, repair
// moves it aside, and the next call is decided on a new state.
func (r *rig) damage(t *testing.T) {
	damages := append(slices.Clone(stateDamages), stateDamage{"migrated in place by a newer veto", "was written by a newer veto", "", func(t *testing.T, p string) {
		db, err := sql.Open("sqlite", "file:"+p)
		check(t, err)
		defer db.Close()
		_, err = db.Exec(`UPDATE veto_meta SET value = '99' WHERE key = 'migrations'`)
		check(t, err)
	}})
	for _, d := range damages {
		for _, served := range []bool{false, true} {
			s, _ := r.seeded(t, served, "")
			d.do(t, s.state)
			var as []answer
			for i := 0; i < 3; i++ {
				as = append(as, s.call("after", fmt.Sprintf("after%d", i)))
			}
			verdict, causes := verdicts(t, as)
			causes = strings.ReplaceAll(causes, r.dir, "…")
			for _, a := range as {
				if a.code != 2 || !strings.Contains(a.stderr, d.cause) {
					t.Errorf("%s, %s: exit %d: %s", d.name, s.path(), a.code, a.stderr)
				}
			}
			code, out := s.veto("state", "check", "--state", s.state)
			want := 3
			if strings.Contains(d.cause, "newer") {
				want = 4
			}
			if code != want {
				t.Errorf("%s: veto state check: exit %d, want %d: %s", d.name, code, want, out)
			}
			lost := "0 of 0 acknowledged after the fault"
			if want == 3 {
				if code, out := s.veto("state", "repair", "--state", s.state); code != 0 {
					t.Errorf("%s: veto state repair: exit %d: %s", d.name, code, out)
				}
				// The new state answers, the server too (it sees another file).
				a := s.call("after", "repaired")
				if a.code != 0 {
					t.Errorf("%s, %s: after the repair: exit %d: %s", d.name, s.path(), a.code, a.stderr)
				}
				l, twice := s.lost(t, []answer{a})
				s.verify(t)
				if l != 0 || twice != 0 {
					t.Errorf("%s: after the repair: %d lost, %d twice", d.name, l, twice)
				}
				lost += "; repaired, then 0 of 1"
			}
			r.add(row{d.name, s.path(), verdict, causes, lost})
			s.stopServer()
		}
	}
}

// fullDisk: the state on a 16 MiB tmpfs, filled up: every call is refused
// as full; once there is room again, decisions go on, none lost.
func (r *rig) fullDisk(t *testing.T) {
	for _, served := range []bool{false, true} {
		mnt, err := os.MkdirTemp(r.dir, "tmpfs")
		check(t, err)
		if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m,mode=0700"); err != nil {
			t.Fatalf("mount a tmpfs (the suite runs as root): %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
		s, before := r.seeded(t, served, filepath.Join(mnt, "state"))
		fill := filepath.Join(mnt, "fill")
		f, err := os.Create(fill)
		check(t, err)
		chunk := make([]byte, 4096)
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
		f.Close()
		var as []answer
		for i := 0; i < 20; i++ {
			as = append(as, s.call("seed", fmt.Sprintf("full%d", i)))
		}
		verdict, causes := verdicts(t, as)
		refused := 0
		for _, a := range as {
			if a.code == 2 && strings.Contains(a.stderr, "the disk is full") {
				refused++
			}
		}
		if refused == 0 {
			t.Errorf("full disk, %s: no call was refused as full: %s", s.path(), causes)
		}
		code, out := s.veto("state", "check", "--state", s.state)
		if code != 6 {
			t.Errorf("full disk: veto state check: exit %d, want 6: %s", code, out)
		}
		os.Remove(fill)
		s.full = filepath.Join(r.bin, "veto")
		after := s.call("seed", "room-again")
		if after.code != 0 {
			t.Errorf("full disk, %s: with room again: exit %d: %s", s.path(), after.code, after.stderr)
		}
		all := append(append(before, as...), after)
		lost, twice := s.lost(t, all)
		s.verify(t)
		if lost != 0 || twice != 0 {
			t.Errorf("full disk: %d lost, %d twice", lost, twice)
		}
		acked := 0
		for _, a := range all {
			if a.code == 0 {
				acked++
			}
		}
		r.add(row{"a full disk (16 MiB tmpfs, filled)", s.path(), verdict + "; with room again exit " + strconv.Itoa(after.code), causes,
			fmt.Sprintf("%d of %d acknowledged", lost, acked)})
		s.stopServer()
		syscall.Unmount(mnt, syscall.MNT_DETACH)
	}
}

// lock: another writer holds the state's write lock past the busy
// timeout: every call is refused as locked; after, none was lost.
func (r *rig) lock(t *testing.T) {
	for _, served := range []bool{false, true} {
		s, before := r.seeded(t, served, "")
		db, err := sql.Open("sqlite", "file:"+s.state+"?_txlock=immediate")
		check(t, err)
		tx, err := db.Begin()
		check(t, err)
		_, err = tx.Exec(`INSERT INTO veto_meta VALUES ('held', '1')`)
		check(t, err)
		as := []answer{s.call("seed", "locked1"), s.call("seed", "locked2")}
		code, out := s.veto("state", "check", "--state", s.state, "--timeout", "300ms")
		tx.Rollback()
		db.Close()
		if code != 5 {
			t.Errorf("lock: veto state check: exit %d, want 5: %s", code, out)
		}
		for _, a := range as {
			if a.code != 2 {
				t.Errorf("lock, %s: exit %d: %s", s.path(), a.code, a.stderr)
			}
		}
		s.full = filepath.Join(r.bin, "veto")
		after := s.call("seed", "unlocked")
		r.finishShown(t, s, "a writer holds the lock past the busy timeout (2 calls, then 1 after)", append(append(before, as...), after), append(as, after), "is locked by another writer")
		s.stopServer()
	}
}

// postgresRestart: a PostgreSQL server of the suite's own (never the
// machine's) is stopped and started again while 4 processes call; the
// calls while it is down are refused as unreachable, and none
// acknowledged is lost.
func (r *rig) postgresRestart(t *testing.T) {
	pg := newPG(t, r.dir)
	for _, served := range []bool{false, true} {
		s := r.setup(t, served, "")
		s.pg = pg.dsn(t, strings.ReplaceAll("f_"+s.path(), " ", "_"))
		s.startServer(t)
		restarted := make(chan struct{})
		go func() {
			defer close(restarted)
			time.Sleep(2 * time.Second)
			pg.ctl(t, "stop", "-m", "fast")
			time.Sleep(2 * time.Second)
			pg.ctl(t, "start")
		}()
		deadline := time.Now().Add(8 * time.Second)
		var mu sync.Mutex
		var as []answer
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(deadline); i++ {
					a := s.call("one", fmt.Sprintf("p%d-%d", w, i))
					mu.Lock()
					as = append(as, a)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		<-restarted
		after := s.call("one", "after-restart")
		if after.code != 0 {
			t.Errorf("postgres, %s: after the restart: exit %d: %s", s.path(), after.code, after.stderr)
		}
		r.finish(t, s, "PostgreSQL stopped and started again mid-run (4 processes, 8 s)", append(as, after), "cannot be reached")
		s.stopServer()
	}
}

// pgServer is a PostgreSQL cluster of the suite's own, on a port of its
// own, run as the postgres user (initdb refuses root).
type pgServer struct {
	bin        string
	data, sock string
	port       int
}

func newPG(t *testing.T, dir string) *pgServer {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		t.Fatal("no PostgreSQL initdb in /usr/lib/postgresql/*/bin")
	}
	slices.Sort(found)
	bin := filepath.Dir(found[len(found)-1])
	root, err := os.MkdirTemp("", "vfpg")
	check(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	check(t, os.Chmod(root, 0o755))
	p := &pgServer{bin: bin, data: filepath.Join(root, "data"), sock: root, port: freePort(t)}
	check(t, exec.Command("chown", "postgres", root).Run())
	if out, err := exec.Command("runuser", "-u", "postgres", "--", bin+"/initdb", "-D", p.data, "-U", "postgres", "--auth=trust", "-N").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p.ctl(t, "start")
	t.Cleanup(func() { p.ctl(t, "stop", "-m", "immediate") })
	return p
}

func (p *pgServer) ctl(t *testing.T, args ...string) {
	a := []string{"-u", "postgres", "--", filepath.Join(p.bin, "pg_ctl"), "-D", p.data, "-w", "-l", filepath.Join(p.sock, "log")}
	a = append(a, args...)
	if args[0] == "start" {
		a = append(a, "-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", p.port, p.sock))
	}
	if out, err := exec.Command("runuser", a...).CombinedOutput(); err != nil {
		t.Errorf("pg_ctl %s: %v\n%s", args[0], err, out)
	}
}

// dsn makes a database of its own for one case.
func (p *pgServer) dsn(t *testing.T, name string) string {
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
	db, err := sql.Open("pgx", admin)
	check(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE DATABASE ` + name)
	check(t, err)
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=1", p.port, name)
}

// freePort is a free TCP port on 127.0.0.1 from 55433 up, never 5432.
func freePort(t *testing.T) int {
	for port := 55433; port < 55533; port++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free port from 55433")
	return 0
}
