//go:build linux

package probe

import (
	"io/fs"
	"syscall"

	"github.com/vetohq/veto"
)

func stampOf(st *syscall.Stat_t) veto.FileStamp {
	return veto.FileStamp{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Change: st.Ctim.Nano()} // Dev is 32 bits on mips
}

// statStamp returns the stamp lstat gave.
func statStamp(fi fs.FileInfo) veto.FileStamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return veto.FileStamp{}
	}
	return stampOf(st)
}

// fdStamp returns the stamp of the open file fd, or a zero stamp when its
// filesystem is not one whose change times veto trusts, or when someone
// holds the file open for writing.
//
// An open writer can change the content without moving the change time
// again: a write through a shared writable mapping to a page already
// dirty (on tmpfs, which never writes back, for as long as the mapping
// lives), or one long write(2) still landing. A read lease cannot be taken
// on a file open for writing anywhere, a writable mapping included, so
// taking one (and giving it back at once) proves there was no such writer
// when the hash was done; a writer that comes later moves the change time
// with its first write. A file veto may not lease (another user's, without
// CAP_LEASE) gets no stamp.
func fdStamp(fd int) veto.FileStamp {
	var sfs syscall.Statfs_t
	if syscall.Fstatfs(fd, &sfs) != nil || !trustedFS(uint32(sfs.Type)) {
		return veto.FileStamp{}
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETLEASE, syscall.F_RDLCK); errno != 0 {
		return veto.FileStamp{}
	}
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETLEASE, syscall.F_UNLCK)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return veto.FileStamp{}
	}
	return stampOf(&st)
}

// pathTrusted reports whether the file at path sits on a filesystem whose
// stamps veto trusts.
func pathTrusted(path string) bool {
	var sfs syscall.Statfs_t
	return syscall.Statfs(path, &sfs) == nil && trustedFS(uint32(sfs.Type))
}

// trustedFS reports whether a filesystem of this type is local, so that
// the stat it answers is the file's own and not a cached copy (NFS and
// other network filesystems may answer attributes up to a minute old,
// while reading revalidates).
func trustedFS(magic uint32) bool {
	switch magic {
	case 0xEF53, // ext2, ext3, ext4
		0x58465342, // xfs
		0x9123683E, // btrfs
		0x01021994, // tmpfs
		0xF2F52010, // f2fs
		0x2FC12FC1, // zfs
		0xCA451A4E: // bcachefs
		return true
	}
	return false
}
