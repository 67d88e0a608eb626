package wire

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// socket opens a Unix stream socket closed on exec, atomically.
func socket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}

// childAttr makes a child veto-hook runs die with veto-hook: one it
// stopped waiting for does not live on.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// The exchange with the server, and reading the event, are plain system
// calls in this goroutine: no goroutine, timer or poller is started for
// them. A signal (the runtime's preemption) may end a wait with EINTR: it
// is made again with the time left.

// pollIn waits until fd can be read, at most until deadline; false when
// the deadline passed first.
func pollIn(fd int, deadline time.Time) (bool, error) {
	type pollfd struct {
		fd      int32
		events  int16
		revents int16
	}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		ts := syscall.NsecToTimespec(left.Nanoseconds())
		p := pollfd{fd: int32(fd), events: 0x1} // POLLIN
		n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return false, e
		case n > 0:
			return true, nil // readable, at its end, or failed: read says which
		}
	}
}

// rawRead reads into b from fd, which may be in non-blocking mode, once
// it is readable, until deadline.
func rawRead(fd int, b []byte, deadline time.Time) (int, error) {
	for {
		ok, err := pollIn(fd, deadline)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, errTimeout
		}
		var p unsafe.Pointer
		if len(b) > 0 {
			p = unsafe.Pointer(&b[0])
		}
		n, _, e := syscall.Syscall(syscall.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(b)))
		switch e {
		case 0:
			return int(n), nil
		case syscall.EINTR, syscall.EAGAIN:
			continue
		}
		return 0, e
	}
}

// rawWrite writes all of b to the socket fd, whose writes time out
// (SO_SNDTIMEO).
func rawWrite(fd int, b []byte) error {
	for len(b) > 0 {
		n, _, e := syscall.Syscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[n:]
		case syscall.EINTR:
		default:
			return e
		}
	}
	return nil
}

// readFileEvent is ReadEvent of a file (the client's pipe): at most max
// bytes, polled, until its end or until d has passed. ok is false when f
// cannot be read this way.
func readFileEvent(f *os.File, max int64, d time.Duration) (b []byte, err error, ok bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	deadline := time.Now().Add(d)
	b = make([]byte, 0, min(max, 16<<10))
	cerr := rc.Control(func(fd uintptr) {
		for int64(len(b)) < max {
			if len(b) == cap(b) {
				b = append(b, 0)[:len(b)]
			}
			room := b[len(b):min(int64(cap(b)), max)]
			n, e := rawRead(int(fd), room, deadline)
			if e != nil {
				err = e
				return
			}
			if n == 0 {
				return
			}
			b = b[:len(b)+n]
		}
	})
	if cerr != nil {
		return nil, nil, false
	}
	if err == errTimeout {
		return nil, ErrSlowInput, true
	}
	return b, err, true
}
