package wire

import "syscall"

// socket opens a Unix stream socket closed on exec, atomically.
func socket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
