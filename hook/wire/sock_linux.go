package wire

import "syscall"

// socket opens a Unix stream socket closed on exec, atomically.
func socket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}

// childAttr makes a child veto-hook runs die with veto-hook: one it
// stopped waiting for does not live on.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
