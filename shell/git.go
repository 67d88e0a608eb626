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
			if s == "-C" {
				dir = args[1].lit
			}
			args = args[2:]
			continue
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
	}
	if subcmd == "push" {
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
	return ""
}

// gitConfig treats setting a key that makes git run code as writing the
// config file that holds it: the repository's (protected) or the user's
// (a persistence target).
func (w *walker) gitConfig(c *cmd, args []word, dir string) {
	global, set := false, false
	var positional []string
	for _, a := range args {
		if a.unknown {
			positional = append(positional, "")
			continue
		}
		switch s := a.lit; {
		case s == "--global" || s == "--system":
			global = true
		case s == "--get" || s == "--get-all" || s == "--list" || s == "-l" || s == "--get-regexp" || s == "--unset" || s == "--unset-all":
			return
		case strings.HasPrefix(s, "-"):
		default:
			positional = append(positional, s)
		}
	}
	if len(positional) >= 2 {
		set = true
	}
	if !set {
		return
	}
	key := strings.ToLower(positional[0])
	switch key {
	case "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "diff.external", "sequence.editor":
	default:
		if !strings.HasPrefix(key, "alias.") && !strings.HasSuffix(key, ".command") {
			return
		}
	}
	file := ".git/config"
	if dir != "" {
		file = strings.TrimSuffix(dir, "/") + "/.git/config"
	}
	if global {
		file = "~/.gitconfig"
	}
	w.access(lit(file), true, false)
}
