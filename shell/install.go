package shell

// Installs: the sources and registries package managers install from
// when they are not plainly the ecosystem's registry.

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// installScripts are package.json's scripts that npm, pnpm, yarn and bun
// run on their own when the package (or a dependency on it) is installed.
var installScripts = []string{"preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare", "prepublish"}

func isInstallScript(name string) bool {
	for _, s := range installScripts {
		if name == s {
			return true
		}
	}
	return false
}

// pipSource records what one pip operand installs from: a URL or git
// remote (git+…, a PEP 508 direct reference "name @ URL"), or a path to
// a wheel, an archive or a directory.
func (w *walker) pipSource(c *cmd, x word) {
	if x.unknown {
		w.install(c, InstallSource, x)
		return
	}
	for _, v := range x.vals {
		if i := strings.Index(v, "://"); i >= 0 {
			j := strings.LastIndexAny(v[:i], " @")
			w.installValue(c, InstallSource, strings.TrimSpace(v[j+1:]))
			continue
		}
		if strings.HasPrefix(v, "git@") {
			w.installValue(c, InstallSource, v)
			continue
		}
		if localPackage(v) {
			w.installValue(c, InstallSource, v)
		}
	}
}

// localPackage reports whether an operand names a file or directory rather
// than a package: a path, or an archive's name.
func localPackage(v string) bool {
	if strings.HasPrefix(v, "file:") {
		return true
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, "~") || v == "." || v == ".." {
		return true
	}
	for _, ext := range []string{".whl", ".tar.gz", ".tgz", ".zip", ".gem", ".tar.bz2", ".tar"} {
		if strings.HasSuffix(v, ext) {
			return true
		}
	}
	return false
}

var pipSpec = optSpec{val: "ifcreIt", long: map[string]bool{"index-url": true, "extra-index-url": true, "find-links": true,
	"trusted-host": true, "requirement": true, "constraint": true, "proxy": true, "target": true, "index": true, "default-index": true,
	"editable": true, "python": true, "root": true, "prefix": true, "src": true, "upgrade-strategy": true, "platform": true,
	"python-version": true, "implementation": true, "abi": true, "progress-bar": true, "cache-dir": true, "log": true, "timeout": true,
	"retries": true, "exists-action": true, "cert": true, "client-cert": true, "report": true, "only-binary": true, "no-binary": true,
	"config-settings": true, "group": true, "extra": true, "with": true, "branch": true, "tag": true, "rev": true, "source": true,
	"optional": true, "dev-dependency": true, "package": true}}

// runPipInstall is pip, pip3, uv (pip install, add), pipx and poetry add:
// hosts as registryHosts records them, and the sources and indexes an
// install names.
func runPipInstall(w *walker, c *cmd) stage {
	registryPip(w, c)
	args := c.args
	if c.name == "uv" && len(args) > 0 && args[0].lit == "pip" {
		args = args[1:]
	}
	if len(args) == 0 || args[0].unknown {
		return stage{}
	}
	sub := args[0].lit
	if c.name == "pip" || c.name == "pip3" || pythonName(c.name) {
		if sub == "config" {
			pipConfig(w, c, args[1:])
			return stage{}
		}
	}
	switch sub {
	case "install", "add", "download", "wheel", "sync", "inject", "upgrade", "runpip":
	default:
		return stage{}
	}
	o := parseOpts(args[1:], pipSpec, false)
	for _, x := range o.all("i", "index-url", "extra-index-url", "f", "find-links", "index", "default-index") {
		w.install(c, InstallRedirect, x)
	}
	for _, x := range o.all("r", "requirement", "c", "constraint") {
		if x.unknown || strings.Contains(x.lit, "://") {
			w.install(c, InstallSource, x)
		}
	}
	for _, x := range o.all("e", "editable") {
		w.pipSource(c, x)
	}
	for _, x := range o.all("source") { // poetry add --source NAME: a configured source, by name
		_ = x
	}
	for _, x := range o.operands {
		w.pipSource(c, x)
	}
	return stage{}
}

var registryPip = registryHosts(optSpec{val: "ifcre", long: map[string]bool{"index-url": true, "extra-index-url": true, "find-links": true,
	"trusted-host": true, "requirement": true, "constraint": true, "proxy": true, "target": true, "index": true, "default-index": true}},
	"i", "index-url", "extra-index-url", "f", "find-links", "trusted-host", "proxy", "index", "default-index")

