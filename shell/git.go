package shell

import "strings"

// gitGlobalValued are git's global options that take a value.
var gitGlobalValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--exec-path": true, "--config-env": true, "--super-prefix": true, "--list-cmds": true, "--attr-source": true}

// runGit finds git's subcommand past its global options and judges it:
// the operations that throw away work (cc-safety-net's list), the hosts it
// reaches, and configuration that runs code later.
func runGit(w *walker, c *cmd) stage {
	args := c.args
	dir := ""
	aliases := map[string]string{}
	for len(args) > 0 {
		a := args[0]
		if a.unknown {
			w.finding(CannotVouch, c.seg, "The git subcommand is a variable or an expansion, so veto cannot vouch for it.")
			return stage{}
		}
		s := a.lit
		switch {
		case s == "--":
			args = args[1:]
			goto sub
		case gitGlobalValued[s]:
			if len(args) < 2 {
				return stage{}
			}
			switch s {
			case "-C":
				dir = args[1].lit
			case "-c":
				w.gitConfigValue(c, args[1], aliases)
				if k, v, ok := strings.Cut(args[1].lit, "="); ok && !args[1].unknown {
					w.gitConfigRemote([]word{lit(k), lit(v)})
				} else if args[1].unknown {
					w.gitConfigRemote([]word{lit("url.*.insteadof"), {unknown: true}})
				}
			case "--config-env":
				w.gitConfigEnv(c, args[1])
			}
			args = args[2:]
			continue
		case strings.HasPrefix(s, "--config-env="):
			w.gitConfigEnv(c, tails(a, "--config-env="))
		case strings.HasPrefix(s, "-C"):
			dir = s[2:]
		case strings.HasPrefix(s, "--help"), s == "-h", s == "--version", s == "-v":
			return stage{}
		case strings.HasPrefix(s, "-"):
		default:
			goto sub
		}
		args = args[1:]
	}
sub:
	if len(args) == 0 {
		return stage{}
	}
	if args[0].unknown {
		w.finding(CannotVouch, c.seg, "The git subcommand is a variable or an expansion, so veto cannot vouch for it.")
		return stage{}
	}
	subcmd := strings.ToLower(args[0].lit)
	rest := args[1:]
	if alias, ok := aliases[subcmd]; ok {
		// An alias given with -c for this call: its words take the
		// subcommand's place.
		var words []word
		for _, f := range strings.Fields(alias) {
			words = append(words, lit(f))
		}
		if len(words) > 0 {
			subcmd, rest = strings.ToLower(words[0].lit), append(words[1:], rest...)
		}
	}
	if longs, ok := gitLongs[subcmd]; ok {
		rest = expandLongs(rest, longs)
	}
	for _, a := range rest {
		if !a.unknown && (a.lit == "--help" || a.lit == "-h") {
			return stage{}
		}
	}
	reason := ""
	switch subcmd {
	case "checkout":
		reason = gitCheckout(rest)
	case "switch":
		reason = gitSwitch(rest)
	case "restore":
		reason = gitRestore(rest)
	case "reset":
		if hasOpt(rest, "", "hard") || hasOpt(rest, "", "merge") {
			reason = "git reset --hard or --merge throws away uncommitted changes."
		}
	case "clean":
		if hasOpt(rest, "f", "force") {
			reason = "git clean -f deletes untracked files."
		}
	case "push":
		reason = gitPush(rest)
	case "branch":
		if hasOpt(rest, "D", "") || (hasOpt(rest, "d", "delete") && hasOpt(rest, "f", "force")) {
			reason = "git branch -D deletes a branch whether or not it was merged."
		}
	case "stash":
		if len(rest) > 0 && !rest[0].unknown && (rest[0].lit == "drop" || rest[0].lit == "clear") {
			reason = "git stash drop or clear throws away stashed work."
		}
	case "worktree":
		if len(rest) > 0 && rest[0].lit == "remove" && hasOpt(rest[1:], "f", "force") {
			reason = "git worktree remove --force throws away the worktree's changes."
		}
	case "clone", "fetch", "pull", "ls-remote", "submodule", "remote":
		for _, a := range rest {
			if a.unknown {
				continue
			}
			if strings.Contains(a.lit, "://") || (strings.Contains(a.lit, "@") && strings.Contains(a.lit, ":")) {
				w.host(c, a.lit)
			}
		}
	case "config":
		w.gitConfig(c, rest, dir)
		w.gitConfigRemote(rest)
	}
	if subcmd == "remote" && len(rest) > 0 && (rest[0].lit == "add" || rest[0].lit == "set-url") {
		w.gitRemoteAdd(rest)
	}
	w.gitRuns(c, subcmd, rest)
	if subcmd == "push" {
		w.gitPushUpload(c, rest)
		for _, a := range rest {
			if !a.unknown && (strings.Contains(a.lit, "://") || (strings.Contains(a.lit, "@") && strings.Contains(a.lit, ":"))) {
				w.host(c, a.lit)
			}
		}
	}
	if reason != "" {
		w.finding(GitDestructive, c.seg, reason)
	}
	return stage{}
}

