//go:build linux && amd64

package supervise

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe reports what this kernel offers.
func Probe() Features {
	f := Features{Landlock: landlockABI()}
	var why []string
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0,
		uintptr(unsafe.Pointer(&action))); errno != 0 {
		why = append(why, "no seccomp user notification ("+errno.Error()+")")
	} else {
		var sz seccompNotifSizes
		if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0,
			uintptr(unsafe.Pointer(&sz))); errno != 0 {
			why = append(why, "SECCOMP_GET_NOTIF_SIZES: "+errno.Error())
		} else if int(sz.Notif) != int(unsafe.Sizeof(seccompNotif{})) ||
			int(sz.Resp) != int(unsafe.Sizeof(seccompNotifResp{})) ||
			int(sz.Data) != int(unsafe.Sizeof(seccompData{})) {
			why = append(why, fmt.Sprintf("seccomp notification sizes %d/%d/%d, not the 80/24/64 this build knows",
				sz.Notif, sz.Resp, sz.Data))
		} else if !kernelAtLeast(5, 6) {
			why = append(why, "SECCOMP_USER_NOTIF_FLAG_CONTINUE and pidfd_getfd need Linux 5.6")
		} else {
			f.UserNotif = true
		}
	}
	if f.Landlock == 0 {
		why = append(why, "no Landlock (Linux 5.13+, and landlock in the lsm= boot list)")
	}
	f.Why = strings.Join(why, "; ")
	return f
}

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// Run runs the command under the supervisor and returns its exit status (as a shell reports it: 128+signal).
// An error means the command did not run (or its status could not be had): the kernel lacks what is needed, the
// program was not found, or the child could not install its filters.
func Run(ctx context.Context, cfg Config) (int, error) {
	if len(cfg.Argv) == 0 {
		return -1, errors.New("supervise: no command")
	}
	feat := Probe()
	if !feat.UserNotif {
		return -1, fmt.Errorf("%w: %s", ErrUnsupported, feat.Why)
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	path, err := lookPath(cfg.Argv[0], env, cfg.Dir)
	if err != nil {
		return 127, err
	}
	cc := childConfig{Path: path, Argv: cfg.Argv, Env: env, Dir: cfg.Dir, ParentPid: os.Getpid(), NetNS: cfg.NetNS}
	if cfg.Landlock != nil {
		if feat.Landlock > 0 {
			cc.Floor = floorOf(cfg.Landlock, env, cfg.Dir)
		} else if !cfg.Landlock.BestEffort {
			return -1, fmt.Errorf("%w: %s", ErrUnsupported, feat.Why)
		}
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("supervise: socketpair: %w", err)
	}
	parentFd := fds[0]
	childEnd := os.NewFile(uintptr(fds[1]), "supervise-child")
	defer unix.Close(parentFd)

	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{"veto-supervise", childMarker},
		// The bootstrap execs the command with a raw system call, which Go's runtime counts as running code and
		// preempts with a signal every 10 ms: on a kernel without WAIT_KILLABLE_RECV each signal would restart the
		// exec as a new notification (installFilter). Nothing else of the caller's environment reaches it.
		Env:         []string{"GODEBUG=asyncpreemptoff=1"},
		Stdin:       orDefault[io.Reader](cfg.Stdin, os.Stdin),
		Stdout:      orDefault[io.Writer](cfg.Stdout, os.Stdout),
		Stderr:      orDefault[io.Writer](cfg.Stderr, os.Stderr),
		ExtraFiles:  []*os.File{childEnd},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	// PR_SET_PDEATHSIG fires when the forking thread exits: fork from a thread kept until the child is reaped.
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			waited <- cmd.Wait()
		}
	}()
	if err := <-started; err != nil {
		childEnd.Close()
		return -1, fmt.Errorf("supervise: starting the child: %w", err)
	}
	childEnd.Close()

	type shook struct {
		fd  int
		err error
	}
	hs := make(chan shook, 1)
	go func() {
		fd, err := handshake(parentFd, cmd.Process.Pid, cc)
		hs <- shook{fd, err}
	}()
	var h shook
	select {
	case h = <-hs:
	case <-ctx.Done():
		cmd.Process.Kill() // the child's end closes: the handshake ends
		if h = <-hs; h.err == nil {
			unix.Close(h.fd)
		}
		h.err = ctx.Err()
	}
	listener, err := h.fd, h.err
	if err != nil {
		cmd.Process.Kill()
		<-waited
		return -1, fmt.Errorf("supervise: the command did not run: %w", err)
	}
	s := newSupervisor(listener, cfg)
	if err := s.start(); err != nil {
		unix.Close(listener)
		cmd.Process.Kill()
		<-waited
		return -1, fmt.Errorf("supervise: the command did not run: %w", err)
	}
	if err := writeAll(parentFd, []byte{'G'}); err != nil {
		cmd.Process.Kill()
		<-waited
		s.stop()
		return -1, fmt.Errorf("supervise: the command did not run: %w", err)
	}

	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		cmd.Process.Kill()
		werr = <-waited
	}
	s.stop()
	if cmd.ProcessState == nil {
		return -1, werr
	}
	return exitStatus(cmd.ProcessState), nil
}

