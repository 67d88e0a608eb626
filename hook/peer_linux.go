package hook

import (
	"net"
	"syscall"

	"github.com/vetohq/veto/presence"
)

// notePeer notes the guarded client behind a request on the server's
// socket, for the presence proof: the kernel names the process at the
// other end (SO_PEERCRED, veto-hook), and the client is its nearest
// ancestor that is not a shell. It writes once per client.
func notePeer(c net.Conn, client string) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return
	}
	var cred *syscall.Ucred
	rc.Control(func(fd uintptr) {
		cred, _ = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if cred == nil || cred.Pid <= 0 {
		return
	}
	presence.Note(int(cred.Pid), client)
}