// pipConfig is pip config set KEY VALUE: an index key redirects pip.
func pipConfig(w *walker, c *cmd, args []word) {
	for len(args) > 0 && strings.HasPrefix(args[0].lit, "-") {
		args = args[1:] // --global, --user, --site
	}
	if len(args) < 3 || args[0].lit != "set" {
		return
	}
	key := strings.ToLower(args[1].lit)
	if args[1].unknown || strings.HasSuffix(key, "index-url") || strings.HasSuffix(key, "find-links") || strings.HasSuffix(key, ".index") {
		w.install(c, InstallRedirect, args[2])
	}
}

var npmSpec = optSpec{long: map[string]bool{"registry": true, "proxy": true, "https-proxy": true, "prefix": true, "tag": true,
	"workspace": true, "w": true, "filter": true, "cache": true, "userconfig": true, "globalconfig": true, "omit": true, "include": true,
	"install-strategy": true, "location": true}}

// runNpmInstall is npm, pnpm, yarn, bun's package commands and npx: the
// sources an install names, the registry it is given or set to, and
// install-time scripts set in package.json.
func runNpmInstall(w *walker, c *cmd) stage {
	runNpm(w, c)
	o := parseOpts(c.args, npmSpec, false)
	for _, x := range o.all("registry") {
		w.install(c, InstallRedirect, x)
	}
	ops := o.operands
	if c.name == "npx" {
		if len(ops) > 0 {
			w.npmSource(c, ops[0])
		}
		for _, x := range o.all("package", "p") {
			w.npmSource(c, x)
		}
		return stage{}
	}
	if len(ops) == 0 || ops[0].unknown {
		return stage{}
	}
	switch ops[0].lit {
	case "install", "i", "add", "a", "in", "ins", "inst", "insta", "instal", "isnt", "isntall", "update", "up", "upgrade", "link", "ln":
		for _, x := range ops[1:] {
			w.npmSource(c, x)
		}
	case "config", "c", "set":
		rest := ops[1:]
		if ops[0].lit != "set" {
			if len(rest) == 0 || rest[0].lit != "set" {
				return stage{}
			}
			rest = rest[1:]
		}
		w.npmConfigSet(c, rest)
	case "set-script":
		if len(ops) > 1 && (ops[1].unknown || isInstallScript(ops[1].lit)) {
			w.r.Installs = append(w.r.Installs, Install{Kind: InstallScript, Command: c.name, Segment: c.seg})
		}
	case "pkg":
		if len(ops) > 2 && ops[1].lit == "set" {
			for _, x := range ops[2:] {
				if x.unknown {
					continue // judged as package.json written, below
				}
				key, _, _ := strings.Cut(x.lit, "=")
				if k, ok := strings.CutPrefix(key, "scripts."); ok && isInstallScript(k) {
					w.r.Installs = append(w.r.Installs, Install{Kind: InstallScript, Command: c.name, Segment: c.seg})
				}
			}
		}
	}
	return stage{}
}

// npmConfigSet is npm, pnpm or yarn config set KEY VALUE (or KEY=VALUE):
// a registry key redirects installs.
func (w *walker) npmConfigSet(c *cmd, rest []word) {
	for i := 0; i < len(rest); i++ {
		x := rest[i]
		if x.unknown {
			continue
		}
		key, val, hasVal := strings.Cut(x.lit, "=")
		k := strings.ToLower(key)
		if !strings.HasSuffix(k, "registry") && k != "npmregistryserver" && !strings.HasSuffix(k, ":registry") {
			continue
		}
		if hasVal {
			w.installValue(c, InstallRedirect, val)
			continue
		}
		if i+1 < len(rest) {
			w.install(c, InstallRedirect, rest[i+1])
			i++
		}
	}
}

