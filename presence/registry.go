package presence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// registry is the list of the guarded clients alive on this machine for
// this user: one small file per client process, named PID-START, written
// by the hook the client runs (Note). Its place depends on no variable
// or flag, which the agent could set: /run/user/UID/veto/clients when
// the login's runtime directory exists, and /tmp/veto-UID/clients; both
// are read.
type registry struct {
	dirs []string // written: the first one that can be; read: all
	proc proc
}

// defaultRegistry is the registry of this user, read through /proc.
func defaultRegistry() registry {
	return registry{dirs: RegistryDirs(), proc: proc{root: "/proc"}}
}

// RegistryDirs are the directories of this user's registry of guarded
// clients, for the gate's rule that keeps the agent from writing them.
func RegistryDirs() []string {
	uid := strconv.Itoa(os.Getuid())
	return []string{filepath.Join("/run/user", uid, "veto", "clients"), filepath.Join("/tmp", "veto-"+uid, "clients")}
}

// entry is one guarded client.
type entry struct {
	PID    int       `json:"pid"`
	Start  uint64    `json:"start"`
	Comm   string    `json:"comm"`
	Client string    `json:"client"` // the hook's client name (claude-code, …)
	Boot   string    `json:"boot"`
	At     time.Time `json:"at"`
}

// name is the entry's file name: a client noted twice is one file.
func (e entry) name() string { return fmt.Sprintf("%d-%d", e.PID, e.Start) }

// shells are the programs between a client and its hook that run the
// hook's command line; vetos are veto's own, the hook itself (veto-hook
// hands an event to veto hook).
var (
	shells = map[string]bool{
		"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "fish": true,
		"tcsh": true, "csh": true, "busybox": true, "env": true, "timeout": true, "nice": true,
	}
	vetos = map[string]bool{"veto": true, "veto-hook": true}
)

// client finds the guarded client a hook was started by: from pid (the
// hook itself, or veto-hook on the server's socket) up, past veto's own
// programs and then the shells, the first process that is neither. A hook
// that veto itself started (veto doctor's probe: veto's program again
// above the shells) has no client, and neither has one found at PID 1 or
// at a process without a parent: a hook run by hand from a login shell
// notes nothing, rather than the person's terminal.
func (r registry) client(pid int) (stat, bool, error) {
	below := "" // the hook's own process met last: "" at pid itself
	for range 64 {
		s, err := r.proc.stat(pid)
		if err != nil {
			return stat{}, false, err
		}
		if s.pid == 1 || s.ppid == 0 {
			return stat{}, false, nil
		}
		switch {
		case vetos[s.comm] && (below == "" || below == "veto" && s.comm == "veto-hook"):
			below = s.comm // the hook: veto hook, veto-hook, or veto hook that veto-hook started
		case vetos[s.comm]:
			return stat{}, false, nil // veto's program started the hook (veto doctor's probe)
		case shells[s.comm]:
			below = "shell"
		default:
			return s, true, nil
		}
		pid = s.ppid
	}
	return stat{}, false, nil
}

// note records the guarded client found from pid, unless it is recorded
// already: once per client, one stat of a file per call after that.
func (r registry) note(pid int, client string) error {
	s, ok, err := r.client(pid)
	if err != nil || !ok {
		return err
	}
	e := entry{PID: s.pid, Start: s.start, Comm: s.comm, Client: client}
	for _, dir := range r.dirs {
		if _, err := os.Lstat(filepath.Join(dir, e.name())); err == nil {
			return nil
		}
	}
	e.Boot, e.At = r.proc.bootID(), time.Now().UTC()
	var firstErr error
	for _, dir := range r.dirs {
		err := r.write(dir, e)
		if err == nil {
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// write puts e in dir, whole or not at all, and drops the entries of
// clients that are gone.
func (r registry) write(dir string, e entry) error {
	parent := filepath.Dir(dir)
	if strings.HasPrefix(dir, "/run/user/") {
		// The login's runtime directory is made by the system, never here.
		if err := private(filepath.Dir(parent)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("presence: the registry: %w", err)
	}
	for _, d := range []string{parent, dir} {
		if err := private(d); err != nil {
			return err
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".new-*")
	if err != nil {
		return fmt.Errorf("presence: the registry: %w", err)
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, e.name()))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("presence: the registry: %w", werr)
	}
	r.prune(dir)
	return nil
}

// prune removes the entries of clients that are gone: a new client is
// noted rarely, so the list stays as long as the clients alive.
func (r registry) prune(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		if e, ok := r.read(dir, de.Name()); ok && !r.alive(e) {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// read reads one entry file; ok is false for a file that is not one.
func (r registry) read(dir, name string) (entry, bool) {
	if strings.HasPrefix(name, ".") {
		return entry{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || len(b) > 4096 {
		return entry{}, false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil || e.name() != name {
		return entry{}, false
	}
	return e, true
}

// alive reports whether e's process still runs: the same PID started at
// the same time, in this boot.
func (r registry) alive(e entry) bool {
	if boot := r.proc.bootID(); e.Boot != "" && boot != "" && e.Boot != boot {
		return false
	}
	s, err := r.proc.stat(e.PID)
	return err == nil && s.start == e.Start
}

// live returns the guarded clients that still run, by PID. A registry
// directory that exists but is not this user's alone, or lies under a
// FUSE mount (which this user may mount over it), is an error: its
// entries cannot be trusted, nor its absence.
func (r registry) live() (map[int]entry, error) {
	m := map[int]entry{}
	for _, dir := range r.dirs {
		if err := untrustedMount(r.proc, dir); err != nil {
			return nil, err
		}
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("presence: the registry %s cannot be read: %w", dir, err)
		}
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := private(d); err != nil {
				return nil, err
			}
		}
		for _, de := range ents {
			if e, ok := r.read(dir, de.Name()); ok && r.alive(e) {
				m[e.PID] = e
			}
		}
	}
	return m, nil
}

// private checks that dir is a directory of this user's that no one else
// may enter or write.
func private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("presence: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("presence: %s must be a directory of this user's that no one else can enter (mode 0700)", dir)
	}
	return nil
}

// untrustedMount refuses a path that lies on or under a FUSE mount: an
// unprivileged user may mount one over any directory it owns and show an
// empty registry there.
func untrustedMount(p proc, path string) error {
	b, err := os.ReadFile(filepath.Join(p.root, "self", "mountinfo"))
	if err != nil {
		return fmt.Errorf("presence: the mounts cannot be read: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		point, fstype := unescapeMount(f[4]), f[sep+1]
		if !strings.HasPrefix(fstype, "fuse") {
			continue
		}
		if path == point || strings.HasPrefix(path, strings.TrimSuffix(point, "/")+"/") {
			return fmt.Errorf("presence: the registry %s lies under a FUSE mount (%s)", path, point)
		}
	}
	return nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
