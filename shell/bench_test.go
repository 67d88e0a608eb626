package shell_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/shell"
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

// block is a build-and-deploy script: functions, loops, pipes,
// substitutions, redirections, a here-document.
const block = "#!/bin/bash\n" +
	"set -euo pipefail\n" +
	"log() { echo \"[$(date +%H:%M:%S)] $*\" >&2; }\n" +
	"ROOT=\"$(git rev-parse --show-toplevel)\"\n" +
	"cd \"$ROOT\"\n" +
	"for pkg in $(go list ./... | grep -v /vendor/); do\n" +
	"  log \"testing $pkg\"\n" +
	"  go test -count=1 \"$pkg\" 2>&1 | tee -a test.log || { log \"failed: $pkg\"; exit 1; }\n" +
	"done\n" +
	"if [ -f package.json ]; then\n" +
	"  npm ci --silent && npm run build > build.log 2>&1\n" +
	"fi\n" +
	"cat > dist/VERSION <<VERSION\n" +
	"$(git describe --tags --always) built on $(hostname)\n" +
	"VERSION\n" +
	"find dist -name '*.map' -exec rm {} \\;\n" +
	"tar czf /tmp/dist.tgz dist && sha256sum /tmp/dist.tgz | awk '{print $1}' > dist.sha256\n"

// script4K is block repeated to 4096 bytes.
var script4K = func() string {
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
