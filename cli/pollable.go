package cli

import (
	"io"
	"os"
	"syscall"
)

// pollable returns r as a reader the Go runtime's poller waits on, where
// r is a pipe or a socket (veto mcp's standard input, from the agent): a
// copy of its descriptor, non-blocking, closed on exec. A read of a
// blocking descriptor waits inside the system call, holding one of the
// runtime's processors until its monitor takes it back, which keeps the
// monitor waking every 20 µs; a read through the poller parks only its
// goroutine. Anything else (a terminal, a regular file, not a file) is
// returned as it is, and so is r when its descriptor cannot be copied:
// the flag is the open file's, shared by every descriptor of it, and a
// terminal's is its shell's too.
func pollable(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	rc, err := f.SyscallConn() // not Fd, which would make f blocking
	if err != nil {
		return r
	}
	fd := -1
	rc.Control(func(d uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(d), &st) != nil {
			return
		}
		if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFIFO && m != syscall.S_IFSOCK {
			return
		}
		if c, err := syscall.Dup(int(d)); err == nil {
			fd = c
		}
	})
	if fd < 0 {
		return r
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return r
	}
	return os.NewFile(uintptr(fd), f.Name())
}
