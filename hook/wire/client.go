package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vetohq/veto/clients"
)

// ServerIdle is how long a server that veto-hook started waits for a
// request before it exits.
const ServerIdle = 30 * time.Minute

// Fallback answers an event when the server does not: it runs veto with
// args (hook CLIENT and the flags) on the event bytes. ok is false when
// veto could not be run at all.
type Fallback func(args []string, event []byte, stdout, stderr io.Writer) (exit int, ok bool)

// Main is veto-hook: ask the server, else hand the event to veto hook.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return Run(args, stdin, stdout, stderr, RunVeto, StartServer)
}

// Run is Main with the fallback and the server starter given; start may
// be nil (never start a server).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer, fallback Fallback, start func(sock string) error) int {
	fs := flag.NewFlagSet("veto-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	timeout := fs.Duration("timeout", 2*time.Second, "refuse the call when no answer is ready in this time")
	approve := fs.Bool("approve", false, "answer allow for the user (skips the client's own permission prompt)")
	if len(args) == 0 || !slices.Contains(Clients, args[0]) {
		fmt.Fprintln(stderr, "veto-hook: want a client: "+strings.Join(Clients, ", "))
		return 64
	}
	client := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 64
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "veto-hook: unexpected argument %q\n", fs.Arg(0))
		return 64
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "veto-hook: --timeout must be positive")
		return 64
	}
	// One budget covers the whole answer, from reading the event to the
	// reply, across the server and veto hook: a client that never closes
	// stdin, or a server that never answers, is refused within it. It is
	// at most half the timeout the client's settings give the hook now.
	c := clients.Lookup(client)
	wd, wdErr := os.Getwd()
	if c != nil && wdErr == nil {
		if reg := Registered(c, wd); reg > 0 && reg/2 < *timeout {
			*timeout = reg / 2
		}
	}
	began := time.Now()
	deadline := began.Add(*timeout)
	in, err := ReadEvent(stdin, MaxEvent+1, *timeout)
	if errors.Is(err, ErrSlowInput) {
		code, o, e := Deny(client, fmt.Sprintf("veto-hook did not receive the whole hook event within %s (its input was not closed), so the call is blocked.", *timeout))
		io.WriteString(stdout, o)
		io.WriteString(stderr, e)
		return code
	}
	// An event veto may wait on for a person has half its own registered
	// timeout (the table's when the file has none).
	if ev := waitingOf(c, in); ev != nil && err == nil {
		reg := ev.Timeout
		if wdErr == nil {
			if r := RegisteredFor(c, wd, ev.Name); r > 0 {
				reg = r
			}
		}
		*timeout = reg / 2
		deadline = began.Add(*timeout)
	}
	// An event that cannot be read whole, or is too long, is still handed
	// on: veto answers it with the client's denial.
	build, known := VetoBuild()
	var asked []string // set when a server may have decided the event without answering
	if os.Getenv("VETO_NO_SERVER") == "" && len(in) <= MaxEvent && absolute(*state) && known {
		sock := SocketFor(build)
		wait := time.Until(deadline)
		rq := Request{V: 1, Build: build, Client: client, State: *state, Approve: *approve, TimeoutMS: wait.Milliseconds(),
			ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR"), Env: EnvNow(), ClientEnv: ClientEnvNow(), Event: in}
		at := time.Now()
		rq.DeadlineNS = deadline.UnixNano()
		rs, err := Ask(sock, rq, wait)
		if err == nil {
			if rs.Stdout != "" {
				io.WriteString(stdout, rs.Stdout)
			}
			if rs.Stderr != "" {
				io.WriteString(stderr, rs.Stderr)
			}
			return rs.Exit
		}
		if errors.Is(err, ErrNoServer) && start != nil {
			start(sock) // for the next call; this one is answered below
		}
		if !errors.Is(err, ErrNoServer) && !errors.Is(err, errMismatch) {
			// The server had the event and may have recorded a decision:
			// veto hook answers with that one rather than decide again.
			asked = []string{"--asked-at", strconv.FormatInt(at.UnixNano(), 10)}
		}
	}
	left := time.Until(deadline)
	if left < minLeft {
		code, o, e := Deny(client, fmt.Sprintf("veto did not decide within %s, so the call is blocked.", *timeout))
		io.WriteString(stdout, o)
		io.WriteString(stderr, e)
		return code
	}
	asked = append(asked, "--timeout", left.Round(time.Millisecond).String())
	// veto hook refuses at the budget itself; one that has not answered
	// Grace after it (stuck starting, or past its own deadline) is not
	// waited for: the client might stop waiting first, and a client that
	// stops waiting lets the call run. Its output is held until it is
	// done, so a late or partial answer never mixes with this denial.
	type answer struct {
		code     int
		ok       bool
		out, err bytes.Buffer
	}
	done := make(chan *answer, 1)
	go func() {
		a := &answer{}
		a.code, a.ok = fallback(append(append([]string{"hook"}, args...), asked...), in, &a.out, &a.err)
		done <- a
	}()
	late := time.NewTimer(time.Until(deadline) + Grace)
	defer late.Stop()
	select {
	case a := <-done:
		if a.ok {
			stdout.Write(a.out.Bytes())
			stderr.Write(a.err.Bytes())
			return a.code
		}
	case <-late.C:
		code, o, e := Deny(client, fmt.Sprintf("veto did not decide within %s, so the call is blocked.", *timeout))
		io.WriteString(stdout, o)
		io.WriteString(stderr, e)
		return code
	}
	code, o, e := Deny(client, "veto-hook could not reach the hook server nor run veto, so the call is blocked.")
	io.WriteString(stdout, o)
	io.WriteString(stderr, e)
	return code
}

