//go:build linux && amd64

package supervise

import (
	"encoding/binary"
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

var errNoSyscall = errors.New("not a notified system call")

// fdcwdArg is AT_FDCWD as a system call argument.
var fdcwdArg = func() uint64 { v := int64(atFdcwd); return uint64(v) }()

// decodeNotif reads a notification's request(s) from the caller's memory and /proc. Most system calls are one
// request; sendmsg and sendmmsg are one for each destination they name, and none when they name none (a connected
// socket's send, let through without asking). An error refuses the system call.
func decodeNotif(n *seccompNotif) ([]Request, Kind, error) {
	i, ok := syscallName[n.Data.Nr]
	if !ok || n.Data.Arch != auditArchX86_64 {
		return nil, 0, errNoSyscall
	}
	sc := notified[i]
	pid := int(n.Pid)
	a := n.Data.Args
	mem := &procMem{pid: pid}
	defer mem.close()
	r := Request{Kind: sc.kind, Syscall: sc.name, Pid: pid, Write: true}
	str := func(addr uint64) (string, error) { return readString(mem, addr, maxPath) }
	path := func(dirfd uint64, addr uint64, follow bool) (string, error) {
		p, err := str(addr)
		if err != nil {
			return "", err
		}
		return resolvePath(pid, int(int32(dirfd)), p, follow)
	}
	var err error
	switch sc.nr {
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT:
		r.Write = false
		dirfd, pa, argv := fdcwdArg, a[0], a[1]
		if sc.nr == unix.SYS_EXECVEAT {
			dirfd, pa, argv, r.Flags = a[0], a[1], a[2], int(a[4])
		}
		var p string
		if p, err = str(pa); err != nil {
			break
		}
		if p == "" && r.Flags&atEmptyPath != 0 {
			// fexecve: the program is the file dirfd holds.
			r.Path, err = fdPath(pid, int(int32(dirfd)))
			if err == nil && !filepath.IsAbs(r.Path) {
				err = unix.ENOEXEC
			}
		} else {
			r.Path, err = resolvePath(pid, int(int32(dirfd)), p, r.Flags&atSymlinkNofoll == 0)
		}
		if err == nil {
			r.Argv, err = readArgv(mem, argv)
		}
	case unix.SYS_OPEN, unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_CREAT, unix.SYS_TRUNCATE:
		dirfd, pa := fdcwdArg, a[0]
		inRoot := false
		switch sc.nr {
		case unix.SYS_OPEN:
			r.Flags = int(int32(a[1]))
		case unix.SYS_CREAT:
			r.Flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
		case unix.SYS_TRUNCATE:
			r.Flags = unix.O_WRONLY | unix.O_TRUNC // truncate(2) writes as an open that truncates would
		case unix.SYS_OPENAT:
			dirfd, pa, r.Flags = a[0], a[1], int(int32(a[2]))
		case unix.SYS_OPENAT2:
			dirfd, pa = a[0], a[1]
			var how [8]byte
			if a[3] < 8 {
				err = unix.EINVAL
				break
			}
			if k, e := mem.ReadAt(how[:], a[2]); k != 8 {
				err = errors.Join(errUnmapped, e)
				break
			}
			r.Flags = int(binary.LittleEndian.Uint64(how[:]))
			if a[3] >= 24 {
				var res [8]byte
				if k, e := mem.ReadAt(res[:], a[2]+16); k != 8 {
					err = errors.Join(errUnmapped, e)
					break
				}
				inRoot = binary.LittleEndian.Uint64(res[:])&unix.RESOLVE_IN_ROOT != 0
			}
		}
		if err != nil {
			break
		}
		r.Write = openWrites(r.Flags)
		follow := r.Flags&unix.O_NOFOLLOW == 0
		if inRoot {
			// RESOLVE_IN_ROOT: the path, absolute or not, and every link in it, within the directory dirfd names.
			var p, root string
			if p, err = str(pa); err == nil {
				if root, err = fdPath(pid, int(int32(dirfd))); err == nil && !filepath.IsAbs(root) {
					err = unix.ENOTDIR
				}
			}
			if err == nil {
				r.Path, err = canonIn(pid, root, p, follow)
			}
			break
		}
		r.Path, err = path(dirfd, pa, follow)
	case unix.SYS_UNLINK, unix.SYS_RMDIR:
		if sc.nr == unix.SYS_RMDIR {
			r.Flags = atRemovedir
		}
		r.Path, err = path(fdcwdArg, a[0], false)
	case unix.SYS_UNLINKAT:
		r.Flags = int(a[2]) & atRemovedir
		r.Path, err = path(a[0], a[1], false)
	case unix.SYS_MKDIR:
		r.Path, err = path(fdcwdArg, a[0], false)
	case unix.SYS_MKDIRAT:
		r.Path, err = path(a[0], a[1], false)
	case unix.SYS_RENAME, unix.SYS_LINK:
		if r.Path, err = path(fdcwdArg, a[0], false); err == nil {
			r.Path2, err = path(fdcwdArg, a[1], false)
		}
	case unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT:
		follow := false
		if sc.nr == unix.SYS_RENAMEAT2 {
			r.Flags = int(a[4])
		}
		if sc.nr == unix.SYS_LINKAT {
			r.Flags = int(a[4])
			follow = r.Flags&atSymlinkFollow != 0
		}
		if r.Path, err = path(a[0], a[1], follow); err == nil {
			r.Path2, err = path(a[2], a[3], false)
		}
	case unix.SYS_SYMLINK, unix.SYS_SYMLINKAT:
		tgt, linkDirfd, linkp := a[0], fdcwdArg, a[1]
		if sc.nr == unix.SYS_SYMLINKAT {
			linkDirfd, linkp = a[1], a[2]
		}
		var target string
		if target, err = str(tgt); err != nil {
			break
		}
		if r.Path, err = path(linkDirfd, linkp, false); err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Dir(r.Path) + "/" + target
		}
		r.Path2, err = canon(pid, target, true)
	case unix.SYS_CONNECT:
		r.Write = false
		var sa sockaddr
		if sa, err = readSockaddr(mem, a[1], a[2]); err == nil {
			return connectRequests(r, pid, []sockaddr{sa})
		}
	case unix.SYS_SENDTO:
		r.Write = false
		var sa sockaddr
		if sa, err = readSockaddr(mem, a[4], a[5]); err == nil {
			return connectRequests(r, pid, []sockaddr{sa})
		}
	case unix.SYS_SENDMSG, unix.SYS_SENDMMSG:
		r.Write = false
		var sas []sockaddr
		if sas, err = readMsgNames(mem, sc.nr == unix.SYS_SENDMMSG, a[1], a[2]); err == nil {
			return connectRequests(r, pid, sas)
		}
	}
	if err != nil {
		return nil, sc.kind, err
	}
	return []Request{r}, sc.kind, nil
}

