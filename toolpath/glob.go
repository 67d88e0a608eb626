package toolpath

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
)

// DirReader is an FS that can list a directory. The live filesystem can;
// replay's Lexical cannot, and there a glob is judged as written.
type DirReader interface {
	ReadDir(name string) ([]fs.DirEntry, error)
}

// ReadDir calls os.ReadDir.
func (OS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

var _ DirReader = OS{}

// ErrTooMany is Glob's error when a pattern names more files than it may
// return, or needs more directories listed than one expansion may list.
var ErrTooMany = errors.New("the glob names too many files")

// maxDirReads bounds the directories one expansion lists, whatever the
// pattern: "*/*/*/*" under a large tree, or "*/../*" repeated.
const maxDirReads = 256

// GlobPrefix returns the part of raw before its first segment holding a
// pattern: the directory every file the pattern names lies in ("." when
// the first segment is a pattern).
func GlobPrefix(raw string) string {
	segs := strings.Split(raw, "/")
	for i, s := range segs {
		if HasGlob(s) {
			if i == 0 {
				return "."
			}
			if p := strings.Join(segs[:i], "/"); p != "" {
				return p
			}
			return "/"
		}
	}
	return raw
}

// HasGlob reports whether raw holds a character a shell expands as a
// pathname pattern: "*", "?" or "[".
func HasGlob(raw string) bool { return strings.ContainsAny(raw, "*?[") }

// Glob expands raw as a shell expands an unquoted word: each segment with
// a pattern character is matched against the names its directory holds,
// those starting with "." only by a segment starting with "." (bash's
// default), and "**" is "*". A segment after the last pattern is taken as
// written, whether or not it exists, so the result can hold more than the
// shell's. It returns the paths, absolute and not cleaned (Resolve them),
// and expanded false when raw holds no pattern, when a pattern matched
// nothing (the shell then passes the word as it is), or when env's FS
// cannot list directories: the caller then judges raw itself. More than
// max paths is ErrTooMany.
func Glob(raw string, env Env, max int) (paths []string, expanded bool, err error) {
	if !HasGlob(raw) {
		return nil, false, nil
	}
	fsys := env.FS
	if fsys == nil {
		fsys = OS{}
	}
	dr, ok := fsys.(DirReader)
	if !ok {
		return nil, false, nil
	}
	abs, err := absolute(raw, env)
	if err != nil {
		return nil, false, err
	}
	cands := []string{""}
	reads := 0
	for _, seg := range strings.Split(abs, "/")[1:] {
		if !HasGlob(seg) {
			for i := range cands {
				cands[i] += "/" + seg
			}
			continue
		}
		var next []string
		for _, dir := range cands {
			d := dir
			if d == "" {
				d = "/"
			}
			if reads++; reads > maxDirReads {
				return nil, true, ErrTooMany
			}
			entries, err := dr.ReadDir(d)
			if err != nil {
				continue // nothing there for the pattern to match
			}
			for _, e := range entries {
				if name := e.Name(); segMatch(seg, name) {
					if len(next) >= max {
						return nil, true, ErrTooMany
					}
					next = append(next, dir+"/"+name)
				}
			}
		}
		if len(next) == 0 {
			return nil, false, nil
		}
		cands = next
	}
	return cands, true, nil
}

// segMatch reports whether the shell pattern seg matches name. A pattern
// path.Match cannot read, or reads otherwise than bash ("[[:alpha:]]"),
// matches every name, which can only judge more files.
func segMatch(seg, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(seg, ".") {
		return false
	}
	if strings.Contains(seg, "[[:") || strings.Contains(seg, "[[=") || strings.Contains(seg, "[[.") {
		return true // a POSIX class, which path.Match reads otherwise
	}
	pat := strings.ReplaceAll(strings.ReplaceAll(seg, "**", "*"), "[!", "[^")
	ok, err := path.Match(pat, name)
	return ok || err != nil
}
