//go:build linux && amd64

package supervise

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The bootstrap: Run re-executes /proc/self/exe as ["veto-supervise", childMarker] with the child's end of a
// socketpair as fd 3 and an empty environment. Child, first thing in main, sees the marker, reads the command from
// the socket, installs no_new_privs, the Landlock floor and the seccomp filter on its locked thread, hands the
// listener to the parent, waits for the parent's go and execs the command from the same thread. The marker only
// ever makes a process install filters: nothing a caller can set makes Child skip one.
const (
	childMarker = "-veto-supervise-child-v1"
	childFd     = 3
)

// childConfig is what the parent sends the child.
type childConfig struct {
	Path      string
	Argv      []string
	Env       []string
	Dir       string
	ParentPid int
	NetNS     bool
	Floor     *floorSpec
}

// Child is called first thing in main() of cmd/veto (and of the test binary's TestMain): when this process is the
// supervisor's re-executed child it never returns.
func Child() {
	if len(os.Args) != 2 || os.Args[1] != childMarker {
		return
	}
	runtime.LockOSThread()
	code, err := child()
	// Only failures come back here; a successful exec never returns.
	msg := err.Error()
	if code == 0 {
		code = 125
	}
	report(msg)
	os.Exit(code)
}

// report tells the parent why the child stops before the command runs; after the go-ahead the parent no longer
// reads, and the message goes to the command's stderr as a shell's would.
var reported bool

func report(msg string) {
	if reported {
		fmt.Fprintf(os.Stderr, "veto exec: %s\n", msg)
		return
	}
	b := make([]byte, 5+len(msg))
	b[0] = 'E'
	binary.LittleEndian.PutUint32(b[1:], uint32(len(msg)))
	copy(b[5:], msg)
	writeAll(childFd, b)
}

func child() (int, error) {
	if t, err := unix.GetsockoptInt(childFd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || t != unix.SOCK_STREAM {
		fmt.Fprintln(os.Stderr, "veto exec: not started by a supervisor")
		os.Exit(125)
	}
	var cfg childConfig
	if err := readFrame(childFd, &cfg); err != nil {
		return 125, fmt.Errorf("reading the command: %w", err)
	}
	// Fail closed: the child dies with its supervisor (checked after arming, in case the parent is already gone).
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return 125, fmt.Errorf("PR_SET_PDEATHSIG: %w", err)
	}
	if os.Getppid() != cfg.ParentPid {
		return 125, errors.New("the supervisor is gone")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 125, fmt.Errorf("PR_SET_NO_NEW_PRIVS: %w", err)
	}
	if cfg.NetNS {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return 125, fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		if err := loopbackUp(); err != nil {
			return 125, fmt.Errorf("bringing up lo: %w", err)
		}
	}
	if cfg.Dir != "" {
		if err := unix.Chdir(cfg.Dir); err != nil {
			return 125, fmt.Errorf("chdir %s: %w", cfg.Dir, err)
		}
	}
	if cfg.Floor != nil {
		if err := applyFloor(cfg.Floor); err != nil {
			return 125, fmt.Errorf("landlock: %w", err)
		}
	}
	listener, err := installFilter()
	if err != nil {
		return 125, err
	}
	// The filter notifies sendmsg, so the listener cannot travel by SCM_RIGHTS (that sendmsg would wait for a
	// supervisor that has no listener yet): the child writes its number and the parent takes it with pidfd_getfd.
	k := []byte{'K', 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(k[1:], uint32(listener))
	if err := writeAll(childFd, k); err != nil {
		return 125, fmt.Errorf("sending the listener: %w", err)
	}
	var b [1]byte
	if n, err := unix.Read(childFd, b[:]); n != 1 || b[0] != 'T' {
		return 125, fmt.Errorf("the supervisor did not take the listener: %v", err)
	}
	// The command must never hold its own listener.
	unix.Close(listener)
	if n, err := unix.Read(childFd, b[:]); n != 1 || b[0] != 'G' {
		return 125, fmt.Errorf("no go-ahead from the supervisor: %v", err)
	}
	reported = true
	// The command gets its stdio and nothing else: not the socket, nor any descriptor the supervisor inherited
	// without close-on-exec.
	if err := closeFromOnExec(childFd); err != nil {
		return 125, err
	}
	err = unix.Exec(cfg.Path, cfg.Argv, cfg.Env)
	code := 126
	if errors.Is(err, unix.ENOENT) {
		code = 127
	}
	return code, fmt.Errorf("%s: %w", cfg.Path, err)
}

// loopbackUp sets lo up in a fresh network namespace, so that tests can reach 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("unexpected end of stream")
		}
		b = b[n:]
	}
	return nil
}

const maxFrame = 64 << 20

func writeFrame(fd int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b := make([]byte, 4, 4+len(body))
	binary.LittleEndian.PutUint32(b, uint32(len(body)))
	return writeAll(fd, append(b, body...))
}

func readFrame(fd int, v any) error {
	var h [4]byte
	if err := readFull(fd, h[:]); err != nil {
		return err
	}
	n := binary.LittleEndian.Uint32(h[:])
	if n > maxFrame {
		return errors.New("frame too long")
	}
	body := make([]byte, n)
	if err := readFull(fd, body); err != nil {
		return err
	}
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// closeFromOnExec marks every descriptor from fd up close-on-exec.
func closeFromOnExec(fd int) error {
	if err := unix.CloseRange(uint(fd), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
			unix.FcntlInt(uintptr(n), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}
