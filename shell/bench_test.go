package shell_test

import (
	"os"
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
	"mvdan.cc/sh/v3/syntax"
)

// typical is an 80-character command of the kind agents send all day.
const typical = `git add -A && git commit -m "fix: handle empty input" && go test ./... 2>&1 | wc`

func BenchmarkAnalyzeTypical(b *testing.B) {
	if len(typical) != 80 {
		b.Fatalf("typical is %d bytes", len(typical))
	}
	b.ReportAllocs()
	for b.Loop() {
		shell.Analyze(typical, env)
	}
}

// script4K is testdata/deploy.sh, a build-and-deploy script (functions,
// loops, pipes, substitutions, redirections, a here-document), repeated
// to 4096 bytes. rules/command decides the same script through the gate.
var script4K = func() string {
	raw, err := os.ReadFile("testdata/deploy.sh")
	if err != nil {
		panic(err)
	}
	block := string(raw)
	var b strings.Builder
	for b.Len() < 4096-len(block) {
		b.WriteString(block)
	}
	for b.Len() < 4096 {
		b.WriteString("true\n")
	}
	return b.String()[:4096]
}()

func BenchmarkAnalyze4KScript(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		shell.Analyze(script4K, env)
	}
}

// BenchmarkParse4KScript is the floor under BenchmarkAnalyze4KScript:
// parsing alone, with a parser reused as Analyze reuses its parsers.
func BenchmarkParse4KScript(b *testing.B) {
	b.ReportAllocs()
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for b.Loop() {
		if _, err := p.Parse(strings.NewReader(script4K), ""); err != nil {
			b.Fatal(err)
		}
	}
}
