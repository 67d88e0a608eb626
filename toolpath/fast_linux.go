//go:build linux

package toolpath

import (
	"syscall"
	"unsafe"
)

// openHow is the kernel's struct open_how.
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64
}

const (
	sysOpenat2        = 437
	oPath             = 0x200000
	resolveNoSymlinks = 0x04
)

// Walk reports how path resolves, asking the kernel once (openat2 with
// RESOLVE_NO_SYMLINKS): every component exists and none is a symlink
// (walkClean), some component is missing (walkMissing), or a symlink is
// on the way or the kernel cannot say (walkSlow).
func (OS) Walk(path string) walkResult {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return walkSlow
	}
	how := openHow{flags: oPath | syscall.O_CLOEXEC, resolve: resolveNoSymlinks}
	fd, _, errno := syscall.Syscall6(sysOpenat2, uintptr(0xffffff9c) /* AT_FDCWD */, uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	switch errno {
	case 0:
		syscall.Close(int(fd))
		return walkClean
	case syscall.ENOENT:
		return walkMissing
	}
	return walkSlow // ELOOP (a symlink), ENOSYS, EPERM from a filter, ENOTDIR, …
}
