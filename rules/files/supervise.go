package files

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/vetohq/veto/toolpath"
)

// ReadMatters reports whether a read of path (absolute, resolved by the
// kernel's view) must be decided by the file rules: it could hold
// credentials, or it lies in a directory that holds them. veto exec
// decides every other read without asking.
func (s *Set) ReadMatters(path string) bool {
	p := pathOf(path)
	if matchAny(&s.credentials, p, "") {
		return true
	}
	for _, anchor := range s.credAnchors {
		if anchor != "/" && !slices.Contains(s.homes, anchor) && anchor != s.home && toolpath.Within(path, anchor, s.fold) {
			return true
		}
	}
	return false
}

// Floor is the Landlock floor of a command run in cwd: its write roots
// (the workspace cwd is in, the temporary directories, the extra roots)
// and the credential directories that exist (never the home directory or
// the root, which hold everything else).
func (s *Set) Floor(cwd string) (writeRoots, denyRead []string, err error) {
	ws, err := s.workspace("", s.env(cwd))
	if err != nil {
		return nil, nil, err
	}
	writeRoots = append(append([]string{ws}, s.tempRoots...), s.extraRoots...)
	for _, anchor := range s.credAnchors {
		if anchor == "/" || anchor == s.home || slices.Contains(s.homes, anchor) {
			continue
		}
		if fi, err := os.Stat(anchor); err == nil && fi.IsDir() {
			denyRead = append(denyRead, filepath.Clean(anchor))
		}
	}
	return writeRoots, denyRead, nil
}
