package files

import (
	"context"
	"io"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// installScriptKey matches a package.json script that package managers run
// on their own when the package, or a dependency on it, is installed:
// "name": "command", as JSON writes it.
var installScriptKey = regexp.MustCompile(`"(preinstall|install|postinstall|preprepare|prepare|postprepare|prepublish)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// installScripts returns the install-time scripts text holds, as
// "name\x00command" pairs (JSON's \u escapes decoded first).
func installScripts(text string) map[string]bool {
	if strings.Contains(text, `\u`) || strings.Contains(text, `\U`) {
		text = decodeEscapes(text)
	}
	out := map[string]bool{}
	for _, m := range installScriptKey.FindAllStringSubmatch(text, -1) {
		out[m[1]+"\x00"+m[2]] = true
	}
	return out
}

// maxManifest bounds how much of a package.json on disk is read.
const maxManifest = 1 << 20

// installScript denies a write of package.json through a file tool whose
// content adds an install-time script (preinstall, install, postinstall,
// prepare, …) that the file on disk does not already hold with the same
// command. A command's writes of package.json are judged by shell.install
// (npm pkg set, jq); content veto cannot see is not refused here.
type installScript struct{ s *Set }

func (r *installScript) Info() veto.RuleInfo { return InstallScript.RuleInfo() }

func (r *installScript) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.err != nil || w.unknown || w.command || w.param == "" || !isManifest(w.path) {
			continue
		}
		had := installScripts(readHead(w.path.Real))
		for _, c := range contentOf(in) {
			for s := range installScripts(c) {
				if !had[s] {
					return installScriptAdded.Deny(w.what()), nil
				}
			}
		}
	}
	return veto.Allow(), nil
}

func isManifest(p toolpath.Path) bool {
	return p.Any(func(form string) bool { return path.Base(form) == "package.json" })
}

// readHead returns up to maxManifest bytes of a file, "" when it cannot be
// read.
func readHead(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxManifest))
	return string(b)
}
