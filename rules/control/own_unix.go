//go:build unix

package control

import (
	"io/fs"
	"os"
	"syscall"
)

// ownFile reports whether this user owns the file: one the agent, running
// as this user, could have written.
func ownFile(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}
