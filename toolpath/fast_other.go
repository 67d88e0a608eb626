//go:build !linux

package toolpath

// Walk cannot ask the kernel in one call here: always the slow walk.
func (OS) Walk(string) Resolution { return Unsure }
