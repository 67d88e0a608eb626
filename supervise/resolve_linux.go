//go:build linux && amd64

package supervise

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// procMem reads a process's memory: process_vm_readv, or /proc/PID/mem where that is refused.
type procMem struct {
	pid  int
	file *os.File
	slow bool
}

func (m *procMem) ReadAt(p []byte, addr uint64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !m.slow {
		local := []unix.Iovec{{Base: &p[0]}}
		local[0].SetLen(len(p))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
		n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
		if err != unix.EPERM && err != unix.ENOSYS {
			return n, err
		}
		m.slow = true
	}
	if m.file == nil {
		f, err := os.Open("/proc/" + strconv.Itoa(m.pid) + "/mem")
		if err != nil {
			return 0, err
		}
		m.file = f
	}
	if addr > 1<<63-1 {
		return 0, errUnmapped
	}
	return m.file.ReadAt(p, int64(addr))
}

func (m *procMem) close() {
	if m.file != nil {
		m.file.Close()
	}
}

const (
	atFdcwd         = -100
	atEmptyPath     = 0x1000
	atSymlinkNofoll = 0x100
	atSymlinkFollow = 0x400
	atRemovedir     = 0x200
	maxHops         = 40
)

var errLoop = errors.New("too many levels of symbolic links")

// fdPath is what /proc/PID/fd/N (or /proc/PID/cwd for AT_FDCWD) names: an absolute path, or a kind like
// "pipe:[123]" for what has none.
func fdPath(pid, dirfd int) (string, error) {
	if int32(dirfd) == atFdcwd {
		return os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	}
	if dirfd < 0 {
		return "", unix.EBADF
	}
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(dirfd))
	if errors.Is(err, unix.ENOENT) {
		return "", unix.EBADF // no such descriptor
	}
	return p, err
}

// resolvePath makes p, as the process pid passed it with dirfd, the absolute path the kernel walks: relative to
// the process's cwd or the directory dirfd names, /proc/self and /proc/thread-self named for pid, symbolic links
// followed as far as the path exists (the last one only when follow), and what does not exist yet taken as written.
func resolvePath(pid, dirfd int, p string, follow bool) (string, error) {
	if p == "" {
		return "", unix.ENOENT
	}
	if !strings.HasPrefix(p, "/") {
		base, err := fdPath(pid, dirfd)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(base, "/") {
			return "", unix.ENOTDIR
		}
		p = base + "/" + p
	}
	return canon(pid, p, follow)
}

// canon walks the absolute path p component by component as the kernel would (in the supervisor's own root, which
// is the command's: the supervisor never changes either).
func canon(pid int, p string, follow bool) (string, error) { return canonIn(pid, "/", p, follow) }

// canonIn is canon with root as the root: ".." stops there and an absolute link starts again from there
// (openat2's RESOLVE_IN_ROOT).
func canonIn(pid int, root, p string, follow bool) (string, error) {
	todo := p
	resolved := root
	hops := 0
	ps := strconv.Itoa(pid)
	for {
		todo = strings.TrimLeft(todo, "/")
		if todo == "" {
			return resolved, nil
		}
		comp, rest, slash := strings.Cut(todo, "/")
		last := strings.TrimLeft(rest, "/") == ""
		trailing := last && slash // a trailing slash follows the last link too
		todo = rest
		switch comp {
		case ".":
			continue
		case "..":
			if resolved != root {
				resolved = filepath.Dir(resolved)
			}
			continue
		}
		if resolved == "/proc" && root == "/" {
			switch comp {
			case "self":
				comp = ps
			case "thread-self":
				comp = ps + "/task/" + ps
			}
		}
		next := filepath.Join(resolved, comp)
		if last && !follow && !trailing {
			return next, nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(next, &st); err != nil {
			// What does not exist yet (a file being created) is taken as written.
			return filepath.Clean(next + "/" + todo), nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			resolved = next
			continue
		}
		if hops++; hops > maxHops {
			return "", errLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			resolved = root // an absolute link starts again from the root; a relative one from its directory
		} else if strings.HasPrefix(next, "/proc/") && strings.Contains(target, ":") {
			// A /proc magic link to what has no path (pipe:[…], socket:[…], anon_inode:…).
			return filepath.Clean(next + "/" + todo), nil
		}
		todo = target + "/" + todo
	}
}