// handshake sends the command and takes the listener, or the reason the child gives for stopping.
func handshake(fd int, pid int, cc childConfig) (int, error) {
	if err := writeFrame(fd, cc); err != nil {
		return -1, err
	}
	var b [5]byte
	if err := readFull(fd, b[:1]); err != nil {
		return -1, errors.New("the child exited before installing its filters")
	}
	if err := readFull(fd, b[1:]); err != nil {
		return -1, err
	}
	l := binary.LittleEndian.Uint32(b[1:])
	switch b[0] {
	case 'E':
		msg := make([]byte, min(l, 4096))
		if err := readFull(fd, msg); err != nil {
			return -1, err
		}
		return -1, errors.New(string(msg))
	case 'K':
	default:
		return -1, errors.New("no listener from the child")
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	listener, err := unix.PidfdGetfd(pidfd, int(l), 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_getfd: %w", err)
	}
	if err := writeAll(fd, []byte{'T'}); err != nil {
		unix.Close(listener)
		return -1, err
	}
	return listener, nil
}

func exitStatus(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func orDefault[T any](v, def T) T {
	if any(v) == nil {
		return def
	}
	return v
}

// lookPath finds argv[0] as exec.LookPath does, on the command's PATH.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", &exec.Error{Name: name, Err: err}
		}
		return p, nil
	}
	pathEnv := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			if !filepath.IsAbs(p) {
				// As exec.LookPath since Go 1.19: a program found relative to the current directory is refused.
				return "", &exec.Error{Name: name, Err: exec.ErrDot}
			}
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}

// floorOf makes the floor's paths absolute (a relative one from the command's directory) and real, and adds the
// devices and the temporary directory.
func floorOf(f *Floor, env []string, dir string) *floorSpec {
	if dir == "" {
		dir, _ = os.Getwd()
	} else if !filepath.IsAbs(dir) {
		wd, _ := os.Getwd()
		dir = filepath.Join(wd, dir)
	}
	real := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	spec := &floorSpec{}
	for _, p := range f.WriteRoots {
		spec.Write = append(spec.Write, real(p))
	}
	spec.Write = append(spec.Write, DeviceWrites...)
	if !f.NoTemp {
		tmp := "/tmp"
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && filepath.IsAbs(v) {
				tmp = v
			}
		}
		spec.Write = append(spec.Write, real(tmp))
	}
	for _, p := range f.DenyRead {
		spec.DenyRead = append(spec.DenyRead, real(p))
	}
	return spec
}

// supervisor answers the listener's notifications with a pool of workers: one at a time waits on the listener and
// receives a notification, then hands the waiting on to the next and decides what it received itself, so the
// decision starts on the thread the kernel woke, and a slow one holds only its own worker.
type supervisor struct {
	listener int
	decide   func(Request) Verdict
	workers  int
	wake     [2]int     // a pipe: once written to, every worker stops
	recvMu   sync.Mutex // held by the worker waiting on the listener
	wg       sync.WaitGroup
}

func newSupervisor(listener int, cfg Config) *supervisor {
	w := cfg.Workers
	if w <= 0 {
		w = 32
	}
	return &supervisor{listener: listener, decide: cfg.Decide, workers: w}
}

