package presence

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// proc reads processes from a procfs mounted at root ("/proc"; a test's
// directory in the unit tests).
type proc struct{ root string }

// stat is what veto reads of one process: enough to walk its ancestry,
// to tell it from a later process with the same PID, and to find its
// controlling terminal.
type stat struct {
	pid, ppid int
	comm      string
	start     uint64 // clock ticks after boot: a reused PID has another
	tty       uint64 // the controlling terminal's device number, 0 for none
}

// errGone is a process that is not there (it exited, or was never).
var errGone = errors.New("presence: no such process")

// stat reads /proc/PID/stat.
func (p proc) stat(pid int) (stat, error) {
	b, err := readSmall(filepath.Join(p.root, strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return stat{}, errGone
	}
	if err != nil {
		return stat{}, fmt.Errorf("presence: reading process %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// maxStat bounds what readSmall reads: a stat line is well under 1 KB.
const maxStat = 16 << 10

// readSmall reads a small file whole with plain system calls: a hook
// server notes the client behind every call by reading a few of these,
// and os.ReadFile costs each one four fcntl calls and an fstat more (the
// file offered to the runtime's poller, and its size asked). A file
// longer than maxStat is an error.
func readSmall(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 1024)
	for {
		if len(b) == cap(b) {
			if len(b) >= maxStat {
				return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("longer than a process status")}
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// parseStat parses one /proc/PID/stat line. The command name sits in
// parentheses and may hold spaces and parentheses itself: the fields
// follow its last ')'.
func parseStat(line string) (stat, error) {
	open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 1 || close < open {
		return stat{}, fmt.Errorf("presence: unreadable process status %.40q", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return stat{}, fmt.Errorf("presence: unreadable process id: %w", err)
	}
	f := strings.Fields(line[close+1:])
	// f[0] is the state (field 3 of proc(5)); ppid is field 4, tty_nr 7,
	// starttime 22.
	if len(f) < 20 {
		return stat{}, fmt.Errorf("presence: process %d: %d status fields", pid, len(f))
	}
	s := stat{pid: pid, comm: line[open+1 : close]}
	if s.ppid, err = strconv.Atoi(f[1]); err != nil {
		return stat{}, fmt.Errorf("presence: process %d: parent: %w", pid, err)
	}
	tty, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("presence: process %d: terminal: %w", pid, err)
	}
	s.tty = uint64(uint32(tty))
	if s.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return stat{}, fmt.Errorf("presence: process %d: start time: %w", pid, err)
	}
	return s, nil
}

// all reads every process's stat, by PID. Processes that exit while it
// reads are left out.
func (p proc) all() (map[int]stat, error) {
	ents, err := os.ReadDir(p.root)
	if err != nil {
		return nil, fmt.Errorf("presence: listing processes: %w", err)
	}
	m := make(map[int]stat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		s, err := p.stat(pid)
		if errors.Is(err, errGone) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m[pid] = s
	}
	return m, nil
}

// ptyMasters returns the indexes of the pseudo-terminals whose master
// (an open /dev/ptmx) process pid holds, read from each descriptor's
// fdinfo "tty-index:" line. hidden is true when its descriptors cannot be
// read (a process made undumpable, or another user's): a guarded process
// that hides them might hold any master.
func (p proc) ptyMasters(pid int) (idx []int, hidden bool, err error) {
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	ents, err := os.ReadDir(filepath.Join(dir, "fd"))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ESRCH):
		return nil, false, nil // gone
	case errors.Is(err, fs.ErrPermission):
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("presence: descriptors of process %d: %w", pid, err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, "fd", e.Name()))
		if err != nil || !isPtmx(target) {
			continue
		}
		n, ok, err := ttyIndex(filepath.Join(dir, "fdinfo", e.Name()))
		if errors.Is(err, fs.ErrPermission) {
			return nil, true, nil
		}
		if ok {
			idx = append(idx, n)
		}
	}
	return idx, false, nil
}

// isPtmx reports whether a descriptor's link names a pseudo-terminal
// master: the multiplexer at /dev/ptmx or a devpts instance's own ptmx.
func isPtmx(target string) bool {
	return target == "/dev/ptmx" || strings.HasSuffix(target, "/ptmx")
}

// ttyIndex reads the "tty-index:" of a ptmx descriptor's fdinfo (Linux
// 4.20 and later); ok is false when there is none.
func ttyIndex(path string) (int, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "tty-index:"); found {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil, nil
		}
	}
	return 0, false, sc.Err()
}

// ptsIndex is the pseudo-terminal index of a device number read from
// /proc/PID/stat's tty_nr: Unix98 slaves have majors 136 to 143.
func ptsIndex(dev uint64) (int, bool) {
	major := (dev >> 8) & 0xfff
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	if major < 136 || major > 143 {
		return 0, false
	}
	return int((major-136)<<8 | minor), true
}

// namespace reads the inode of one of process self's namespaces ("user",
// "pid") from its /proc/self/ns link, as "user:[4026531837]".
func (p proc) namespace(kind string) (string, error) {
	s, err := os.Readlink(filepath.Join(p.root, "self", "ns", kind))
	if err != nil {
		return "", fmt.Errorf("presence: the %s namespace: %w", kind, err)
	}
	return s, nil
}

// initialUserNS is the initial user namespace's link: its inode is a
// constant of the kernel (PROC_USER_INIT_INO).
const initialUserNS = "user:[4026531837]"

// bootID names this boot: the registry's PIDs and start times mean
// nothing after a reboot.
func (p proc) bootID() string {
	b, err := os.ReadFile(filepath.Join(p.root, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