// Grace is how long past the budget veto-hook waits for veto hook before
// it refuses the call itself.
const Grace = 200 * time.Millisecond

// minLeft is the least of the budget worth handing to veto hook: less,
// and the call is refused at once.
const minLeft = 100 * time.Millisecond

// ErrSlowInput is ReadEvent's error when the event did not arrive whole in
// time.
var ErrSlowInput = errors.New("wire: the hook event did not arrive in time")

// ReadEvent reads r to its end, at most max bytes, within d: a client that
// never closes its input is ErrSlowInput once d has passed (the reader is
// left to the process's exit).
func ReadEvent(r io.Reader, max int64, d time.Duration) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		// A file (the client's pipe) is polled in this goroutine: no
		// goroutine, timer or thread to start.
		if b, err, ok := readFileEvent(f, max, d); ok {
			return b, err
		}
	}
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, max))
		ch <- result{b, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case res := <-ch:
		return res.b, res.err
	case <-t.C:
		return nil, ErrSlowInput
	}
}

// absolute reports whether state and every setting an answer depends on
// are absolute paths (or unset). The server runs in another directory, so
// a relative one would name another file there: such a call is answered
// by veto hook, in this directory.
func absolute(state string) bool {
	if state != "" && !filepath.IsAbs(state) {
		return false
	}
	for _, k := range EnvKeys {
		if v := os.Getenv(k); v != "" && k != "USER" && k != "VETO_POSTGRES" && !filepath.IsAbs(v) {
			return false
		}
	}
	return true
}

var errMismatch = errors.New("wire: the server runs under other settings or another build")

// ErrNoServer is Ask's error when nothing listens on the socket (no file,
// or a file left by a server that died).
var ErrNoServer = errors.New("wire: no hook server")

