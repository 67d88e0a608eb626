package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Mutant is one mutated copy of one file.
type Mutant struct {
	File   string // absolute path of the file it replaces
	Line   int
	Col    int
	Kind   string // short name of the mutation
	Desc   string // file:line: what was changed
	Source []byte // the whole mutated file
}

// ID names a mutant stably across runs: base name, line, column and kind.
func (m Mutant) ID() string {
	return fmt.Sprintf("%s:%d:%d:%s", filepath.Base(m.File), m.Line, m.Col, m.Kind)
}

type edit struct {
	start, end int // byte offsets
	text       string
}

func apply(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.start:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	return out
}

// swapped is the conditional-boundary, negated-condition and logical
// operator mutations.
var swapped = map[token.Token]token.Token{
	token.LSS:  token.LEQ,
	token.LEQ:  token.LSS,
	token.GTR:  token.GEQ,
	token.GEQ:  token.GTR,
	token.EQL:  token.NEQ,
	token.NEQ:  token.EQL,
	token.LAND: token.LOR,
	token.LOR:  token.LAND,
}

func collect(dir string, only *regexp.Regexp) ([]Mutant, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var all []Mutant
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || (only != nil && !only.MatchString(base)) {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, base); err != nil || !ok {
			continue // not built here (another OS, a build tag): its mutants would all survive
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms, err := fileMutants(name, src)
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}

func fileMutants(name string, src []byte) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	var ms []Mutant
	add := func(at token.Pos, kind, what string, edits ...edit) {
		p := fset.Position(at)
		ms = append(ms, Mutant{
			File: name, Line: p.Line, Col: p.Column, Kind: kind,
			Desc:   fmt.Sprintf("%s:%d: %s", filepath.Base(name), p.Line, what),
			Source: apply(src, edits),
		})
	}
	snippet := func(n ast.Node) string {
		s := string(src[off(n.Pos()):off(n.End())])
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i] + " …"
		}
		if len(s) > 70 {
			s = s[:70] + "…"
		}
		return s
	}

	// Function bodies' last statements: removing a final return is no
	// mutant (it does not compile, or it changes nothing).
	last := map[ast.Stmt]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch fn := n.(type) {
		case *ast.FuncDecl:
			body = fn.Body
		case *ast.FuncLit:
			body = fn.Body
		}
		if body != nil && len(body.List) > 0 {
			last[body.List[len(body.List)-1]] = true
		}
		return true
	})

	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if to, ok := swapped[x.Op]; ok {
				at := off(x.OpPos)
				add(x.OpPos, "op", fmt.Sprintf("%s → %s in %s", x.Op, to, snippet(x)),
					edit{at, at + len(x.Op.String()), to.String()})
			}
		case *ast.Ident:
			if x.Name == "true" || x.Name == "false" {
				to := map[string]string{"true": "false", "false": "true"}[x.Name]
				add(x.Pos(), "bool", x.Name+" → "+to, edit{off(x.Pos()), off(x.End()), to})
			}
		case *ast.IfStmt:
			if b, ok := x.Cond.(*ast.BinaryExpr); ok && swapped[b.Op] != 0 && b.Op != token.LAND && b.Op != token.LOR {
				break // the operator swap covers it
			}
			add(x.Cond.Pos(), "negate", "if "+snippet(x.Cond)+" → if !(…)",
				edit{off(x.Cond.Pos()), off(x.Cond.Pos()), "!("},
				edit{off(x.Cond.End()), off(x.Cond.End()), ")"})
		case *ast.BlockStmt:
			for _, s := range x.List {
				if removable(s) && !last[s] {
					add(s.Pos(), "drop", "remove `"+snippet(s)+"`", edit{off(s.Pos()), off(s.End()), ""})
				}
			}
		case *ast.CaseClause:
			for _, s := range x.Body {
				if removable(s) {
					add(s.Pos(), "drop", "remove `"+snippet(s)+"`", edit{off(s.Pos()), off(s.End()), ""})
				}
			}
		case *ast.GenDecl:
			if x.Tok == token.CONST {
				constSwaps(x, off, add)
			}
		}
		return true
	})
	return ms, nil
}

// removable is a statement whose removal is a plausible slip: a return
// (of an error, typically), a call, an assignment (an append, a flag), an
// increment, a break or continue.
func removable(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ReturnStmt, *ast.ExprStmt, *ast.IncDecStmt, *ast.BranchStmt:
		return true
	case *ast.AssignStmt:
		return x.Tok != token.DEFINE
	}
	return false
}

// constSwaps swaps the string values of neighbouring constants of one
// group: two enum-like constants that trade their spelling.
func constSwaps(d *ast.GenDecl, off func(token.Pos) int, add func(token.Pos, string, string, ...edit)) {
	type lit struct {
		name string
		v    *ast.BasicLit
	}
	var lits []lit
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		if len(vs.Names) != 1 || len(vs.Values) != 1 {
			continue
		}
		if b, ok := vs.Values[0].(*ast.BasicLit); ok && b.Kind == token.STRING {
			lits = append(lits, lit{vs.Names[0].Name, b})
		}
	}
	for i := 0; i+1 < len(lits); i++ {
		a, b := lits[i], lits[i+1]
		if a.v.Value == b.v.Value {
			continue
		}
		add(a.v.Pos(), "swap", fmt.Sprintf("%s and %s trade values %s, %s", a.name, b.name, a.v.Value, b.v.Value),
			edit{off(a.v.Pos()), off(a.v.End()), b.v.Value},
			edit{off(b.v.Pos()), off(b.v.End()), a.v.Value})
	}
}
