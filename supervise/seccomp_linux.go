//go:build linux && amd64

package supervise

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures for seccomp user notification (include/uapi/linux/seccomp.h). Probe checks their sizes
// against SECCOMP_GET_NOTIF_SIZES and refuses to supervise when they differ.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

type seccompNotifSizes struct {
	Notif, Resp, Data uint16
}

// ioctl request numbers as include/uapi/asm-generic/ioctl.h builds them.
const (
	iocWrite = 1
	iocRead  = 2
)

func ioc(dir, typ, nr, size uintptr) uintptr { return dir<<30 | size<<16 | typ<<8 | nr }

const seccompIocMagic = '!'

var (
	ioctlNotifRecv    = ioc(iocRead|iocWrite, seccompIocMagic, 0, unsafe.Sizeof(seccompNotif{}))
	ioctlNotifSend    = ioc(iocRead|iocWrite, seccompIocMagic, 1, unsafe.Sizeof(seccompNotifResp{}))
	ioctlNotifIDValid = ioc(iocWrite, seccompIocMagic, 2, 8)
	ioctlNotifSetFlag = ioc(iocWrite, seccompIocMagic, 4, 8)
)

const (
	auditArchX86_64 = 0xc000003e
	x32SyscallBit   = 0x40000000

	// Offsets into struct seccomp_data, for the filter's loads.
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// notified are the system calls the supervisor decides, with the Kind each becomes.
var notified = []struct {
	nr   int
	name string
	kind Kind
}{
	{unix.SYS_EXECVE, "execve", Exec},
	{unix.SYS_EXECVEAT, "execveat", Exec},
	{unix.SYS_OPEN, "open", Open},
	{unix.SYS_OPENAT, "openat", Open},
	{unix.SYS_OPENAT2, "openat2", Open},
	{unix.SYS_CREAT, "creat", Open},
	{unix.SYS_CONNECT, "connect", Connect},
	{unix.SYS_SENDMSG, "sendmsg", Connect},
	{unix.SYS_SENDMMSG, "sendmmsg", Connect},
	{unix.SYS_UNLINK, "unlink", Unlink},
	{unix.SYS_UNLINKAT, "unlinkat", Unlink},
	{unix.SYS_RMDIR, "rmdir", Unlink},
	{unix.SYS_RENAME, "rename", Rename},
	{unix.SYS_RENAMEAT, "renameat", Rename},
	{unix.SYS_RENAMEAT2, "renameat2", Rename},
	{unix.SYS_MKDIR, "mkdir", Mkdir},
	{unix.SYS_MKDIRAT, "mkdirat", Mkdir},
	{unix.SYS_LINK, "link", Link},
	{unix.SYS_LINKAT, "linkat", Link},
	{unix.SYS_SYMLINK, "symlink", Symlink},
	{unix.SYS_SYMLINKAT, "symlinkat", Symlink},
	{unix.SYS_TRUNCATE, "truncate", Open},
	// sendto is notified only when it names a destination (a special case in the filter).
	{unix.SYS_SENDTO, "sendto", Connect},
}

// refused are the system calls the filter answers EPERM without asking: io_uring (its operations open, connect and
// more without a system call the filter sees); the ways to reach into another process (ptrace,
// process_vm_writev, pidfd_getfd) and so act through one the filter does not cover; and the ways a root command
// changes what a path names from under the supervisor's resolution (chroot, pivot_root, setns, mount and the new
// mount API: a bind mount of a credential file over a harmless name would be decided as the harmless name).
var refused = []int{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	unix.SYS_CHROOT, unix.SYS_PIVOT_ROOT, unix.SYS_SETNS, unix.SYS_MOUNT, unix.SYS_UMOUNT2,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_TREE_ATTR,
	// open_by_handle_at opens a file with no path to decide (root); userfaultfd stalls a read of the caller's
	// memory at will, which turns the race on pointer arguments into a sure thing; uselib loads a file unopened.
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_USERFAULTFD, unix.SYS_USELIB,
}

var syscallName = func() map[int32]int {
	m := map[int32]int{}
	for i, n := range notified {
		m[int32(n.nr)] = i
	}
	return m
}()

// asm is a tiny classic-BPF assembler with named jump targets.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *asm) label(name string) { a.labels[name] = len(a.prog) }

func (a *asm) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" as a target is the next instruction.
func (a *asm) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{len(a.prog), jt, jf})
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) assemble() ([]unix.SockFilter, error) {
	off := func(at int, name string) (uint8, error) {
		if name == "" {
			return 0, nil
		}
		to, ok := a.labels[name]
		d := to - at - 1
		if !ok || d < 0 || d > 255 {
			return 0, fmt.Errorf("bpf: jump to %q out of range", name)
		}
		return uint8(d), nil
	}
	for _, f := range a.fixups {
		jt, err := off(f.at, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(f.at, f.jf)
		if err != nil {
			return nil, err
		}
		a.prog[f.at].Jt, a.prog[f.at].Jf = jt, jf
	}
	return a.prog, nil
}

const (
	ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	ret  = unix.BPF_RET | unix.BPF_K
	alu  = unix.BPF_ALU
)

// filter is the seccomp program: other architectures and x32 system calls kill the process; the notified calls go
// to the supervisor; the refused ones fail with EPERM; seccomp(2) asking for a listener of its own fails with EPERM
// (a newer filter's listener would be asked before this one, and could answer CONTINUE for it); the rest run.
func filter() ([]unix.SockFilter, error) {
	a := &asm{labels: map[string]int{}}
	a.stmt(ldW, offArch)
	a.jump(jeq, auditArchX86_64, "", "kill")
	a.stmt(ldW, offNr)
	a.jump(jset, x32SyscallBit, "kill", "")
	for _, n := range notified {
		if n.nr == unix.SYS_SENDTO {
			continue
		}
		a.jump(jeq, uint32(n.nr), "notify", "")
	}
	for _, nr := range refused {
		a.jump(jeq, uint32(nr), "eperm", "")
	}
	// mknod and mknodat of a device (root): a block device node is the whole disk under a harmless name.
	for i, mk := range []struct {
		nr   int
		mode uint32
	}{{unix.SYS_MKNOD, offArgs + 8}, {unix.SYS_MKNODAT, offArgs + 16}} {
		next := fmt.Sprintf("notmknod%d", i)
		a.jump(jeq, uint32(mk.nr), "", next)
		a.stmt(ldW, mk.mode)
		a.stmt(alu|unix.BPF_AND|unix.BPF_K, unix.S_IFMT)
		a.jump(jeq, unix.S_IFBLK, "eperm", "")
		a.jump(jeq, unix.S_IFCHR, "eperm", "allow")
		a.label(next) // the accumulator still holds the system call's number
	}
	a.jump(jeq, unix.SYS_SENDTO, "", "notsendto")
	// sendto(fd, buf, len, flags, dest_addr, addrlen): a destination is a non-NULL args[4].
	a.stmt(ldW, offArgs+8*4)
	a.jump(jeq, 0, "", "notify")
	a.stmt(ldW, offArgs+8*4+4)
	a.jump(jeq, 0, "allow", "notify")
	a.label("notsendto")
	a.jump(jeq, unix.SYS_SECCOMP, "", "allow")
	a.stmt(ldW, offArgs) // op, low half
	a.jump(jeq, unix.SECCOMP_SET_MODE_FILTER, "", "allow")
	a.stmt(ldW, offArgs+8) // flags, low half
	a.jump(jset, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, "eperm", "allow")
	a.label("allow")
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("notify")
	a.stmt(ret, unix.SECCOMP_RET_USER_NOTIF)
	a.label("eperm")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	a.label("kill")
	a.stmt(ret, unix.SECCOMP_RET_KILL_PROCESS)
	return a.assemble()
}

// installFilter installs the filter on the calling thread and returns the listener's fd. The caller has set
// no_new_privs.
func installFilter() (int, error) {
	prog, err := filter()
	if err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// WAIT_KILLABLE_RECV (Linux 5.19): once the supervisor has received a notification, only a fatal signal ends the
	// caller's wait. Without it every signal restarts the system call as a new notification, and a caller signalled
	// more often than a decision takes (a Go program's preemption signal every 10 ms, an interval timer) asks again
	// and again and never hears an answer. Older kernels refuse the flag with EINVAL: the filter goes in without it.
	for _, flags := range []uintptr{unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER} {
		fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags,
			uintptr(unsafe.Pointer(&fprog)))
		if errno == unix.EINVAL && flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 {
			continue
		}
		if errno != 0 {
			return -1, fmt.Errorf("seccomp: %w", errno)
		}
		return int(fd), nil
	}
	return -1, errors.New("seccomp: the filter was refused")
}

func notifRecv(fd int, n *seccompNotif) error {
	*n = seccompNotif{} // the kernel refuses a structure that is not zeroed
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlNotifRecv, uintptr(unsafe.Pointer(n)))
	if errno != 0 {
		return errno
	}
	return nil
}

func notifSend(fd int, r *seccompNotifResp) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlNotifSend, uintptr(unsafe.Pointer(r)))
	if errno != 0 {
		return errno
	}
	return nil
}

// notifValid says whether the notification id still stands for a waiting system call of the same process.
func notifValid(fd int, id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// notifSetFlags sets the listener's flags (SECCOMP_IOCTL_NOTIF_SET_FLAGS).
func notifSetFlags(fd int, flags uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlNotifSetFlag, uintptr(flags))
	if errno != 0 {
		return errno
	}
	return nil
}