// gitLongs are the long options of the subcommands veto judges by their
// options. git takes any unambiguous prefix of a long option (--har is
// --hard); an ambiguous one is read as the first it could be, and each
// list starts with the options veto refuses, so --forc is --force.
var gitLongs = map[string][]string{
	"reset": {"hard", "merge", "mixed", "soft", "keep", "quiet", "no-quiet", "patch", "pathspec-from-file",
		"pathspec-file-nul", "recurse-submodules", "no-recurse-submodules", "refresh", "no-refresh", "intent-to-add"},
	"clean": {"force", "dry-run", "quiet", "interactive", "exclude"},
	"push": {"force", "mirror", "delete", "force-with-lease", "force-if-includes", "no-force-with-lease", "no-force-if-includes",
		"all", "branches", "tags", "follow-tags", "no-follow-tags", "prune", "dry-run", "porcelain", "set-upstream",
		"signed", "no-signed", "atomic", "no-atomic", "push-option", "receive-pack", "exec", "repo", "verbose", "quiet",
		"progress", "no-progress", "verify", "no-verify", "ipv4", "ipv6", "recurse-submodules", "no-recurse-submodules",
		"thin", "no-thin"},
	"checkout": {"force", "pathspec-from-file", "ours", "theirs", "track", "no-track", "detach", "merge", "conflict", "patch",
		"orphan", "ignore-skip-worktree-bits", "overwrite-ignore", "no-overwrite-ignore", "ignore-other-worktrees",
		"recurse-submodules", "no-recurse-submodules", "progress", "no-progress", "quiet", "pathspec-file-nul", "guess",
		"no-guess", "overlay", "no-overlay", "unified", "inter-hunk-context"},
	"switch": {"discard-changes", "force", "create", "force-create", "orphan", "detach", "guess", "no-guess", "track",
		"no-track", "merge", "conflict", "quiet", "progress", "no-progress", "recurse-submodules", "no-recurse-submodules",
		"ignore-other-worktrees"},
	"restore": {"worktree", "source", "staged", "ours", "theirs", "merge", "conflict", "patch", "overlay", "no-overlay",
		"quiet", "progress", "no-progress", "recurse-submodules", "no-recurse-submodules", "ignore-unmerged",
		"pathspec-from-file", "pathspec-file-nul", "ignore-skip-worktree-bits", "unified", "inter-hunk-context"},
	"branch": {"delete", "force", "move", "copy", "list", "all", "remotes", "verbose", "quiet", "abbrev", "no-abbrev",
		"column", "no-column", "sort", "merged", "no-merged", "contains", "no-contains", "points-at", "format", "color",
		"no-color", "ignore-case", "omit-empty", "track", "no-track", "set-upstream-to", "unset-upstream",
		"edit-description", "create-reflog", "recurse-submodules", "show-current"},
	"worktree": {"force", "detach", "checkout", "no-checkout", "guess-remote", "no-guess-remote", "track", "no-track",
		"lock", "reason", "orphan", "quiet", "porcelain", "verbose", "expire", "dry-run", "relative-paths",
		"no-relative-paths"},
}

// gitOpts splits git subcommand arguments into options and positionals.
// valued are the options that take a value (separately or with "=");
// optional are those whose value is taken only when it is one of its
// known words.
type gitArgs struct {
	short, long map[string]bool
	positional  []string
	afterDD     []string
	dashdash    bool
	unknown     bool
}

func parseGit(args []word, valuedShort string, valuedLong map[string]bool, optional map[string][]string) gitArgs {
	g := gitArgs{short: map[string]bool{}, long: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			g.unknown = true
			g.positional = append(g.positional, "")
			continue
		}
		s := a.lit
		switch {
		case s == "--":
			g.dashdash = true
			for _, x := range args[i+1:] {
				g.afterDD = append(g.afterDD, x.lit)
			}
			return g
		case strings.HasPrefix(s, "--"):
			name, _, hasVal := strings.Cut(s[2:], "=")
			g.long[name] = true
			if hasVal {
				continue
			}
			if valuedLong[name] && i+1 < len(args) {
				i++
				continue
			}
			if words, ok := optional[name]; ok && i+1 < len(args) {
				for _, wd := range words {
					if args[i+1].lit == wd {
						i++
						break
					}
				}
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				f := s[j : j+1]
				g.short[f] = true
				if strings.Contains(valuedShort, f) {
					if j+1 == len(s) && i+1 < len(args) {
						i++
					}
					break
				}
			}
		default:
			g.positional = append(g.positional, s)
		}
	}
	return g
}