func (s *supervisor) start() error {
	// The caller waits for the answer anyway: let the kernel wake the supervisor on the caller's CPU (Linux 6.6;
	// older kernels refuse the flag, which changes nothing else). Three paired runs of BenchmarkDecidedOpen here:
	// p50 8.7–15 µs with it, 18–48 µs without; BenchmarkBuildLike unchanged within its noise.
	notifSetFlags(s.listener, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	if err := unix.Pipe2(s.wake[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	s.wg.Add(s.workers)
	for range s.workers {
		go s.work()
	}
	return nil
}

// stop ends the workers once the requests in hand are answered, and closes the listener: from then on a notified
// system call of what is left of the tree fails with ENOSYS.
func (s *supervisor) stop() {
	unix.Write(s.wake[1], []byte{1})
	s.wg.Wait()
	unix.Close(s.listener)
	unix.Close(s.wake[0])
	unix.Close(s.wake[1])
}

func (s *supervisor) work() {
	defer s.wg.Done()
	for {
		s.recvMu.Lock()
		n, ok := s.receive()
		s.recvMu.Unlock()
		if !ok {
			return
		}
		if n != nil {
			s.handle(n)
		}
	}
}

// receive waits for one notification: nil when it went away before it was received, false when the workers stop.
func (s *supervisor) receive() (*seccompNotif, bool) {
	pfd := []unix.PollFd{{Fd: int32(s.listener), Events: unix.POLLIN}, {Fd: int32(s.wake[0]), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(pfd, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pfd[1].Revents != 0 {
			return nil, false
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return nil, false // no process is left under the filter
			}
			continue
		}
		n := new(seccompNotif)
		if err := notifRecv(s.listener, n); err != nil {
			return nil, true // ENOENT: the caller went away between the poll and the receive
		}
		return n, true
	}
}

// handle decodes one notification, checks it still stands, decides it and answers.
func (s *supervisor) handle(n *seccompNotif) {
	resp := seccompNotifResp{ID: n.ID}
	reqs, kind, err := decodeNotif(n)
	if !notifValid(s.listener, n.ID) {
		return // the caller died or was interrupted: what was read may belong to another process
	}
	allow := err == nil
	for _, r := range reqs {
		if !allow {
			break
		}
		allow = s.call(r)
	}
	switch {
	case allow:
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	case err != nil:
		resp.Error = -int32(unreadErrno(err, kind))
	default:
		resp.Error = -int32(refusalErrno(kind))
	}
	notifSend(s.listener, &resp) // ENOENT: the caller went away meanwhile
}

// call asks the decider; a panic, or no decider, refuses.
func (s *supervisor) call(r Request) (allow bool) {
	if s.decide == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			allow = false
		}
	}()
	return s.decide(r).Allow
}

// refusalErrno is the error a refused system call returns: EPERM for an exec and a connect (as the issue asks:
// "operation not permitted", a refusal and not a file's mode), EACCES for the file operations (what a permission
// check on a path returns, and what the Landlock floor returns for the same refusal, so both layers look alike to
// the program).
func refusalErrno(k Kind) unix.Errno {
	switch k {
	case Exec, Connect, 0:
		return unix.EPERM
	}
	return unix.EACCES
}

// unreadErrno is the error a system call whose request could not be read fails with: the kernel's own for what
// it would refuse the same way (an empty path, a bad address, a dirfd that is not a directory, a loop of links), else
// the refusal's.
func unreadErrno(err error, k Kind) unix.Errno {
	var errno unix.Errno
	switch {
	case errors.Is(err, errNull), errors.Is(err, errUnmapped):
		return unix.EFAULT
	case errors.Is(err, errLoop):
		return unix.ELOOP
	case errors.Is(err, errTooLong):
		if k == Exec {
			return unix.E2BIG
		}
		return unix.ENAMETOOLONG
	case errors.As(err, &errno) && (errno == unix.ENOENT || errno == unix.ENOTDIR || errno == unix.EBADF ||
		errno == unix.EINVAL || errno == unix.EFAULT):
		return errno
	}
	return refusalErrno(k)
}
