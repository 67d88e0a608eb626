package files_test

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/toolpath"
)

// The figures include resolving every path on the real filesystem
// (openat2 with RESOLVE_NO_SYMLINKS, then close), the probes the rules ask
// for, and the record in the in-memory store. A run holds at most
// runLength calls: the store and gate are then renewed, as a session ends
// and a new one starts, so the heap does not grow without bound across
// millions of iterations. The cost of history size is measured apart
// (sqlite's BenchmarkDecideWithHistory).

const runLength = 4096

func BenchmarkReadDecision(b *testing.B) {
	w := newWorld(b, nil)
	args := map[string]any{"file_path": w.ws + "/src/main.go"}
	benchDecide(b, w, "Read", args, nil)
}

// BenchmarkWriteDecisionNewFile is a Write of a file that does not exist:
// every write gate runs, and the read-before-write gate probes it.
func BenchmarkWriteDecisionNewFile(b *testing.B) {
	w := newWorld(b, nil)
	args := map[string]any{"file_path": w.ws + "/src/new.go", "content": "package main\n"}
	benchDecide(b, w, "Write", args, nil)
}

// BenchmarkWriteDecisionKnownFile is a Write of a file the run read: the
// stale gate probes and hashes it (14 bytes here).
func BenchmarkWriteDecisionKnownFile(b *testing.B) {
	w := newWorld(b, nil)
	benchWriteKnown(b, w, w.ws+"/src/main.go")
}

// BenchmarkWriteDecisionKnownOldFile is a Write of a file the run read,
// whose last change was settled when it was read (as most files of a
// project are): the stale gate finds its stamp unmoved and reads nothing.
// The set-up waits probe.Settle for the files it writes to settle.
func BenchmarkWriteDecisionKnownOldFile(b *testing.B) {
	w := newWorld(b, nil)
	must(b, os.WriteFile(w.ws+"/src/big.go", make([]byte, 4<<20), 0o644))
	time.Sleep(probe.Settle + 100*time.Millisecond)
	for _, f := range []struct{ name, path string }{{"14B", "/src/main.go"}, {"4MB", "/src/big.go"}} {
		b.Run(f.name, func(b *testing.B) {
			benchWriteKnown(b, w, w.ws+f.path)
		})
	}
}

// BenchmarkWriteDecisionKnownFile4MB is BenchmarkWriteDecisionKnownFile
// for a 4 MB file that changed just before the run read it: every Write
// reads and hashes it again.
func BenchmarkWriteDecisionKnownFile4MB(b *testing.B) {
	w := newWorld(b, nil)
	must(b, os.WriteFile(w.ws+"/src/big.go", make([]byte, 4<<20), 0o644))
	benchWriteKnown(b, w, w.ws+"/src/big.go")
}

// benchWriteKnown decides Writes of file, which the run read (and the
// runtime reported) at the start of every run.
func benchWriteKnown(b *testing.B, w *world, file string) {
	b.Helper()
	read := func() {
		c := w.call("Read", map[string]any{"file_path": file})
		if v := w.gate.Decide(ctx, c); !v.Allowed {
			b.Fatal(v.Reason)
		}
		must(b, w.gate.ObserveCall(ctx, c, veto.Succeeded))
	}
	benchDecide(b, w, "Write", map[string]any{"file_path": file, "content": "package main\n"}, read)
}

// benchDecide decides tool calls with args; start, when given, runs at the
// start of every run.
func benchDecide(b *testing.B, w *world, tool string, args map[string]any, start func()) {
	b.Helper()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%runLength == 0 {
			w.renew()
			if start != nil {
				start()
			}
		}
		c := &veto.Call{ID: "b" + strconv.Itoa(i), Tool: tool, Args: args, Run: w.run, Cwd: w.ws}
		if v := w.gate.Decide(ctx, c); !v.Allowed {
			b.Fatalf("%s denied: %s", tool, v.Reason)
		}
		i++
	}
	_ = os.Remove(w.ws + "/src/new.go")
}

// The same decisions on an in-memory filesystem and probe: what veto's own
// code costs, without the kernel's path walks. The difference from the
// benchmarks above is the kernel's share.

func BenchmarkReadDecisionInMemory(b *testing.B) {
	w := newMemWorld(b)
	benchDecide(b, w, "Read", map[string]any{"file_path": w.ws + "/src/main.go"}, nil)
}

func BenchmarkWriteDecisionNewFileInMemory(b *testing.B) {
	w := newMemWorld(b)
	benchDecide(b, w, "Write", map[string]any{"file_path": w.ws + "/src/new.go", "content": "package main\n"}, nil)
}

// newMemWorld is newWorld's tree, resolved and probed from memory.
func newMemWorld(b *testing.B) *world {
	m := memFS{}
	w := newWorld(b, func(c *files.Config) { c.FS = m })
	must(b, filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		m[p] = fi
		for dir := filepath.Dir(p); dir != "/" && m[dir] == nil; dir = filepath.Dir(dir) {
			m[dir], _ = os.Lstat(dir)
		}
		return err
	}))
	w.probe = memProbe(m)
	w.renew()
	return w
}

// memFS answers from a snapshot of Lstat results; it holds no symlink the
// benchmarks touch, so Walk answers in one step as the kernel does.
type memFS map[string]fs.FileInfo

func (m memFS) Lstat(name string) (fs.FileInfo, error) {
	if fi := m[name]; fi != nil {
		return fi, nil
	}
	return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
}

func (m memFS) Readlink(name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

func (m memFS) Walk(p string) toolpath.Resolution {
	for q := p; q != "/"; q = path.Dir(q) {
		if fi := m[q]; fi == nil {
			return toolpath.Missing
		} else if fi.Mode()&fs.ModeSymlink != 0 {
			return toolpath.Unsure
		}
	}
	return toolpath.Clean
}

type memProbe memFS

func (m memProbe) File(_ context.Context, p string) (veto.FileFact, error) {
	fi := m[p]
	if fi == nil {
		return veto.FileFact{Path: p}, nil
	}
	return veto.FileFact{Path: p, Exists: true, Dir: fi.IsDir(), Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// BenchmarkKernelFloor runs only the kernel calls the decisions above make
// on the live filesystem, in the same order and with nothing else: the
// least a decision can cost here while it looks at the world.
//
//	Read: openat2 of the path (RESOLVE_NO_SYMLINKS), close.
//	WriteNewFile: openat2 of the path (ENOENT), openat2 of its parent,
//	close, and the probe's lstat of the path.
func BenchmarkKernelFloor(b *testing.B) {
	w := newWorld(b, nil)
	osfs := toolpath.OS{}
	b.Run("Read", func(b *testing.B) {
		p := w.ws + "/src/main.go"
		for b.Loop() {
			if osfs.Walk(p) != toolpath.Clean {
				b.Fatal("not clean")
			}
		}
	})
	b.Run("WriteNewFile", func(b *testing.B) {
		p := w.ws + "/src/new.go"
		for b.Loop() {
			if osfs.Walk(p) != toolpath.Missing || osfs.Walk(path.Dir(p)) != toolpath.Clean {
				b.Fatal("not missing")
			}
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
	})
}
