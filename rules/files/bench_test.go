package files_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/vetohq/veto"
)

// The figures include resolving every path on the real filesystem (one
// lstat per existing component), the probes the rules ask for, and the
// record in the in-memory store.

func BenchmarkReadDecision(b *testing.B) {
	w := newWorld(b, nil)
	args := map[string]any{"file_path": w.ws + "/src/main.go"}
	benchDecide(b, w, "Read", args)
}

// BenchmarkWriteDecisionNewFile is a Write of a file that does not exist:
// every write gate runs, and the read-before-write gate probes it.
func BenchmarkWriteDecisionNewFile(b *testing.B) {
	w := newWorld(b, nil)
	args := map[string]any{"file_path": w.ws + "/src/new.go", "content": "package main\n"}
	benchDecide(b, w, "Write", args)
}

// BenchmarkWriteDecisionKnownFile is a Write of a file the run read: the
// stale gate probes and hashes it (14 bytes here).
func BenchmarkWriteDecisionKnownFile(b *testing.B) {
	w := newWorld(b, nil)
	c := w.call("Read", map[string]any{"file_path": w.ws + "/src/main.go"})
	if v := w.gate.Decide(ctx, c); !v.Allowed {
		b.Fatal(v.Reason)
	}
	must(b, w.gate.ObserveCall(ctx, c, veto.Succeeded))
	args := map[string]any{"file_path": w.ws + "/src/main.go", "content": "package main\n"}
	benchDecide(b, w, "Write", args)
}

func benchDecide(b *testing.B, w *world, tool string, args map[string]any) {
	b.Helper()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := &veto.Call{ID: "b" + strconv.Itoa(i), Tool: tool, Args: args, Run: w.run, Cwd: w.ws}
		if v := w.gate.Decide(ctx, c); !v.Allowed {
			b.Fatalf("%s denied: %s", tool, v.Reason)
		}
		i++
	}
	_ = os.Remove(w.ws + "/src/new.go")
}
