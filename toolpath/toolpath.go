// Package toolpath is veto's one canonical path resolver. Every rule that
// looks at a path asks it; none resolves a path itself, so a rule always
// judges the file the tool will really touch.
package toolpath

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path"
	"strings"
	"syscall"
)

// FS is what resolution needs of a filesystem. OS is the live one; replay
// supplies a recorded one.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// OS is the live filesystem.
type OS struct{}

var _ Walker = OS{}

// Lstat calls os.Lstat.
func (OS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Readlink calls os.Readlink.
func (OS) Readlink(name string) (string, error) { return os.Readlink(name) }

// Env is what a path is resolved against.
type Env struct {
	Cwd  string // absolute; relative paths are resolved against it
	Home string // absolute; "~" and "$HOME" at the start expand to it
	// LookupHome returns the home directory of a named user, for "~user".
	// Nil: "~user" cannot be resolved.
	LookupHome func(name string) (string, error)
	FS         FS // nil means OS
}

// LiveEnv returns the environment of this process for a call running in
// cwd: the user's home from $HOME, other users' from the user database.
func LiveEnv(cwd string) Env {
	home, _ := os.UserHomeDir()
	return Env{Cwd: cwd, Home: home, LookupHome: lookupHome, FS: OS{}}
}

func lookupHome(name string) (string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}

// Path is a resolved path, in the forms a tool might give it to the
// kernel. Tools differ: some pass the string as it is, some clean it
// first, and "link/.." names different files in the two cases. A rule
// judges every form, so neither reading slips past it.
type Path struct {
	// Lexical is absolute and clean: "~", cwd, "..", repeated and trailing
	// slashes resolved, symlinks not followed.
	Lexical string
	// Real is the path as the kernel resolves the string: each symlink of
	// the existing prefix followed, ".." judged after the link before it.
	Real string
	// Cleaned is Lexical with the symlinks of its existing prefix followed:
	// the file a tool that cleans its path first will touch.
	Cleaned string
}

// Forms returns the distinct forms of p: Real first, then Cleaned and
// Lexical where they differ. Containment is judged on the real forms
// (Real and Cleaned); patterns on all of them.
func (p Path) Forms() []string {
	forms := []string{p.Real}
	if p.Cleaned != p.Real {
		forms = append(forms, p.Cleaned)
	}
	if p.Lexical != p.Real && p.Lexical != p.Cleaned {
		forms = append(forms, p.Lexical)
	}
	return forms
}

// Any reports whether f holds for one of the distinct forms of p, asking in
// the order of Forms and stopping at the first that does.
func (p Path) Any(f func(form string) bool) bool {
	if f(p.Real) {
		return true
	}
	if p.Cleaned != p.Real && f(p.Cleaned) {
		return true
	}
	return p.Lexical != p.Real && p.Lexical != p.Cleaned && f(p.Lexical)
}

// maxLinks is how many symlinks one resolution follows before it calls
// the path a loop, as the kernel's ELOOP does.
const maxLinks = 40

// Errors of resolution. A rule that cannot resolve a path must deny.
var (
	ErrEmpty      = errors.New("empty path")
	ErrNUL        = errors.New("path contains a NUL byte")
	ErrNoCwd      = errors.New("relative path without an absolute working directory")
	ErrNoHome     = errors.New("home directory unknown")
	ErrRemoteFile = errors.New("file URL names another host")
	ErrLoop       = errors.New("too many levels of symbolic links")
)

// Resolve resolves raw, as a tool given raw in env would see it.
func Resolve(raw string, env Env) (Path, error) {
	p, _, err := Find(raw, env)
	return p, err
}

// Find is Resolve, and what resolving found of the file at Real on the
// way: Clean when it exists with no symlink on its path, Missing when it
// does not exist and its directory does with no symlink on the path, and
// Unsure otherwise (a symlink on the way, a path not clean as given, or
// an FS that cannot say), when only a look at Real tells.
func Find(raw string, env Env) (Path, Resolution, error) {
	abs, err := absolute(raw, env)
	if err != nil {
		return Path{}, Unsure, err
	}
	fsys := env.FS
	if fsys == nil {
		fsys = OS{}
	}
	clean := isClean(abs)
	real, found, err := resolveReal(abs, clean, fsys)
	if err != nil {
		return Path{}, Unsure, err
	}
	if clean {
		return Path{Lexical: abs, Real: real, Cleaned: real}, found, nil
	}
	lexical := path.Clean(abs)
	cleaned, _, err := resolveReal(lexical, true, fsys)
	if err != nil {
		return Path{}, Unsure, err
	}
	return Path{Lexical: lexical, Real: real, Cleaned: cleaned}, Unsure, nil
}

// isClean reports whether path.Clean would return the absolute path p as
// it is: no empty, "." or ".." segment and no trailing slash. Most paths
// a tool names are, and the check costs a scan where Clean costs a copy.
func isClean(p string) bool {
	if p == "/" {
		return true
	}
	if p == "" || p[0] != '/' || p[len(p)-1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		// A segment starts at i+1; it is not empty (no "//", no trailing
		// slash), so look for "." and "..".
		j := i + 1
		if j < len(p) && p[j] == '/' {
			return false
		}
		if j < len(p) && p[j] == '.' {
			if j+1 == len(p) || p[j+1] == '/' {
				return false
			}
			if p[j+1] == '.' && (j+2 == len(p) || p[j+2] == '/') {
				return false
			}
		}
	}
	return true
}

// absolute expands "~", "~user", "$HOME" and file URLs and joins a relative
// path to the cwd. It does not clean: ".." must be judged after symlinks.
func absolute(raw string, env Env) (string, error) {
	if raw == "" {
		return "", ErrEmpty
	}
	if strings.IndexByte(raw, 0) >= 0 {
		return "", ErrNUL
	}
	if strings.HasPrefix(raw, "file:") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("file URL: %w", err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", ErrRemoteFile
		}
		if u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
			return "", errors.New("file URL without an absolute path")
		}
		raw = u.Path
		if raw == "" || strings.IndexByte(raw, 0) >= 0 {
			return "", ErrNUL
		}
	}
	switch {
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		return home(env.Home, raw[1:])
	case strings.HasPrefix(raw, "~"):
		name, rest, _ := strings.Cut(raw[1:], "/")
		if env.LookupHome == nil {
			return "", ErrNoHome
		}
		h, err := env.LookupHome(name)
		if err != nil || h == "" {
			return "", ErrNoHome
		}
		return home(h, "/"+rest)
	case raw == "$HOME" || strings.HasPrefix(raw, "$HOME/"):
		return home(env.Home, raw[len("$HOME"):])
	case raw == "${HOME}" || strings.HasPrefix(raw, "${HOME}/"):
		return home(env.Home, raw[len("${HOME}"):])
	case strings.HasPrefix(raw, "/"):
		return raw, nil
	}
	if !strings.HasPrefix(env.Cwd, "/") {
		return "", ErrNoCwd
	}
	return env.Cwd + "/" + raw, nil
}

