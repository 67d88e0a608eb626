//go:build !unix

package control

import "io/fs"

// ownFile reports whether this user owns the file; without owners, any.
func ownFile(fs.FileInfo) bool { return true }