// npmSource records what one npm operand installs from, when it is not a
// package from the registry: a URL, a git remote, a hosted-git shorthand
// (github:user/repo, user/repo), a path or a tarball.
func (w *walker) npmSource(c *cmd, x word) {
	if x.unknown {
		return // a package name veto cannot see is fetched from the registry or judged by the egress rule
	}
	for _, v := range x.vals {
		if strings.HasPrefix(v, "-") {
			continue
		}
		spec := v
		if at := strings.LastIndexByte(v, '@'); at > 0 && !strings.HasPrefix(v[at:], "@npm:") {
			// name@spec: the spec after the version separator.
			if rest := v[at+1:]; strings.Contains(rest, ":") || strings.Contains(rest, "/") {
				spec = rest
			}
		}
		if i := strings.Index(v, "://"); i >= 0 {
			j := strings.LastIndexAny(v[:i], "@ ")
			if j >= 0 && strings.HasPrefix(v[j+1:], "git@") {
				j = strings.LastIndexAny(v[:j], "@ ")
			}
			w.installValue(c, InstallSource, v[j+1:])
			continue
		}
		switch {
		case strings.HasPrefix(spec, "github:"), strings.HasPrefix(spec, "gist:"):
			w.installValue(c, InstallSource, "https://github.com/")
		case strings.HasPrefix(spec, "gitlab:"):
			w.installValue(c, InstallSource, "https://gitlab.com/")
		case strings.HasPrefix(spec, "bitbucket:"):
			w.installValue(c, InstallSource, "https://bitbucket.org/")
		case strings.HasPrefix(spec, "git@"):
			w.installValue(c, InstallSource, spec)
		case localPackage(spec):
			w.installValue(c, InstallSource, spec)
		case !strings.HasPrefix(v, "@") && strings.Count(v, "/") == 1 && !strings.Contains(v, ":"):
			w.installValue(c, InstallSource, "https://github.com/") // user/repo is a GitHub repository
		}
	}
}

// runBun is bun: its package commands install; anything else runs code.
func runBun(w *walker, c *cmd) stage {
	if len(c.args) > 0 && !c.args[0].unknown {
		switch c.args[0].lit {
		case "add", "a", "install", "i", "update", "link", "pm", "x":
			if c.args[0].lit == "x" {
				c2 := *c
				c2.name = "npx"
				c2.args = c.args[1:]
				return runNpmInstall(w, &c2)
			}
			return runNpmInstall(w, c)
		}
	}
	return runInterp(w, c)
}

// runGem is gem: install from a source, or a local .gem, and sources --add.
func runGem(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "svi", long: map[string]bool{"source": true, "version": true, "install-dir": true, "bindir": true,
		"add": true, "remove": true, "platform": true}}, false)
	if len(o.operands) == 0 {
		return stage{}
	}
	for _, x := range o.all("s", "source", "add") {
		w.hostWord(c, x)
		w.install(c, InstallRedirect, x)
	}
	if o.operands[0].lit == "install" || o.operands[0].lit == "i" {
		for _, x := range o.operands[1:] {
			if !x.unknown && localPackage(x.lit) {
				w.installValue(c, InstallSource, x.lit)
			}
		}
	}
	return stage{}
}

// runCargo is cargo install and add: --git, --path, --index, --registry.
func runCargo(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "pFj", long: map[string]bool{"git": true, "path": true, "index": true, "registry": true,
		"branch": true, "tag": true, "rev": true, "version": true, "root": true, "features": true, "package": true, "target": true,
		"target-dir": true, "profile": true, "rename": true, "manifest-path": true, "bin": true, "example": true, "jobs": true}}, false)
	if len(o.operands) == 0 || (o.operands[0].lit != "install" && o.operands[0].lit != "add") {
		return stage{}
	}
	for _, x := range o.all("git") {
		w.hostWord(c, x)
		w.install(c, InstallSource, x)
	}
	for _, x := range o.all("index") {
		w.hostWord(c, x)
		w.install(c, InstallRedirect, x)
	}
	for _, x := range o.all("path") {
		if x.unknown {
			w.install(c, InstallSource, x)
			continue
		}
		w.r.Installs = append(w.r.Installs, Install{Kind: InstallSource, Path: x.lit, Dir: w.cwd, Command: c.name, Segment: c.seg})
	}
	return stage{}
}

