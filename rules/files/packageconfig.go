package files

import (
	"context"
	"io"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
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

// packageConfig denies a write through a file tool of a package.json whose
// content adds an install-time script (preinstall, install, postinstall,
// prepare, …) that the file on disk does not already hold with the same
// command, and of a package manager's config file whose content points at
// a registry that is neither the ecosystem's nor on the egress allow-list
// and that the file did not already name. A command's writes of these
// files are judged by shell.install (npm pkg set, jq, a redirection's
// text); content veto cannot see is not refused here.
type packageConfig struct{ s *Set }

func (r *packageConfig) Info() veto.RuleInfo { return PackageConfig.RuleInfo() }

func (r *packageConfig) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.err != nil || w.unknown || w.command || w.param == "" {
			continue
		}
		switch {
		case isManifest(w.path):
			had := installScripts(readHead(w.path.Real))
			for _, c := range contentOf(in) {
				for s := range installScripts(c) {
					if !had[s] {
						return installScriptAdded.Deny(w.what()), nil
					}
				}
			}
		case isRegistryConfig(w.path):
			had := map[string]bool{}
			for _, u := range registryURLs(readHead(w.path.Real)) {
				had[u] = true
			}
			for _, c := range contentOf(in) {
				for _, u := range registryURLs(c) {
					if had[u] {
						continue
					}
					ok, err := r.s.egress.Lists(ctx, in, u, true)
					if err != nil {
						return veto.Decision{}, err
					}
					if !ok {
						return registryRedirect.Deny(w.what()), nil
					}
				}
			}
		}
	}
	return veto.Allow(), nil
}

// registryConfigs are the names of package managers' config files that can
// set a registry or an index.
var registryConfigs = map[string]bool{".npmrc": true, "npmrc": true, ".yarnrc": true, ".yarnrc.yml": true, "pip.conf": true,
	"pip.ini": true, "uv.toml": true, "bunfig.toml": true, ".bunfig.toml": true}

func isRegistryConfig(p toolpath.Path) bool {
	return p.Any(func(form string) bool { return registryConfigs[path.Base(form)] })
}

// registryURLs returns the registries and indexes text sets, one per line
// whose key names one (registry, @scope:registry, npmRegistryServer,
// index-url, extra-index-url, find-links, url, index): the URL it holds,
// or "" when the line holds none veto can read (a variable).
func registryURLs(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		end := strings.IndexByte(l, '=') // ini and toml; yaml and .yarnrc have none
		if end < 0 {
			end = strings.IndexAny(l, ": \t")
		}
		if end <= 0 {
			continue
		}
		key := strings.ToLower(strings.Trim(strings.TrimSpace(l[:end]), `"'`))
		if !strings.HasSuffix(key, "registry") && key != "npmregistryserver" && !strings.HasSuffix(key, "index-url") &&
			key != "find-links" && key != "url" && key != "index" {
			continue
		}
		urls := egress.Embedded(l[end:])
		if len(urls) == 0 {
			out = append(out, "")
			continue
		}
		out = append(out, urls...)
	}
	return out
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
