//go:build !linux

package wire

import (
	"os"
	"syscall"
	"time"
)

// socket opens a Unix stream socket closed on exec. veto-hook starts no
// other program until it is done with the socket, so the gap before
// CloseOnExec does not leak it.
func socket() (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}

// childAttr: elsewhere a child veto-hook stopped waiting for ends at its
// own deadline.
func childAttr() *syscall.SysProcAttr { return nil }

// rawRead reads into b from the socket fd, whose reads time out
// (SO_RCVTIMEO at deadline).
func rawRead(fd int, b []byte, deadline time.Time) (int, error) {
	for {
		if time.Until(deadline) <= 0 {
			return 0, errTimeout
		}
		n, err := syscall.Read(fd, b)
		switch err {
		case nil:
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, errTimeout
		}
		return 0, err
	}
}

// rawWrite writes all of b to the socket fd.
func rawWrite(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readFileEvent: elsewhere the event is read by ReadEvent's goroutine.
func readFileEvent(f *os.File, max int64, d time.Duration) ([]byte, error, bool) {
	return nil, nil, false
}