func hasOpt(args []word, short, long string) bool {
	for _, a := range args {
		if a.unknown {
			continue
		}
		s := a.lit
		if s == "--" {
			return false
		}
		if long != "" && (s == "--"+long || strings.HasPrefix(s, "--"+long+"=")) {
			return true
		}
		if short != "" && len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.Contains(s[1:], short) {
			return true
		}
	}
	return false
}

var checkoutValuedLong = map[string]bool{"conflict": true, "unified": true, "inter-hunk-context": true, "orphan": true, "pathspec-from-file": true}
var checkoutOptional = map[string][]string{"track": {"direct", "inherit"}, "recurse-submodules": {"checkout", "on-demand"}}

func gitCheckout(args []word) string {
	g := parseGit(args, "bBU", checkoutValuedLong, checkoutOptional)
	switch {
	case g.short["f"] || g.long["force"]:
		return "git checkout --force throws away uncommitted changes."
	case g.long["pathspec-from-file"]:
		return "git checkout with paths overwrites their uncommitted changes."
	case g.dashdash && len(g.afterDD) > 0:
		return "git checkout -- <paths> overwrites their uncommitted changes."
	case len(g.positional) >= 2:
		return "git checkout <ref> <paths> overwrites their uncommitted changes."
	}
	return ""
}

func gitSwitch(args []word) string {
	g := parseGit(args, "cC", map[string]bool{"create": true, "force-create": true, "orphan": true, "conflict": true}, checkoutOptional)
	if g.short["f"] || g.long["force"] || g.long["discard-changes"] {
		return "git switch --discard-changes or --force throws away uncommitted changes."
	}
	return ""
}

func gitRestore(args []word) string {
	g := parseGit(args, "sU", map[string]bool{"source": true, "conflict": true, "unified": true, "inter-hunk-context": true, "pathspec-from-file": true}, nil)
	staged := g.short["S"] || g.long["staged"]
	worktree := g.short["W"] || g.long["worktree"]
	if staged && !worktree {
		return ""
	}
	return "git restore of the worktree overwrites uncommitted changes."
}

func gitPush(args []word) string {
	g := parseGit(args, "o", map[string]bool{"push-option": true, "repo": true, "receive-pack": true, "exec": true}, nil)
	lease := false
	for k := range g.long {
		if strings.HasPrefix(k, "force-with-lease") || k == "force-if-includes" {
			lease = true
		}
	}
	if (g.short["f"] || g.long["force"]) && !lease {
		return "git push --force rewrites the remote's history."
	}
	refs := g.positional
	if len(refs) > 0 {
		refs = refs[1:] // the remote
	}
	for _, r := range append(refs, g.afterDD...) {
		if strings.HasPrefix(r, "+") {
			return "git push +<refspec> forces the remote's history."
		}
	}
	if g.long["mirror"] || g.long["delete"] || g.short["d"] {
		return "git push --mirror or --delete removes refs on the remote."
	}
	for _, r := range append(refs, g.afterDD...) {
		if strings.HasPrefix(r, ":") && len(r) > 1 {
			return "git push <remote> :<ref> deletes the ref on the remote."
		}
	}
	return ""
}

// gitCodeKey reports whether a configuration key makes git run code or
// read configuration from elsewhere: the hooks directory, a command git
// runs (pager, editor, ssh, fsmonitor, credential helper, filters, diff
// and merge drivers), an alias, or an included file.
func gitCodeKey(key string) bool {
	key = strings.ToLower(key)
	switch key {
	case "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy",
		"diff.external", "sequence.editor", "credential.helper", "gpg.program", "gpg.x509.program", "gpg.ssh.program",
		"include.path", "init.templatedir", "uploadpack.packobjectshook", "interactive.difffilter":
		return true
	}
	switch {
	case strings.HasPrefix(key, "alias."), strings.HasPrefix(key, "pager."),
		strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path"),
		strings.HasPrefix(key, "filter.") && (strings.HasSuffix(key, ".clean") || strings.HasSuffix(key, ".smudge") || strings.HasSuffix(key, ".process")),
		strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper"),
		strings.HasSuffix(key, ".command"), strings.HasSuffix(key, ".textconv"), strings.HasSuffix(key, ".driver"),
		strings.HasSuffix(key, ".cmd"), strings.HasSuffix(key, ".sshcommand"):
		return true
	}
	return false
}

// gitShellKey reports whether git runs a key's value with the shell.
func gitShellKey(key string) bool {
	key = strings.ToLower(key)
	switch key {
	case "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "diff.external", "sequence.editor",
		"core.askpass", "gpg.program", "core.gitproxy", "uploadpack.packobjectshook", "interactive.difffilter":
		return true
	}
	return strings.HasPrefix(key, "pager.") || strings.HasPrefix(key, "filter.") || strings.HasSuffix(key, ".command") ||
		strings.HasSuffix(key, ".textconv") || strings.HasSuffix(key, ".driver") || strings.HasSuffix(key, ".cmd") ||
		strings.HasSuffix(key, ".sshcommand")
}

