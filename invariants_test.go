package veto_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInvariantsArePinned holds docs/invariants.md to the code: every test
// it names exists, every id is listed once, and every test whose comment
// claims an invariant (a line "// E12") is the one listed for it.
func TestInvariantsArePinned(t *testing.T) {
	doc, err := os.ReadFile("docs/invariants.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| (E[0-9]+) +\\|.*\\| `(Test[A-Za-z0-9_]+)` \\|$")
	listed := map[string]string{} // id → test
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := listed[m[1]]; dup {
			t.Errorf("invariant %s is listed twice", m[1])
		}
		listed[m[1]] = m[2]
	}
	if len(listed) < 21 {
		t.Fatalf("docs/invariants.md lists %d invariants; the table did not parse", len(listed))
	}

	tests := map[string]string{}  // test name → file
	claims := map[string]string{} // id → test whose doc comment names it
	claim := regexp.MustCompile(`^E[0-9]+$`)
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			tests[fd.Name.Name] = path
			if fd.Doc != nil {
				for _, c := range fd.Doc.List {
					if id := strings.TrimSpace(strings.TrimPrefix(c.Text, "//")); claim.MatchString(id) {
						if prev, dup := claims[id]; dup {
							t.Errorf("%s is claimed by both %s and %s", id, prev, fd.Name.Name)
						}
						claims[id] = fd.Name.Name
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, name := range listed {
		if _, ok := tests[name]; !ok {
			t.Errorf("docs/invariants.md pins %s to %s, which does not exist", id, name)
		}
		if claims[id] != name {
			t.Errorf("docs/invariants.md pins %s to %s, but the test marked // %s is %q", id, name, id, claims[id])
		}
	}
	for id, name := range claims {
		if _, ok := listed[id]; !ok {
			t.Errorf("%s claims invariant %s, which docs/invariants.md does not list", name, id)
		}
	}
}
