package rules_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
	_ "github.com/vetohq/veto/rules"
)

var update = flag.Bool("update", false, "rewrite the reason-code table in docs/rules.md")

const module = "github.com/vetohq/veto"

// goList runs go list in the module's root.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return string(out)
}

// TestNoRulePackageImportsAnother: a rule family reaches another only
// through the building blocks (rule.Build, egress, toolpath, ...), never
// by importing it.
func TestNoRulePackageImportsAnother(t *testing.T) {
	out := goList(t, "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"/rules/...")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if pkg == module+"/rules" {
			continue // links every family, by design
		}
		n++
		for _, dep := range fields[1:] {
			if strings.HasPrefix(dep, module+"/rules/") && dep != pkg {
				t.Errorf("%s depends on %s: families share building blocks, not each other", pkg, dep)
			}
		}
	}
	if n < 4 {
		t.Fatalf("found %d rule packages, want the four families at least", n)
	}
}

// adapterDirs are the packages that speak a client's protocol: the
// packages that import agent (and agent itself), the hook packages and
// veto-hook.
func adapterDirs(t *testing.T) []string {
	out := goList(t, "-f", "{{.Dir}} {{.ImportPath}} {{join .Imports \" \"}}", "./...")
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		dir, pkg, imports := f[0], f[1], f[2:]
		adapter := pkg == module+"/agent" || pkg == module+"/clients" || pkg == module+"/hook" || pkg == module+"/hook/wire" || pkg == module+"/cmd/veto-hook"
		for _, imp := range imports {
			if imp == module+"/agent" && pkg != module+"/cli" {
				adapter = true
			}
		}
		if adapter {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// TestAdaptersHoldNoRuleID: what a denial shows comes from the rule's
// declaration, so no adapter names a rule (or a family's id prefix).
func TestAdaptersHoldNoRuleID(t *testing.T) {
	ids := rule.IDs()
	prefixes := map[string]bool{}
	for _, id := range ids {
		prefixes[id[:strings.IndexByte(id, '.')+1]] = true
	}
	dirs := adapterDirs(t)
	if len(dirs) < 7 {
		t.Fatalf("found %d adapter packages: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				for _, id := range ids {
					if strings.Contains(s, id) {
						t.Errorf("%s holds the rule id %s", file, id)
					}
				}
				for p := range prefixes {
					if strings.HasPrefix(s, p) {
						t.Errorf("%s matches rule ids by their prefix %q", file, p)
					}
				}
				return true
			})
		}
	}
}

// engineReasons are the reason codes the gate itself gives.
var engineReasons = []string{veto.ReasonBoundsExceeded, veto.ReasonFloorMismatch, veto.ReasonToolDenied,
	veto.ReasonTargetAmbiguous, veto.ReasonTargetUnresolvable, veto.ReasonTargetUnknown, veto.ReasonHistoryIncomplete,
	veto.ReasonRuleFailed, veto.ReasonPatchFailed, veto.ReasonStateUnavailable, veto.ReasonInputRejected,
	veto.ReasonCancelled, veto.ReasonInternal, veto.ReasonApprovalRefused}

const (
	tableBegin = "<!-- reason codes: generated from the rule registry by go test ./rules -update; do not edit -->"
	tableEnd   = "<!-- end of reason codes -->"
)

// reasonTable is docs/rules.md's table of every rule and reason code.
func reasonTable() string {
	var b strings.Builder
	b.WriteString(tableBegin + "\n\n| rule | reason | risk | message |\n|---|---|---|---|\n")
	for _, f := range rule.Families() {
		for _, r := range f.Rules {
			info := r.RuleInfo()
			for _, rs := range r.Reasons {
				msg := strings.ReplaceAll(rs.Message, "%s", "…")
				msg = strings.ReplaceAll(strings.ReplaceAll(msg, "%d", "N"), "%q", "…")
				fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", r.ID, rs.Code, info.Risk.Of(rs.Code), strings.ReplaceAll(msg, "|", "\\|"))
			}
		}
	}
	b.WriteString("\nEvery rule may also deny with the engine's codes: ")
	for i, c := range engineReasons {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + c + "`")
	}
	b.WriteString(" (see [engine.md](engine.md)).\n\n" + tableEnd)
	return b.String()
}

// TestReasonCodesDocumented: docs/rules.md lists every reason code a
// built-in rule can give, with its rule, risk and message, as the
// registry declares them.
func TestReasonCodesDocumented(t *testing.T) {
	const path = "../docs/rules.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(tableBegin)), bytes.Index(doc, []byte(tableEnd))
	want := reasonTable()
	if *update {
		if i < 0 || j < i {
			doc = append(doc, []byte("\n## Reason codes\n\n"+want+"\n")...)
		} else {
			doc = append(append(doc[:i:i], want...), doc[j+len(tableEnd):]...)
		}
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if i < 0 || j < i || string(doc[i:j+len(tableEnd)]) != want {
		t.Fatalf("docs/rules.md's reason-code table is not what the registry declares; go test ./rules -update rewrites it")
	}
	for _, f := range rule.Families() {
		for _, r := range f.Rules {
			for _, rs := range r.Reasons {
				if !bytes.Contains(doc, []byte("`"+rs.Code+"`")) {
					t.Errorf("docs/rules.md does not name %s's reason %s", r.ID, rs.Code)
				}
			}
		}
	}
}