// configRegistry records a registry named in text written to a package
// manager's config file (.npmrc, .yarnrc, .yarnrc.yml, pip.conf, pip.ini,
// uv.toml, .pypirc? no: that is for uploads): text veto cannot see is
// refused as a redirection it cannot vouch for.
func (w *walker) configRegistry(name string, seg int, st stage, pattern string) {
	c := &cmd{name: name, seg: seg}
	text := st.text
	if text == nil || st.decode {
		if pattern == "" {
			w.r.Installs = append(w.r.Installs, Install{Kind: InstallRedirect, Unknown: true, Command: name, Segment: seg})
			return
		}
		// echo or printf of words known in part: the parts veto knows say
		// whether a registry is set ("//host/:_authToken=${TOKEN}" sets
		// none); a registry whose value is not known is unknown.
		text = []string{pattern}
	}
	for _, t := range text {
		for _, line := range strings.FieldsFunc(t, func(r rune) bool { return r == '\n' || r == '\r' }) {
			l := strings.ToLower(strings.TrimSpace(line))
			l = strings.ReplaceAll(l, `\n`, "\n")
			for _, part := range strings.Split(l, "\n") {
				if strings.Contains(part, unknownMark) {
					// Known in part: a line whose key veto cannot read may set
					// a registry.
					k, _, ok := strings.Cut(part, "=")
					if !ok || strings.Contains(k, unknownMark) {
						w.r.Installs = append(w.r.Installs, Install{Kind: InstallRedirect, Unknown: true, Command: name, Segment: seg})
						continue
					}
				}
				key, val, ok := strings.Cut(part, "=")
				if !ok {
					key, val, ok = strings.Cut(part, ":")
				}
				if !ok {
					continue
				}
				key = strings.Trim(strings.TrimSpace(key), `"'`)
				if strings.HasSuffix(key, "registry") || key == "npmregistryserver" || strings.HasSuffix(key, "index-url") ||
					key == "find-links" || key == "url" || key == "index" {
					val = strings.Trim(strings.TrimSpace(val), `"'`)
					if strings.Contains(val, unknownMark) {
						w.r.Installs = append(w.r.Installs, Install{Kind: InstallRedirect, Unknown: true, Command: name, Segment: seg})
						continue
					}
					w.installValue(c, InstallRedirect, val)
				}
			}
		}
	}
}

// registryConfig reports whether a path names a package manager's config
// file that can set its registry.
func registryConfig(p string) bool {
	base := p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		base = p[i+1:]
	}
	switch base {
	case ".npmrc", "npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", "uv.toml", ".bunfig.toml", "bunfig.toml":
		return true
	}
	return false
}

// jqInstallScript reports whether a jq filter sets one of package.json's
// install-time scripts (.scripts.postinstall = …, .scripts += {…}).
func jqInstallScript(filter string) bool {
	f := strings.ToLower(filter)
	if !strings.Contains(f, "scripts") || !strings.Contains(f, "=") {
		return false
	}
	for _, s := range installScripts {
		if strings.Contains(f, s) {
			return true
		}
	}
	return false
}

// runJq is jq: a filter that sets an install-time script of package.json
// is an install script added, wherever its output goes.
func runJq(h func(*walker, *cmd) stage) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		for _, a := range c.args {
			if !a.unknown && !strings.HasPrefix(a.lit, "-") {
				if jqInstallScript(a.lit) {
					w.r.Installs = append(w.r.Installs, Install{Kind: InstallScript, Command: c.name, Segment: c.seg})
				}
				break
			}
		}
		return h(w, c)
	}
}

// echoPattern is the text an echo prints as far as veto knows it, each part
// it cannot know as unknownMark; "" for any other command, or when no part
// is known.
func (w *walker) echoPattern(c *syntax.CallExpr) string {
	if len(c.Args) < 2 || c.Args[0].Lit() != "echo" {
		return ""
	}
	var parts []string
	for _, a := range c.Args[1:] {
		if l := a.Lit(); l == "-n" || l == "-e" || l == "-E" {
			continue
		}
		p := w.pattern(a)
		if p == "" {
			p = unknownMark
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// runTee is tee: what it is fed, written to a package manager's config
// file, is judged as a redirection's text would be.
func runTee(w *walker, c *cmd) stage {
	st := teeWrites(w, c)
	for _, a := range c.args {
		if !a.unknown && registryConfig(a.lit) {
			in := stage{}
			if len(c.up) > 0 {
				in = c.up[len(c.up)-1]
			}
			w.configRegistry(c.name, c.seg, in, "")
			break
		}
	}
	return st
}

var teeWrites = writesAll(optSpec{flags: []string{"append", "ignore-interrupts", "output-error", "help", "version"}})
