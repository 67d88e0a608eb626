package shell_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
)

// TestReasonsListsEveryConstant: every Reason constant declared in
// reasons.go is in Reasons() exactly once, with a rule and a meaning, and
// nothing else is.
func TestReasonsListsEveryConstant(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "reasons.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Reason" {
				continue
			}
			for _, v := range vs.Values {
				lit, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				declared[lit] = true
			}
		}
	}
	listed := map[shell.Reason]bool{}
	for _, r := range shell.Reasons() {
		if listed[r.Reason] {
			t.Errorf("%s listed twice", r.Reason)
		}
		listed[r.Reason] = true
		if !declared[string(r.Reason)] {
			t.Errorf("%s listed but not declared as a Reason constant", r.Reason)
		}
		if r.Rule != shell.RuleAnalyzer && r.Rule != shell.RuleEnvDump && r.Rule != shell.RulePrivilege && r.Rule != shell.RuleInjection {
			t.Errorf("%s: rule %q", r.Reason, r.Rule)
		}
		if r.Meaning == "" || strings.Contains(r.Meaning, "\n") {
			t.Errorf("%s: meaning %q is not one line", r.Reason, r.Meaning)
		}
	}
	for d := range declared {
		if !listed[shell.Reason(d)] {
			t.Errorf("%s declared but missing from Reasons()", d)
		}
	}
	// The slice is the caller's.
	rs := shell.Reasons()
	rs[0].Meaning = "changed"
	if shell.Reasons()[0].Meaning == "changed" {
		t.Error("Reasons() shares its slice")
	}
}

// TestFindingsUseConstants: no finding is made with a literal rule or
// reason; each names a constant of reasons.go.
func TestFindingsUseConstants(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "reasons.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "finding" && sel.Sel.Name != "find") {
					return true
				}
				args := n.Args
				if sel.Sel.Name == "finding" {
					args = args[:1]
				} else {
					args = args[:2]
				}
				for _, a := range args {
					if _, ok := a.(*ast.Ident); !ok {
						t.Errorf("%s: %s called with %T, want a constant of reasons.go", fset.Position(a.Pos()), sel.Sel.Name, a)
					}
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Finding" {
					for _, e := range n.Elts {
						kv, ok := e.(*ast.KeyValueExpr)
						if !ok {
							t.Errorf("%s: Finding without keys", fset.Position(n.Pos()))
							continue
						}
						if k := kv.Key.(*ast.Ident).Name; (k == "Rule" || k == "Reason") && isStringLit(kv.Value) {
							t.Errorf("%s: Finding's %s is a literal", fset.Position(kv.Pos()), k)
						}
					}
				}
			case *ast.BinaryExpr:
				// f.Reason == "…" would compare with a literal.
				for _, side := range []ast.Expr{n.X, n.Y} {
					if s, ok := side.(*ast.SelectorExpr); ok && (s.Sel.Name == "Reason" || s.Sel.Name == "Rule") {
						if isStringLit(n.X) || isStringLit(n.Y) {
							t.Errorf("%s: %s compared with a literal", fset.Position(n.Pos()), s.Sel.Name)
						}
					}
				}
			}
			return true
		})
	}
}

func isStringLit(e ast.Expr) bool {
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.STRING
}

// TestReasonsDocumented: every reason is in docs/shell.md's table, in
// backquotes.
func TestReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/shell.md")
	if err != nil {
		t.Skipf("docs not beside the package: %v", err)
	}
	for _, r := range shell.Reasons() {
		if !strings.Contains(string(doc), "`"+string(r.Reason)+"`") {
			t.Errorf("%s is not documented in docs/shell.md", r.Reason)
		}
		if !strings.Contains(string(doc), "`"+string(r.Rule)+"`") {
			t.Errorf("rule %s is not documented in docs/shell.md", r.Rule)
		}
	}
}

// knownReason reports whether a finding carries a listed rule and reason.
func knownReason(f shell.Finding) bool {
	for _, r := range shell.Reasons() {
		if r.Reason == f.Reason && r.Rule == f.Rule {
			return true
		}
	}
	return false
}
