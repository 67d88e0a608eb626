//go:build !linux

package wire

import "syscall"

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
