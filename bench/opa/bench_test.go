package opabench

import (
	"strconv"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/probe"
)

// Every benchmark decides the same allowed call: a Read of an existing
// file in the workspace, or a Write of a new one, so that every rule runs
// to the end.
//
//	Native          veto's whole decision through the gate, as
//	                rules/files' benchmarks measure it: path resolution on
//	                the real filesystem, every file rule (the stateful ones
//	                and their probes included), the record in the
//	                in-memory store.
//	NativeRulesOnly veto's four pure file rules called on a fresh Input:
//	                path resolution on the real filesystem (and, for a
//	                write, the workspace lookup and the git configs'
//	                hooksPath, each cached for a second), no store, no
//	                record.
//	Rego            the policy's input built from the call (lexical path
//	                resolution, no system call) and the prepared query
//	                evaluated on it with rego.EvalInput; the patterns
//	                indexed by shape (exact paths, trees, file names) and
//	                the rest matched with glob.match.
//	RegoGlobsOnly   the same, with every pattern a glob.match.
//	RegoFloor       OPA's fixed cost: the same Read input built and a
//	                prepared query of "true" evaluated on it.

const (
	readPath  = "/src/main.go"
	writePath = "/src/new.go"
)

func BenchmarkNativeRead(b *testing.B) {
	benchNative(b, "Read", readPath)
}

func BenchmarkNativeWrite(b *testing.B) {
	benchNative(b, "Write", writePath)
}

func BenchmarkNativeRulesOnlyRead(b *testing.B) {
	benchRulesOnly(b, "Read", readPath)
}

func BenchmarkNativeRulesOnlyWrite(b *testing.B) {
	benchRulesOnly(b, "Write", writePath)
}

func BenchmarkRegoRead(b *testing.B) {
	benchRego(b, "Read", readPath, false)
}

func BenchmarkRegoWrite(b *testing.B) {
	benchRego(b, "Write", writePath, false)
}

func BenchmarkRegoGlobsOnlyRead(b *testing.B) {
	benchRego(b, "Read", readPath, true)
}

func BenchmarkRegoGlobsOnlyWrite(b *testing.B) {
	benchRego(b, "Write", writePath, true)
}

func BenchmarkRegoFloor(b *testing.B) {
	w := newWorld(b, false)
	data, err := Data(Config{Home: w.home})
	if err != nil {
		b.Fatal(err)
	}
	pq, err := prepare(ctx, "true", data)
	if err != nil {
		b.Fatal(err)
	}
	a := args("Read", w.ws+readPath)
	env := Env{Cwd: w.ws, Home: w.home}
	b.ReportAllocs()
	for b.Loop() {
		in, err := w.policy.Input("Read", a, w.ws, env)
		if err != nil {
			b.Fatal(err)
		}
		if rs, err := pq.Eval(ctx, rego.EvalInput(in)); err != nil || !rs.Allowed() {
			b.Fatal(rs, err)
		}
	}
}

func benchNative(b *testing.B, tool, file string) {
	w := newWorld(b, false)
	a := args(tool, w.ws+file)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := &veto.Call{ID: "b" + strconv.Itoa(i), Tool: tool, Args: a, Run: w.run, Cwd: w.ws}
		if v := w.gate.Decide(ctx, c); !v.Allowed {
			b.Fatalf("%s denied: %s/%s", tool, v.Rule, v.Reason)
		}
		i++
	}
}

func benchRulesOnly(b *testing.B, tool, file string) {
	w := newWorld(b, false)
	a := args(tool, w.ws+file)
	desc := w.gate.Descriptor(tool)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := &veto.Call{ID: "b" + strconv.Itoa(i), Tool: tool, Args: a, Run: w.run, Cwd: w.ws}
		in := &veto.Input{Call: c, Descriptor: desc, Knowledge: veto.NoKnowledge, Probe: probe.Live{}}
		for _, r := range w.rules {
			d, err := r.Check(ctx, in)
			if err != nil || d.Denied() {
				b.Fatalf("%s: %s denied %q or failed: %v", tool, r.Info().ID, d.Reason(), err)
			}
		}
		i++
	}
}

func benchRego(b *testing.B, tool, file string, globsOnly bool) {
	w := newWorld(b, false)
	p := w.policy
	if globsOnly {
		p = w.globPolicy
	}
	a := args(tool, w.ws+file)
	env := Env{Cwd: w.ws, Home: w.home}
	b.ReportAllocs()
	for b.Loop() {
		in, err := p.Input(tool, a, w.ws, env)
		if err != nil {
			b.Fatal(err)
		}
		d, err := p.Decide(ctx, in)
		if err != nil || !d.Allow {
			b.Fatalf("%s: %+v %v", tool, d, err)
		}
	}
}
