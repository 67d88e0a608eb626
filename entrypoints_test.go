package veto_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

// E22
func TestEveryEntryPointUsesTheOneDecision(t *testing.T) {
	// Behaviour: each entry point reaches the rules through the same stages.
	var seen []string
	witness := ruleOf("entry.witness", veto.Needs{}, func(_ context.Context, in *veto.Input) (veto.Decision, error) {
		seen = append(seen, in.Call.ID)
		return veto.Allow(), nil
	})
	f := newFixture(t, veto.Config{Rules: []veto.Rule{witness}, Tools: []veto.Descriptor{
		{Name: "ask", Params: map[string]veto.Role{"answer": veto.RoleInput}},
	}})
	run := veto.Run{Ref: "e22", Fresh: true}
	f.g.Decide(ctx, inRun(run, "library", "Read", nil))
	sa, err := f.g.Suspend(ctx, inRun(run, "approval", "Bash", nil), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.g.ResumeApproval(ctx, sa)
	si, err := f.g.Suspend(ctx, inRun(run, "input", "ask", nil), veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.g.ResumeInput(ctx, si, map[string]any{"answer": "yes"})
	if want := []string{"library", "approval", "input"}; !slices.Equal(seen, want) {
		t.Fatalf("rules saw %v, want %v", seen, want)
	}
	var kinds []veto.EventKind
	for _, e := range f.events(t, "e22") {
		kinds = append(kinds, e.Kind)
	}
	want := []veto.EventKind{veto.EventRunStarted, veto.EventAllowed, veto.EventSuspended, veto.EventAllowed, veto.EventSuspended, veto.EventAllowed}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}

	// Every path meets the bounds stage first: a call past a bound is
	// refused the same way by the library and the input resume (veto
	// check's refusal of it is cli's TestCheckGoesThroughTheOneDecision,
	// so that these tests link nothing above the root).
	deep := map[string]any{}
	for range 40 {
		deep = map[string]any{"n": deep}
	}
	byLib := f.g.Decide(ctx, inRun(run, "deep-lib", "Read", deep))
	sb, err := f.g.Suspend(ctx, inRun(run, "deep-resume", "ask", nil), veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	byInput := f.g.ResumeInput(ctx, sb, map[string]any{"answer": deep}).Verdict
	for name, v := range map[string]veto.Verdict{"library": byLib, "input resume": byInput} {
		if v.Allowed || v.Stage != veto.StageBounds || v.Reason != veto.ReasonBoundsExceeded {
			t.Errorf("%s: stage %s reason %s, want bounds bounds_exceeded", name, v.Stage, v.Reason)
		}
	}

	// The refusals of a resume (input that does not match, a suspension of
	// the wrong kind) go through the same stages: the bounds come first, and
	// the refusal is recorded as any decision is, on a store that has never
	// seen the run.
	long := map[string]any{"note": strings.Repeat("x", 100)}
	sInput, err := f.g.Suspend(ctx, inRun(run, "long-input", "ask", long), veto.AwaitInput, nil)
	if err != nil {
		t.Fatal(err)
	}
	sApproval, err := f.g.Suspend(ctx, inRun(run, "long-approval", "Bash", long), veto.AwaitApproval, nil)
	if err != nil {
		t.Fatal(err)
	}
	small := veto.DefaultLimits
	small.MaxString = 16
	bounded := newFixture(t, veto.Config{Limits: small, Tools: []veto.Descriptor{{Name: "ask", Params: map[string]veto.Role{"answer": veto.RoleInput}}}})
	for name, v := range map[string]veto.Verdict{
		"input-rejected":     bounded.g.ResumeInput(ctx, sInput, map[string]any{"wrong": 1}).Verdict,
		"wrong-kind":         bounded.g.ResumeApproval(ctx, sInput).Verdict,
		"input-for-approval": bounded.g.ResumeInput(ctx, sApproval, map[string]any{}).Verdict,
	} {
		if v.Allowed || v.Stage != veto.StageBounds || v.Reason != veto.ReasonBoundsExceeded {
			t.Errorf("%s past a bound: stage %s reason %s, want the bounds stage first", name, v.Stage, v.Reason)
		}
	}
	elsewhere := newFixture(t, veto.Config{Rules: []veto.Rule{witness}})
	for i, resume := range []func() veto.Resumed{
		func() veto.Resumed { return elsewhere.g.ResumeInput(ctx, si, map[string]any{"wrong": 1}) },
		func() veto.Resumed { return elsewhere.g.ResumeApproval(ctx, si) },
	} {
		res := resume()
		v := res.Verdict
		if res.Execute || v.Stage != veto.StageResume || v.Reason != veto.ReasonInputRejected {
			t.Fatalf("refused resume %d: %+v", i, v)
		}
		evs := elsewhere.events(t, "e22")
		last := evs[len(evs)-1]
		if evs[0].Kind != veto.EventRunStarted || last.Kind != veto.EventDenied || last.CallID != "input" ||
			last.Stage != veto.StageResume || last.Reason != veto.ReasonInputRejected || last.Seq != v.Seq {
			t.Fatalf("refused resume %d recorded as %+v (verdict seq %d)", i, evs, v.Seq)
		}
	}
	if n := strings.Count(elsewhere.log.String(), `"reason":"input_rejected"`); n != 2 {
		t.Fatalf("%d refused resumes logged, want 2:\n%s", n, elsewhere.log.String())
	}

	// Structure: the stages live in one function. evaluate is called only
	// by decide, the rules only by evaluate, and decide only by the entry
	// points.
	callers := callersIn(t, ".")
	for fn, want := range map[string][]string{
		"evaluate": {"decide"},
		"runRules": {"evaluate"},
		"decide":   {"Decide", "DryRun", "Explain", "resumed"},
		"resumed":  {"ResumeApproval", "ResumeInput"},
	} {
		got := callers[fn]
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s is called from %v, want only %v", fn, got, want)
		}
	}
}

// callersIn maps each function name called in the non-test files of dir to
// the names of the functions calling it.
func callersIn(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch fn := ce.Fun.(type) {
				case *ast.Ident:
					callee = fn.Name
				case *ast.SelectorExpr:
					callee = fn.Sel.Name
				}
				out[callee] = append(out[callee], fd.Name.Name)
				return true
			})
		}
	}
	return out
}