func readSockaddr(m memory, addr, length uint64) (sockaddr, error) {
	if length > 128 {
		length = 128 // sizeof(struct sockaddr_storage): the kernel refuses longer
	}
	b := make([]byte, length)
	if k, err := m.ReadAt(b, addr); k != len(b) {
		return sockaddr{}, errors.Join(errUnmapped, err)
	}
	return parseSockaddr(b)
}

// readMsgNames reads the destinations of sendmsg's struct msghdr, or of each of sendmmsg's vlen struct mmsghdr.
func readMsgNames(m memory, multi bool, addr, vlen uint64) ([]sockaddr, error) {
	const msghdrSize, mmsghdrSize = 56, 64
	count, stride := uint64(1), uint64(msghdrSize)
	if multi {
		count, stride = min(vlen, 1024), mmsghdrSize // the kernel sends at most UIO_MAXIOV messages
	}
	var sas []sockaddr
	var hdr [16]byte
	for i := uint64(0); i < count; i++ {
		if k, err := m.ReadAt(hdr[:], addr+i*stride); k != len(hdr) {
			return nil, errors.Join(errUnmapped, err)
		}
		name := binary.LittleEndian.Uint64(hdr[0:])
		namelen := binary.LittleEndian.Uint32(hdr[8:])
		if name == 0 || namelen == 0 {
			continue
		}
		sa, err := readSockaddr(m, name, uint64(namelen))
		if err != nil {
			return nil, err
		}
		sas = append(sas, sa)
	}
	return sas, nil
}

// connectRequests makes one Connect request of each destination; a unix socket's relative path is resolved
// against the caller's cwd as the kernel does.
func connectRequests(r Request, pid int, sas []sockaddr) ([]Request, Kind, error) {
	out := make([]Request, 0, len(sas))
	for _, sa := range sas {
		q := r
		q.Family, q.Addr = sa.family, sa.addr
		if sa.family == afUnix && sa.path != "" && sa.path[0] != '@' {
			p, err := resolvePath(pid, atFdcwd, sa.path, true)
			if err != nil {
				return nil, Connect, err
			}
			q.Path = p
		} else {
			q.Path = sa.path
		}
		out = append(out, q)
	}
	return out, Connect, nil
}
