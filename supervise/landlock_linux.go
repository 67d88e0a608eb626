//go:build linux && amd64

package supervise

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// floorSpec is a Floor as the child applies it: absolute, cleaned, symbolic links of what exists followed.
type floorSpec struct {
	Write    []string // writable subtrees and files (WriteRoots, DeviceWrites, the temporary directory)
	DenyRead []string
}

// landlockABI is the kernel's Landlock ABI version, 0 when it has none (or it is disabled at boot).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6 (scoped); its size passed to the kernel follows the ABI.
type rulesetAttr struct {
	HandledFS, HandledNet, Scoped uint64
}

const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE
	// llFileOnly are the rights a rule on a file (not a directory) may carry.
	llFileOnly = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
)

// handledFS are the filesystem rights the floor restricts at an ABI version. READ_DIR is not among them (listing a
// directory stays allowed everywhere, so a shell's globbing and `ls` of a home directory work); IOCTL_DEV is not (a
// terminal's ioctls).
func handledFS(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return h
}

// applyFloor restricts the calling thread (and what it execs) to the floor. no_new_privs is set.
func applyFloor(f *floorSpec) error {
	abi := landlockABI()
	if abi < 1 {
		return fmt.Errorf("the kernel has no Landlock")
	}
	handled := handledFS(abi)
	attr := rulesetAttr{HandledFS: handled}
	size := unsafe.Sizeof(attr.HandledFS)
	if abi >= 4 {
		size += unsafe.Sizeof(attr.HandledNet)
	}
	if abi >= 6 {
		// The supervised tree may signal only itself, and reach abstract unix sockets only of its own making.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size += unsafe.Sizeof(attr.Scoped)
	}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(rfd)
	defer unix.Close(ruleset)

	write := handled &^ llRead
	for _, p := range f.Write {
		if err := addRule(ruleset, p, write|deniedBelowOr(p, f.DenyRead, llRead)); err != nil {
			return err
		}
	}
	// /dev is readable only where DeviceWrites (and the command's floor) say: a disk's device node is every file
	// on it, whatever DenyRead says.
	reads, err := readGrants(append(slices.Clone(f.DenyRead), "/dev"))
	if err != nil {
		return err
	}
	for _, p := range reads {
		if err := addRule(ruleset, p, llRead); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// deniedBelowOr is rights, or 0 when a denied path is at or below p, or p below one.
func deniedBelowOr(p string, deny []string, rights uint64) uint64 {
	for _, d := range deny {
		if within(d, p) || within(p, d) {
			return 0
		}
	}
	return rights
}

// within says whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// addRule grants rights on the file or directory at p; a path that does not exist is skipped.
func addRule(ruleset int, p string, rights uint64) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT || err == unix.EACCES || err == unix.ENOTDIR || err == unix.ELOOP {
			return nil
		}
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFileOnly
	}
	if rights == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	// struct landlock_path_beneath_attr is packed: 12 bytes, its fd right after the rights.
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", p, errno)
	}
	return nil
}

// readGrants are the paths to grant reading on so that everything is readable but what is below a denied path:
// Landlock only grants, and a grant covers a whole subtree, so each directory on the way to a denied path is not
// granted itself; each of its entries but the one on the way is, as it is now (an entry made later in such a
// directory is not readable). Symbolic links are not granted (what they point at is granted, or not, where it is).
func readGrants(deny []string) ([]string, error) {
	if len(deny) == 0 {
		return []string{"/"}, nil
	}
	for _, d := range deny {
		if d == "/" {
			return nil, nil
		}
	}
	var grants []string
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			onWay, denied := false, false
			for _, d := range deny {
				if d == p {
					denied = true
				} else if strings.HasPrefix(d, p+"/") {
					onWay = true
				}
			}
			switch {
			case denied:
			case onWay && e.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case e.Type()&os.ModeSymlink != 0:
			default:
				grants = append(grants, p)
			}
		}
		return nil
	}
	return grants, walk("/")
}
