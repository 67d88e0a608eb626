package veto_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// mapProbe answers from a map, counts its looks, and can fail; with again
// set it is also a Reprober.
type mapProbe struct {
	facts map[string]veto.FileFact
	looks []string
	fail  error
}

func (p *mapProbe) File(_ context.Context, path string) (veto.FileFact, error) {
	p.looks = append(p.looks, path)
	if p.fail != nil {
		return veto.FileFact{}, p.fail
	}
	return p.facts[path], nil
}

type reprober struct{ *mapProbe }

func (r reprober) FileAgain(_ context.Context, path string, known veto.FileFact) (veto.FileFact, error) {
	r.looks = append(r.looks, "again:"+path)
	return known, nil
}

// learnerOf touches the paths in the call's "paths" argument.
type learnerOf struct{ err error }

func (l learnerOf) Touched(c *veto.Call, _ *veto.Descriptor) ([]string, error) {
	var out []string
	for _, p := range c.Args["paths"].([]any) {
		out = append(out, p.(string))
	}
	return out, l.err
}

// ObserveCall turns a successful call into knowledge of what it touched,
// probed at that moment; a failed, cancelled or denied call, a learner
// that fails or panics, or a probe that fails teaches nothing, and the
// outcome is still recorded.
func TestObserveCallLearnsOnlyFromSuccess(t *testing.T) {
	a := veto.FileFact{Exists: true, Size: 1, Hash: "aa"}
	b := veto.FileFact{Exists: true, Size: 2, Hash: "bb"}
	probe := &mapProbe{facts: map[string]veto.FileFact{"/w/a": a, "/w/b": b}}
	f := newFixture(t, veto.Config{Probe: probe, Learners: []veto.Learner{learnerOf{}}})
	run := veto.Run{Ref: "learn", Fresh: true}
	args := map[string]any{"paths": []any{"/w/a", "/w/b"}}
	for i, o := range []veto.Outcome{veto.Succeeded, veto.Failed, veto.Cancelled, veto.Denied} {
		c := inRun(run, "c"+itoa(i), "Read", args)
		f.g.Decide(ctx, c)
		if err := f.g.ObserveCall(ctx, c, o); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	evs := f.events(t, "learn")
	var taught [][]string
	for _, e := range evs {
		if e.Kind == veto.EventObserved {
			var paths []string
			for _, ff := range e.Files {
				paths = append(paths, ff.Path+"="+ff.Hash)
			}
			taught = append(taught, paths)
		}
	}
	if want := [][]string{{"/w/a=aa", "/w/b=bb"}, nil, nil, nil}; len(taught) != 4 || !slices.Equal(taught[0], want[0]) ||
		taught[1] != nil || taught[2] != nil || taught[3] != nil {
		t.Fatalf("observations taught %v, want %v", taught, want)
	}
	if !slices.Equal(probe.looks, []string{"/w/a", "/w/b"}) {
		t.Fatalf("probed %v, want only the successful call's paths", probe.looks)
	}
	st, _ := f.store.Load(ctx, "learn")
	if got, ok, err := st.Knowledge.File(ctx, "/w/b"); err != nil || !ok || got.Hash != "bb" {
		t.Fatalf("knowledge of /w/b: %+v %v %v", got, ok, err)
	}

	// A learner or probe that fails: the outcome is recorded, without knowledge.
	for name, cfg := range map[string]veto.Config{
		"learner-error": {Probe: probe, Learners: []veto.Learner{learnerOf{err: errors.New("cannot")}}},
		"learner-panic": {Probe: probe, Learners: []veto.Learner{panicLearner{}}},
		"probe-error":   {Probe: &mapProbe{fail: errors.New("io")}, Learners: []veto.Learner{learnerOf{}}},
		"no-probe":      {Learners: []veto.Learner{learnerOf{}}},
	} {
		g := newFixture(t, cfg)
		c := call("Read", args)
		g.g.Decide(ctx, c)
		if err := g.g.ObserveCall(ctx, c, veto.Succeeded); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := g.events(t, c.Run.Ref)
		last := e[len(e)-1]
		if last.Kind != veto.EventObserved || last.Outcome != veto.Succeeded || len(last.Files) != 0 {
			t.Fatalf("%s: recorded %+v", name, last)
		}
		if !strings.Contains(g.log.String(), `"msg":"knowledge not recorded"`) {
			t.Errorf("%s: the lost knowledge was not logged", name)
		}
	}

	// What ObserveCall refuses.
	for name, tc := range map[string]struct {
		c *veto.Call
		o veto.Outcome
	}{
		"pending":        {call("Read", nil), veto.Pending},
		"not-an-outcome": {call("Read", nil), "maybe"},
		"no-id":          {&veto.Call{Tool: "Read", Run: veto.Run{Ref: "r"}}, veto.Succeeded},
		"no-run":         {&veto.Call{ID: "x", Tool: "Read"}, veto.Succeeded},
		"past-a-bound":   {&veto.Call{ID: "x", Tool: strings.Repeat("t", 300), Run: veto.Run{Ref: "r"}}, veto.Succeeded},
	} {
		if err := f.g.ObserveCall(ctx, tc.c, tc.o); err == nil {
			t.Errorf("%s: observed", name)
		}
	}
	// An observation of a run never started opens it incomplete.
	c := &veto.Call{ID: "x", Tool: "Read", Run: veto.Run{Ref: "never-started"}}
	if err := f.g.ObserveCall(ctx, c, veto.Failed); err != nil {
		t.Fatal(err)
	}
	if e := f.events(t, "never-started"); len(e) != 2 || e[0].Kind != veto.EventRunStarted || *e[0].Complete || e[1].Kind != veto.EventObserved {
		t.Fatalf("events %+v", e)
	}
}

type panicLearner struct{}

func (panicLearner) Touched(*veto.Call, *veto.Descriptor) ([]string, error) { panic("learner bug") }

// Observe refuses what it cannot record and bounds what it records.
func TestObserveRefusesWhatItCannotRecord(t *testing.T) {
	f := newFixture(t, veto.Config{})
	long := strings.Repeat("x", veto.DefaultLimits.MaxName+1)
	for name, tc := range map[string]struct {
		run string
		o   veto.Observation
	}{
		"no-run":      {"", veto.Observation{CallID: "c", Tool: "Read", Outcome: veto.Failed}},
		"long-run":    {long, veto.Observation{CallID: "c", Tool: "Read", Outcome: veto.Failed}},
		"no-call":     {"r", veto.Observation{Tool: "Read", Outcome: veto.Failed}},
		"long-call":   {"r", veto.Observation{CallID: long, Tool: "Read", Outcome: veto.Failed}},
		"no-tool":     {"r", veto.Observation{CallID: "c", Outcome: veto.Failed}},
		"long-tool":   {"r", veto.Observation{CallID: "c", Tool: long, Outcome: veto.Failed}},
		"long-target": {"r", veto.Observation{CallID: "c", Tool: "Read", Outcome: veto.Failed, Target: veto.Target{Kind: "file", ID: "/" + strings.Repeat("p", veto.DefaultLimits.MaxPath)}}},
		"no-outcome":  {"r", veto.Observation{CallID: "c", Tool: "Read"}},
	} {
		if err := f.g.Observe(ctx, tc.run, tc.o); err == nil {
			t.Errorf("%s: observed", name)
		}
	}
	if err := f.g.Observe(ctx, "r", veto.Observation{CallID: strings.Repeat("x", veto.DefaultLimits.MaxName), Tool: "Read", Outcome: veto.Failed}); err != nil {
		t.Errorf("a call id at the bound: %v", err)
	}
}

// AllowEgress records an allow-list entry for a started run only.
func TestAllowEgressNeedsAStartedRun(t *testing.T) {
	f := newFixture(t, veto.Config{})
	if err := f.g.AllowEgress(ctx, "none", "x.example"); !errors.Is(err, veto.ErrNoRun) {
		t.Fatalf("a run never started: %v", err)
	}
	if evs := f.events(t, "none"); len(evs) != 0 {
		t.Fatalf("recorded %+v", evs)
	}
	if err := f.g.Start(ctx, veto.Run{Ref: "eg", Fresh: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.g.AllowEgress(ctx, "eg", "x.example"); err != nil {
		t.Fatal(err)
	}
	st, _ := f.store.Load(ctx, "eg")
	if hosts, err := st.Knowledge.Egress(ctx); err != nil || !slices.Equal(hosts, []string{"x.example"}) {
		t.Fatalf("allow-list %v %v", hosts, err)
	}
	for name, tc := range map[string][2]string{
		"no-run": {"", "x.example"}, "long-run": {strings.Repeat("r", 257), "x.example"},
		"no-host": {"eg", ""}, "long-host": {"eg", strings.Repeat("h", 261)},
	} {
		if err := f.g.AllowEgress(ctx, tc[0], tc[1]); err == nil {
			t.Errorf("%s: allowed", name)
		}
	}
	if err := f.g.AllowEgress(ctx, "eg", strings.Repeat("h", 260)); err != nil {
		t.Errorf("a host at the bound: %v", err)
	}
	// Start refuses what it cannot key, and leaves a started run as it is.
	if err := f.g.Start(ctx, veto.Run{}); err == nil {
		t.Error("a run without a reference started")
	}
	if err := f.g.Start(ctx, veto.Run{Ref: "eg"}); err != nil || len(f.events(t, "eg")) != 3 {
		t.Errorf("starting a started run: %v, %d events", err, len(f.events(t, "eg")))
	}
}

// Same compares what matters of a file: existence, kind, then the hash
// when both have one, else size and modification time.
func TestFileFactSame(t *testing.T) {
	at := time.Unix(100, 0)
	file := veto.FileFact{Path: "/a", Exists: true, Size: 3, Hash: "h", ModTime: at}
	for _, tc := range []struct {
		name string
		g    veto.FileFact
		same bool
	}{
		{"identical", file, true},
		{"other-path-same-content", veto.FileFact{Path: "/b", Exists: true, Size: 3, Hash: "h"}, true},
		{"other-hash", veto.FileFact{Exists: true, Size: 3, Hash: "g", ModTime: at}, false},
		{"other-size", veto.FileFact{Exists: true, Size: 4, Hash: "h", ModTime: at}, false},
		{"no-hash-same-time", veto.FileFact{Exists: true, Size: 3, ModTime: at}, true},
		{"no-hash-other-time", veto.FileFact{Exists: true, Size: 3, ModTime: at.Add(1)}, false},
		{"gone", veto.FileFact{}, false},
		{"a-directory", veto.FileFact{Exists: true, Dir: true}, false},
	} {
		if got := file.Same(tc.g); got != tc.same {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.same)
		}
	}
	empty := veto.FileFact{Exists: true, ModTime: at}
	if (veto.FileFact{}).Same(empty) || empty.Same(veto.FileFact{Exists: true, Dir: true, ModTime: at}) ||
		(veto.FileFact{Exists: true, Dir: true, ModTime: at}).Same(empty) {
		t.Error("a missing file, an empty file and a directory are the same")
	}
	if !(veto.FileFact{}).Same(veto.FileFact{Size: 9}) || !(veto.FileFact{Exists: true, Dir: true}).Same(veto.FileFact{Exists: true, Dir: true, Size: 9}) {
		t.Error("two missing files, or two directories, differ")
	}
}

// ProbeAgain asks a Reprober with what is known, any other probe afresh;
// a decision's probe records what it saw once per path, up to its bound.
func TestProbeAgainAndTheDecisionsProbe(t *testing.T) {
	known := veto.FileFact{Path: "/a", Exists: true, Hash: "k"}
	plain := &mapProbe{facts: map[string]veto.FileFact{"/a": {Exists: true, Hash: "live"}}}
	if f, _ := veto.ProbeAgain(ctx, plain, "/a", known); f.Hash != "live" {
		t.Errorf("a plain probe: %+v", f)
	}
	if f, _ := veto.ProbeAgain(ctx, reprober{plain}, "/a", known); f.Hash != "k" || plain.looks[len(plain.looks)-1] != "again:/a" {
		t.Errorf("a reprober: %+v %v", f, plain.looks)
	}

	var looked []veto.FileFact
	asks := ruleOf("asks", veto.Needs{}, func(ctx context.Context, in *veto.Input) (veto.Decision, error) {
		looked = nil
		for _, p := range in.Call.Args["paths"].([]any) {
			f, err := veto.ProbeAgain(ctx, in.Probe, p.(string), known)
			if err != nil {
				return veto.Deny("probe_failed", "The probe failed."), nil
			}
			looked = append(looked, f)
		}
		return veto.Allow(), nil
	})
	probe := &mapProbe{facts: map[string]veto.FileFact{"/a": {Exists: true, Hash: "1"}, "/b": {Exists: true, Hash: "2"}}}
	f := newFixture(t, veto.Config{Probe: reprober{probe}, Rules: []veto.Rule{asks}})
	c := call("Read", map[string]any{"paths": []any{"/a", "/b", "/a"}})
	if v := f.g.Decide(ctx, c); !v.Allowed {
		t.Fatalf("%+v", v)
	}
	if len(looked) != 3 || looked[0].Path != "/a" || looked[2] != looked[0] || looked[1].Path != "/b" {
		t.Fatalf("looked %+v", looked)
	}
	if !slices.Equal(probe.looks, []string{"again:/a", "again:/b"}) {
		t.Fatalf("the probe was asked %v; a path is looked at once per decision", probe.looks)
	}
	var probed []string
	for _, e := range f.events(t, c.Run.Ref) {
		if e.Kind == veto.EventProbe {
			probed = append(probed, e.Fact.Path)
		}
	}
	if !slices.Equal(probed, []string{"/a", "/b"}) {
		t.Fatalf("probe events %v", probed)
	}
	// Past the bound, a probe fails.
	var many []any
	for i := range 65 {
		many = append(many, "/p"+itoa(i))
	}
	if v := f.g.Decide(ctx, call("Read", map[string]any{"paths": many})); v.Allowed || v.Reason != "probe_failed" {
		t.Fatalf("65 probes: %+v", v)
	}
	if v := f.g.Decide(ctx, call("Read", map[string]any{"paths": many[:64]})); !v.Allowed {
		t.Fatalf("64 probes: %+v", v)
	}
	// Without a probe, a rule that asks fails closed.
	g := newFixture(t, veto.Config{Rules: []veto.Rule{asks}})
	if v := g.g.Decide(ctx, call("Read", map[string]any{"paths": []any{"/a"}})); v.Allowed {
		t.Fatal("a probe answered without one configured")
	}
	if g.g.Descriptor("Read") != nil {
		t.Error("a descriptor for an undeclared tool")
	}
	h := newFixture(t, veto.Config{Tools: []veto.Descriptor{{Name: "Read", Caps: veto.CapReads}}})
	if d := h.g.Descriptor("Read"); d == nil || !d.Has(veto.CapReads) {
		t.Errorf("descriptor %+v", d)
	}
}