// Ask sends one request to the server at sock and waits at most deadline
// for the answer. Any error means the answer must be made elsewhere; a
// socket in a directory that is not this user's alone is never asked.
func Ask(sock string, rq Request, deadline time.Duration) (Response, error) {
	if !json.Valid(rq.Event) {
		return Response{}, errors.New("wire: the event is not JSON")
	}
	if err := Private(filepath.Dir(sock)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Response{}, ErrNoServer
		}
		return Response{}, err
	}
	end := time.Now().Add(deadline)
	fd, err := dial(sock, deadline)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return Response{}, ErrNoServer
		}
		return Response{}, err
	}
	defer syscall.Close(fd)
	if err := rawWrite(fd, AppendRequest(make([]byte, 0, 1024+len(rq.Event)), &rq)); err != nil {
		return Response{}, fmt.Errorf("wire: sending the request: %w", err)
	}
	// The answer is one line of JSON; the server closes the connection
	// after it.
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			if len(b) >= maxAnswer {
				return Response{}, errors.New("wire: the answer is too long")
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := rawRead(fd, b[len(b):cap(b)], end)
		if err == errTimeout || err == syscall.EAGAIN {
			return Response{}, fmt.Errorf("wire: no answer within %s", deadline)
		}
		if err != nil {
			return Response{}, fmt.Errorf("wire: reading the answer: %w", err)
		}
		if n == 0 || bytes.IndexByte(b[len(b):len(b)+n], '\n') >= 0 {
			b = b[:len(b)+n]
			break
		}
		b = b[:len(b)+n]
	}
	rs, err := ParseResponse(b)
	if err != nil {
		return Response{}, err
	}
	if rs.Mismatch {
		return Response{}, errMismatch
	}
	return rs, nil
}

// maxAnswer bounds the answer read from a server.
const maxAnswer = 16 << 20

// errTimeout is rawRead's error when its deadline passed.
var errTimeout = errors.New("wire: timed out")

// vetoFile is the file VetoPath finds, whether or not it may be run: the
// build veto-hook expects a server to be.
func vetoFile() string {
	if full := os.Getenv("VETO_FULL"); full != "" {
		return full
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "veto"); isFile(p) {
			return p
		}
	}
	p, _ := exec.LookPath("veto")
	return p
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// VetoPath finds veto: $VETO_FULL, else the veto next to this program,
// else veto on PATH.
func VetoPath() (string, error) {
	if full := os.Getenv("VETO_FULL"); full != "" {
		if !isExec(full) {
			return "", fmt.Errorf("VETO_FULL=%s is not an executable file", full)
		}
		return full, nil
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "veto"); isExec(p) {
			return p, nil
		}
	}
	return exec.LookPath("veto")
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// RunVeto is the Fallback that runs veto in a child process.
func RunVeto(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
	full, err := VetoPath()
	if err != nil {
		return 0, false
	}
	cmd := exec.Command(full, args...)
	cmd.Stdin = bytes.NewReader(event)
	// A veto hook veto-hook stopped waiting for dies with it (Linux).
	cmd.SysProcAttr = childAttr()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), true
	}
	return 0, false // killed by a signal, or could not start
}

// ServerEnv is the part of environ a hook server is started with: the
// variables an answer depends on (EnvKeys, the other XDG_ directories,
// VETO_ settings) and nothing else. The first hook's environment holds the
// client's own secrets (API keys, session tokens), which a server that
// lives for half an hour must not hold.
func ServerEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (slices.Contains(EnvKeys, k) || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "VETO_")) {
			out = append(out, kv)
		}
	}
	return out
}

// StartServer starts veto serve-hooks on sock in its own session, with
// ServerEnv's environment, without waiting for it; it exits after ServerIdle without a request, or when its
// socket is removed. A second server on the same socket exits at once.
func StartServer(sock string) error {
	full, err := VetoPath()
	if err != nil {
		return err
	}
	cmd := exec.Command(full, "serve-hooks", "--socket", sock, "--idle", ServerIdle.String())
	cmd.Dir = "/"
	cmd.Env = ServerEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// dial connects to the Unix socket at path with plain system calls: a
// blocking descriptor whose writes time out after deadline (SO_SNDTIMEO;
// reads wait at most until it, rawRead). The net package would start its
// poller and threads, which costs more than the whole exchange.
func dial(path string, deadline time.Duration) (int, error) {
	fd, err := socket()
	if err != nil {
		return -1, err
	}
	tv := syscall.NsecToTimeval(deadline.Nanoseconds())
	for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return -1, err
		}
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return -1, &os.PathError{Op: "connect", Path: path, Err: err}
	}
	return fd, nil
}