// gitConfigValue judges git -c key=value, configuration for this call
// only: a value git runs with the shell is analysed as a script; an alias
// that starts with ! is a script, any other is remembered for the
// subcommand; a hooks directory, an included file or a helper veto cannot
// read is cannot_vouch.
func (w *walker) gitConfigValue(c *cmd, kv word, aliases map[string]string) {
	if kv.unknown {
		w.finding(CannotVouch, c.seg, "git is given configuration veto cannot see (-c with a variable or an expansion), so it cannot vouch for it.")
		return
	}
	for _, v := range kv.vals {
		key, val, _ := strings.Cut(v, "=")
		lkey := strings.ToLower(key)
		if (lkey == "http.proxy" || lkey == "https.proxy" || strings.HasPrefix(lkey, "http.") && strings.HasSuffix(lkey, ".proxy")) && val != "" {
			w.host(c, val) // git connects to the proxy
			continue
		}
		if !gitCodeKey(lkey) {
			continue
		}
		switch {
		case strings.HasPrefix(lkey, "alias."):
			if script, ok := strings.CutPrefix(val, "!"); ok {
				w.fork().script(script, c.depth+1)
				continue
			}
			aliases[strings.TrimPrefix(lkey, "alias.")] = val
		case lkey == "core.hookspath" && (val == "/dev/null" || val == ""):
		case gitShellKey(lkey):
			w.fork().script(val, c.depth+1)
		case strings.HasPrefix(val, "!"):
			w.fork().script(val[1:], c.depth+1)
		case (lkey == "credential.helper" || strings.HasPrefix(lkey, "credential.") && strings.HasSuffix(lkey, ".helper")) &&
			!strings.ContainsAny(val, "/ \t"):
			// "" turns helpers off; a plain name is git's own credential-NAME.
		default:
			w.finding(CannotVouch, c.seg, "git is told to run hooks, helpers or configuration from a place veto does not vouch for.")
		}
	}
}

// gitConfigEnv judges git --config-env=key=VAR: a key that runs code, with
// a value veto cannot see.
func (w *walker) gitConfigEnv(c *cmd, kv word) {
	if kv.unknown {
		w.finding(CannotVouch, c.seg, "git is given configuration veto cannot see, so it cannot vouch for it.")
		return
	}
	for _, v := range kv.vals {
		if key, _, _ := strings.Cut(v, "="); gitCodeKey(key) {
			w.finding(CannotVouch, c.seg, "git is given configuration veto cannot see, so it cannot vouch for it.")
			return
		}
	}
}

// gitConfig treats setting a key that makes git run code as writing the
// config file that holds it: the repository's (protected), the user's (a
// persistence target) or the one --file names. Both forms are read: git
// config [--file F] key value, and git 2.46's git config set key value.
func (w *walker) gitConfig(c *cmd, args []word, dir string) {
	global := false
	file := ""
	var fileWord *word
	var positional []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			positional = append(positional, a)
			continue
		}
		switch s := a.lit; {
		case s == "--global" || s == "--system":
			global = true
		case s == "--get" || s == "--get-all" || s == "--list" || s == "-l" || s == "--get-regexp" || s == "--unset" ||
			s == "--unset-all" || s == "--get-urlmatch" || s == "--get-color" || s == "--get-colorbool" || s == "-e" || s == "--edit":
			return
		case s == "--file" || s == "-f" || s == "--blob" || s == "--type" || s == "--default" || s == "--comment" || s == "--value":
			if i+1 < len(args) {
				i++
				if s == "--file" || s == "-f" {
					fileWord = &args[i]
				}
			}
		case strings.HasPrefix(s, "--file="):
			x := tails(a, "--file=")
			fileWord = &x
		case strings.HasPrefix(s, "-"):
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) > 0 && !positional[0].unknown {
		switch positional[0].lit {
		case "set":
			positional = positional[1:]
		case "get", "list", "unset", "rename-section", "remove-section", "edit":
			return
		}
	}
	if len(positional) < 2 {
		return
	}
	if positional[0].unknown {
		// A key veto cannot read: it may be one that runs code.
		w.finding(CannotVouch, c.seg, "git config sets a key veto cannot see, so it cannot vouch for it.")
		return
	}
	if !gitCodeKey(positional[0].lit) {
		return
	}
	switch {
	case fileWord != nil:
		w.access(*fileWord, true, false)
		return
	case global:
		file = "~/.gitconfig"
	case dir != "":
		file = strings.TrimSuffix(dir, "/") + "/.git/config"
	default:
		file = ".git/config"
	}
	w.access(lit(file), true, false)
}
