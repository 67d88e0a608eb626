package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/vetohq/veto"
)

// A file found damaged is marked so, beside it (PATH.damaged: its device
// and inode, and what was seen), and refused by every process while that
// file is at the path, whatever it holds afterwards: closing a store lets
// SQLite copy the pages its WAL holds into the file, which may then look
// whole where it was checked and hold nothing sound elsewhere. A new file
// at the path (a repair moves the damaged one aside; a new state is
// linked into place) is not the file marked.

func markPath(path string) string { return path + ".damaged" }

// identity is a file's device and inode.
func identity(fi os.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), true
}

// mark records that the file at path, as it is now, is damaged.
func mark(path string, err error) {
	var se *veto.StateError
	if !errors.As(err, &se) || se.Cause != veto.CauseDamaged || errors.Is(err, errMarked) {
		return
	}
	fi, serr := os.Stat(path)
	if serr != nil || !fi.Mode().IsRegular() {
		return
	}
	id, ok := identity(fi)
	if !ok {
		return
	}
	tmp := markPath(path) + ".new"
	if os.WriteFile(tmp, []byte(id+"\n"+se.Detail+"\n"), 0o600) == nil {
		os.Rename(tmp, markPath(path))
	}
}

// marked returns the refusal of a file marked damaged, nil when fi is not
// the file marked.
func marked(path string, fi os.FileInfo) error {
	b, err := os.ReadFile(markPath(path))
	if err != nil {
		return nil
	}
	id, ok := identity(fi)
	line, detail, _ := strings.Cut(string(b), "\n")
	if !ok || line != id {
		return nil
	}
	detail = strings.TrimSpace(detail)
	if len(detail) > 200 {
		detail = detail[:200]
	}
	d := "found damaged before"
	if detail != "" {
		d += ": " + detail
	}
	return &veto.StateError{Cause: veto.CauseDamaged, Detail: d + "; marked in " + markPath(path), Err: errMarked}
}

// errMarked is the refusal of a file marked damaged.
var errMarked = errors.New("sqlite: the file is marked damaged")
