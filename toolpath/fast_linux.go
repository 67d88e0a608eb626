//go:build linux

package toolpath

import (
	"strings"
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
// (Clean), some component is missing (Missing), or a symlink is on the
// way or the kernel cannot say (Unsure).
func (OS) Walk(path string) Resolution {
	if strings.IndexByte(path, 0) >= 0 {
		return Unsure
	}
	// The kernel's copy of the path, NUL-ended, on the stack when it fits.
	var buf [256]byte
	var p *byte
	if len(path) < len(buf) {
		copy(buf[:], path)
		p = &buf[0]
	} else {
		var err error
		if p, err = syscall.BytePtrFromString(path); err != nil {
			return Unsure
		}
	}
	how := openHow{flags: oPath | syscall.O_CLOEXEC, resolve: resolveNoSymlinks}
	fd, _, errno := syscall.Syscall6(sysOpenat2, uintptr(0xffffff9c) /* AT_FDCWD */, uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	switch errno {
	case 0:
		syscall.Close(int(fd))
		return Clean
	case syscall.ENOENT:
		return Missing
	}
	return Unsure // ELOOP (a symlink), ENOSYS, EPERM from a filter, ENOTDIR, …
}
