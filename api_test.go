package veto_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update", false, "rewrite api/veto.txt from the package's exported surface")

const apiFile = "api/veto.txt"

// TestAPISnapshot holds the root package's exported surface to
// api/veto.txt: every exported constant (with its value), variable,
// function, type, struct field and method, with its type or signature. A
// change to the surface fails here until the file is regenerated, so every
// addition and removal shows in review.
func TestAPISnapshot(t *testing.T) {
	got, err := apiSurface(".")
	if err != nil {
		t.Fatal(err)
	}
	if *updateAPI {
		if err := os.WriteFile(apiFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(apiFile)
	if err != nil {
		t.Fatalf("%v: generate it with go test -run TestAPISnapshot -update .", err)
	}
	if got == string(want) {
		return
	}
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	var diff []string
	for _, l := range wantLines {
		if l != "" && !slices.Contains(gotLines, l) {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range gotLines {
		if l != "" && !slices.Contains(wantLines, l) {
			diff = append(diff, "+ "+l)
		}
	}
	t.Fatalf("the exported surface differs from %s (- gone, + new):\n%s\nif the change is meant, regenerate it with go test -run TestAPISnapshot -update . and review the diff",
		apiFile, strings.Join(diff, "\n"))
}

// apiSurface type-checks the package in dir (its non-test files, under
// the build constraints in force) and lists its exported surface, one
// identifier a line, sorted.
func apiSurface(dir string) (string, error) {
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return "", err
		}
		files = append(files, f)
	}
	// From source: the root imports the glob building block, whose export
	// data the gc importer does not find outside the build cache.
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(bp.ImportPath, fset, files, nil)
	if err != nil {
		return "", err
	}
	qual := types.RelativeTo(pkg)
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	methods := func(recv string, t types.Type) {
		ms := types.NewMethodSet(t)
		for i := range ms.Len() {
			f := ms.At(i).Obj().(*types.Func)
			if !f.Exported() {
				continue
			}
			add("method %s %s%s", recv, f.Name(), signature(f.Signature(), qual))
		}
	}
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			add("const %s %s = %s", name, types.TypeString(obj.Type(), qual), obj.Val().ExactString())
		case *types.Var:
			add("var %s %s", name, types.TypeString(obj.Type(), qual))
		case *types.Func:
			add("func %s%s", name, signature(obj.Signature(), qual))
		case *types.TypeName:
			if obj.IsAlias() {
				add("type %s = %s", name, types.TypeString(obj.Type(), qual))
				continue
			}
			switch u := obj.Type().Underlying().(type) {
			case *types.Struct:
				add("type %s struct", name)
				for i := range u.NumFields() {
					if f := u.Field(i); f.Exported() {
						kind := "field"
						if f.Embedded() {
							kind = "embedded"
						}
						add("%s %s.%s %s", kind, name, f.Name(), types.TypeString(f.Type(), qual))
					}
				}
			case *types.Interface:
				add("type %s interface", name)
				methods(name, obj.Type())
				continue
			default:
				add("type %s %s", name, types.TypeString(u, qual))
			}
			methods("("+name+")", obj.Type())
			for _, l := range methodsOnlyOnPointer(obj.Type(), qual) {
				add("method (*%s) %s", name, l)
			}
		}
	}
	header := "# The exported surface of package veto, one identifier a line.\n" +
		"# Regenerate with go test -run TestAPISnapshot -update . and review the diff.\n"
	return header + strings.Join(lines, "\n") + "\n", nil
}

// methodsOnlyOnPointer lists the exported methods of *T that T lacks.
func methodsOnlyOnPointer(t types.Type, qual types.Qualifier) []string {
	val := types.NewMethodSet(t)
	ptr := types.NewMethodSet(types.NewPointer(t))
	var out []string
	for i := range ptr.Len() {
		f := ptr.At(i).Obj().(*types.Func)
		if !f.Exported() || val.Lookup(f.Pkg(), f.Name()) != nil {
			continue
		}
		out = append(out, f.Name()+signature(f.Signature(), qual))
	}
	return out
}

// signature is sig's parameter and result types without their names, which
// a caller never sees: renaming a parameter is no change of the surface.
func signature(sig *types.Signature, qual types.Qualifier) string {
	list := func(t *types.Tuple, variadic bool) string {
		var parts []string
		for i := range t.Len() {
			ty := t.At(i).Type()
			if variadic && i == t.Len()-1 {
				parts = append(parts, "..."+types.TypeString(ty.(*types.Slice).Elem(), qual))
				continue
			}
			parts = append(parts, types.TypeString(ty, qual))
		}
		return strings.Join(parts, ", ")
	}
	s := "(" + list(sig.Params(), sig.Variadic()) + ")"
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		s += " " + list(r, false)
	default:
		s += " (" + list(r, false) + ")"
	}
	return s
}