func home(h, rest string) (string, error) {
	if !strings.HasPrefix(h, "/") {
		return "", ErrNoHome
	}
	return h + rest, nil
}

// Resolution is what a Walker says of a clean absolute path.
type Resolution uint8

const (
	// Unsure: a symlink is on the way, or the walker cannot say; the
	// resolver walks the path component by component.
	Unsure Resolution = iota
	// Clean: every component exists and none is a symlink.
	Clean
	// Missing: some component does not exist, and none before it is a
	// symlink.
	Missing
)

// Walker is an FS that can tell in one call how a clean absolute path
// resolves, as the kernel does with openat2 and RESOLVE_NO_SYMLINKS. The
// resolver asks it first and walks the components only when it is Unsure.
type Walker interface {
	Walk(path string) Resolution
}

// resolveReal is realPath, with a fast path for the common case: a clean
// path (clean is isClean(abs)) with no symlinks, whose existing prefix is
// the whole path or all but its last component. One or two kernel calls
// prove it; anything else takes the component walk.
func resolveReal(abs string, clean bool, fsys FS) (string, Resolution, error) {
	if w, ok := fsys.(Walker); ok && clean {
		switch w.Walk(abs) {
		case Clean:
			return abs, Clean, nil
		case Missing:
			// The parent exists without symlinks, so the missing component
			// is the last, and it is not a dangling symlink (that would be
			// a symlink on the way, not a missing file).
			if abs != "/" && w.Walk(path.Dir(abs)) == Clean {
				return abs, Missing, nil
			}
		}
	}
	real, err := realPath(abs, fsys)
	return real, Unsure, err
}

// realPath follows the symlinks of abs's existing prefix, component by
// component, judging ".." after the component before it is resolved, as
// the kernel does. Below a missing component the path is lexical, until
// ".." climbs back to where things exist.
func realPath(abs string, fsys FS) (string, error) {
	pending := strings.Split(abs, "/")
	resolved := "/"
	missing := 0 // components of resolved below the last one that exists
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			if missing > 0 {
				missing--
			}
			continue
		}
		next := path.Join(resolved, c)
		if missing > 0 {
			resolved = next
			missing++
			continue
		}
		fi, err := fsys.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist), isNotDir(err):
			missing = 1
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("cannot inspect a component of the path: %w", errors.Unwrap(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", ErrLoop
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("cannot read a symbolic link of the path: %w", errors.Unwrap(err))
		}
		if strings.HasPrefix(target, "/") {
			resolved = "/"
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	return resolved, nil
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// Within reports whether p is root or below it. Both must be canonical
// (a Real path); with fold, letters compare without case, for filesystems
// that ignore it.
func Within(p, root string, fold bool) bool {
	if fold {
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// Workspace returns the project directory of a call: the directory the
// client reports when it reports one, else the top of the git work tree
// holding cwd, else cwd. The result is a Real path.
func Workspace(reported string, env Env) (string, error) {
	if reported != "" {
		p, err := Resolve(reported, env)
		return p.Real, err
	}
	cwd, err := Resolve(env.Cwd, env)
	if err != nil {
		return "", err
	}
	fsys := env.FS
	if fsys == nil {
		fsys = OS{}
	}
	for dir := cwd.Real; ; dir = path.Dir(dir) {
		if _, err := fsys.Lstat(path.Join(dir, ".git")); err == nil {
			return dir, nil
		}
		if dir == "/" {
			return cwd.Real, nil
		}
	}
}

// Lexical is a filesystem on which nothing exists: paths resolve
// lexically and no call reaches the disk. Replay resolves with it, so that
// it never touches the live filesystem.
type Lexical struct{}

// Lstat reports that nothing exists.
func (Lexical) Lstat(name string) (fs.FileInfo, error) {
	return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
}

// Readlink reports that nothing exists.
func (Lexical) Readlink(name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrNotExist}
}
