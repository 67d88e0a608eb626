package control

import (
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/shell"
	"github.com/vetohq/veto/toolpath"
)

// What each kind of veto's files is called in a message.
const (
	whatPolicy   = "its policy files"
	whatState    = "its state"
	whatSocket   = "its socket directory"
	whatRegistry = "its list of guarded clients"
	whatBinary   = "its binaries"
	whatSettings = "the client settings that register it"
	whatKey      = "its signing key"
)

// place is one of veto's locations, canonical.
type place struct {
	root   string
	tree   bool // root and everything below it; else root alone
	prefix bool // every file whose path starts with root (veto.db, veto.db-wal, veto.db.damaged-...)
	what   string
	read   bool // reading it is refused too
}

// pattern is one of veto's locations at any depth (a project's .veto/):
// path segments, each a path.Match pattern.
type pattern struct {
	segs []string
	tree bool
	what string
}

type places struct {
	fixed   []place
	any     []pattern
	preload string
	path    []string // PATH's directories: a file named veto there is veto
}

// binDir reports whether a directory holds programs: on PATH, or named
// bin. A file named veto there would stand in for veto's hook.
func (ps *places) binDir(dir string) bool {
	return path.Base(dir) == "bin" || slices.Contains(ps.path, dir)
}

// locate finds veto's files from the home directory and the environment.
// Both the XDG location and the default below the home directory count,
// so a variable set or unset for one process does not move them for the
// rule.
func (s *Set) locate() places {
	var ps places
	add := func(raw string, tree, read bool, what string) {
		if raw == "" || (!strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "~")) {
			return
		}
		p, err := toolpath.Resolve(raw, s.env("/"))
		if err != nil {
			return
		}
		for _, f := range p.Forms() {
			ps.fixed = append(ps.fixed, place{root: f, tree: tree, read: read, what: what})
		}
	}
	addPrefix := func(raw, what string) {
		if !strings.HasPrefix(raw, "/") {
			return
		}
		p, err := toolpath.Resolve(raw, s.env("/"))
		if err != nil {
			return
		}
		for _, f := range p.Forms() {
			ps.fixed = append(ps.fixed, place{root: f, prefix: true, read: true, what: what},
				place{root: path.Join(path.Dir(f), "."+path.Base(f)), prefix: true, read: true, what: what})
		}
	}
	home := s.home
	// Policy: the user's, the managed one, and (at any depth) a project's.
	if x := s.getenv("XDG_CONFIG_HOME"); strings.HasPrefix(x, "/") {
		add(x+"/veto", true, false, whatPolicy)
	}
	if home != "" {
		add(home+"/.config/veto", true, false, whatPolicy)
	}
	add("/etc/veto", true, false, whatPolicy)
	add(s.getenv("VETO_MANAGED_POLICY"), false, false, whatPolicy)
	ps.any = append(ps.any, pattern{segs: []string{".veto"}, tree: true, what: whatPolicy})
	// State, with its side files, and the socket directory: reads too.
	if x := s.getenv("XDG_STATE_HOME"); strings.HasPrefix(x, "/") {
		add(x+"/veto", true, true, whatState)
	}
	if home != "" {
		add(home+"/.local/state/veto", true, true, whatState)
	}
	addPrefix(s.getenv("VETO_STATE"), whatState)
	add(SocketDir(s.getenv), true, true, whatSocket)
	for _, d := range presence.RegistryDirs() { // who the guarded clients are: written by hooks only
		add(d, true, false, whatRegistry)
	}
	addPrefix(s.getenv("VETO_SOCKET"), whatSocket)
	// Binaries.
	for _, b := range s.binaries {
		ps.fixed = append(ps.fixed, place{root: b, what: whatBinary})
	}
	// Clients' settings: each client's files, and the directories of
	// those whose whole directory configures hooks.
	for _, c := range clients.All {
		ps.any = append(ps.any, pattern{segs: strings.Split(c.Settings.Project, "/"), what: whatSettings})
		if c.Settings.User != "" && home != "" {
			add(home+"/"+c.Settings.User, false, false, whatSettings)
		}
		if c.Settings.UserDirEnv != "" {
			add(s.getenv(c.Settings.UserDirEnv), true, false, whatSettings)
		}
	}
	ps.any = append(ps.any,
		pattern{segs: []string{".claude", "settings*.json"}, what: whatSettings},
		pattern{segs: []string{".gemini", "settings.json"}, what: whatSettings},
		pattern{segs: []string{".cursor", "hooks.json"}, what: whatSettings},
		pattern{segs: []string{".codex"}, tree: true, what: whatSettings},
		pattern{segs: []string{".github", "hooks"}, tree: true, what: whatSettings},
		// pi runs every extension of these beside veto's, and an
		// extension loaded after it could change a call's input once veto
		// allowed it: the directories and the settings that list more.
		pattern{segs: []string{".pi", "extensions"}, tree: true, what: whatSettings},
		pattern{segs: []string{".pi", "settings.json"}, what: whatSettings},
		// OpenCode loads every plugin of these, and the project's config
		// may list more (its "plugin" key).
		pattern{segs: []string{".opencode"}, tree: true, what: whatSettings},
		pattern{segs: []string{"opencode.json"}, what: whatSettings},
		pattern{segs: []string{"opencode.jsonc"}, what: whatSettings})
	if x := s.getenv("XDG_CONFIG_HOME"); strings.HasPrefix(x, "/") {
		add(x+"/opencode", true, false, whatSettings) // OpenCode's global config and plugins
	}
	if x := s.getenv("PI_CODING_AGENT_DIR"); x != "" {
		add(x+"/extensions", true, false, whatSettings)
		add(x+"/settings.json", false, false, whatSettings)
	}
	if home != "" {
		add(home+"/.pi/agent/settings.json", false, false, whatSettings)
		for _, d := range []string{".cursor", ".codex", ".copilot/hooks", ".claude/hooks", ".pi/agent/extensions", ".config/opencode"} {
			add(home+"/"+d, true, false, whatSettings)
		}
	}
	ps.preload = "/etc/ld.so.preload"
	ps.path = s.path
	return ps
}

// SocketDir is the directory of the hook server's socket, and of the
// listeners veto records: $XDG_RUNTIME_DIR/veto, else veto-UID in the
// temporary directory (as hook/wire places the socket).
func SocketDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_RUNTIME_DIR"); strings.HasPrefix(d, "/") {
		return path.Join(d, "veto")
	}
	tmp := getenv("TMPDIR")
	if !strings.HasPrefix(tmp, "/") {
		tmp = "/tmp"
	}
	return path.Join(tmp, "veto-"+strconv.Itoa(os.Getuid()))
}

// match says which of veto's files a canonical path is, and whether
// reading it is refused too.
func (ps *places) match(form string, extra []string) (what string, read, ok bool) {
	for _, p := range ps.fixed {
		switch {
		case p.prefix && strings.HasPrefix(form, p.root),
			p.tree && toolpath.Within(form, p.root, false),
			form == p.root:
			return p.what, p.read, true
		}
	}
	if slices.Contains(extra, form) || (vetoName(path.Base(form)) != "" && ps.binDir(path.Dir(form))) {
		return whatBinary, false, true
	}
	segs := strings.Split(strings.TrimPrefix(form, "/"), "/")
	for _, p := range ps.any {
		if p.matches(segs) {
			return p.what, false, true
		}
	}
	return "", false, false
}

// holds says which of veto's fixed locations lie below a directory: a
// removal or a move of it takes them along.
func (ps *places) holds(dir string) (string, bool) {
	for _, p := range ps.fixed {
		if p.root != dir && toolpath.Within(p.root, dir, false) {
			return p.what, true
		}
	}
	return "", false
}

func (p pattern) matches(segs []string) bool {
	for i := range segs {
		if len(segs)-i < len(p.segs) || (!p.tree && len(segs)-i != len(p.segs)) {
			continue
		}
		all := true
		for j, ps := range p.segs {
			if ok, _ := path.Match(ps, segs[i+j]); !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// use is one path a call names.
type use struct {
	raw, dir string
	write    bool
	removes  bool // a removal or move of everything below it
	unknown  bool
	pattern  string // for an unknown path, what is known of it
	what     string // how a message names where it came from
	guess    bool   // a word of a program veto does not know: it may read or write
}

// uses are the paths a call names: its roles', the path-like strings of a
// tool without a descriptor (each a write and a read), and the files of
// its command.
func (s *Set) uses(in *veto.Input, rep *shell.Report) []use {
	c := in.Call
	dir := callDir(c)
	var out []use
	if d := in.Descriptor; d != nil {
		// Through the roles in any letter case: "File_Path" is the path.
		for _, role := range []veto.Role{veto.RolePath, veto.RoleMoved, veto.RoleSourcePath, veto.RoleURL} {
			for _, arg := range d.ArgsWith(c.Args, role) {
				for _, raw := range arg.Strings() {
					what := "The " + arg.Param + " argument"
					switch role {
					case veto.RolePath:
						out = append(out, use{raw: raw, dir: dir, write: true, what: what})
					case veto.RoleMoved:
						out = append(out, use{raw: raw, dir: dir, write: true, removes: true, what: what})
					case veto.RoleSourcePath:
						out = append(out, use{raw: raw, dir: dir, what: what})
					case veto.RoleURL:
						if strings.HasPrefix(raw, "file:") {
							out = append(out, use{raw: raw, dir: dir, what: what})
						}
					}
				}
			}
		}
	} else {
		for _, raw := range toolpath.Sniff(c.Args) {
			out = append(out, use{raw: raw, dir: dir, write: true, what: "An argument of a tool veto has no descriptor for"})
		}
	}
	if rep == nil {
		return out
	}
	treeRead := map[[2]string]bool{}
	for _, f := range rep.Files {
		if f.Tree && !f.Write && !f.Unknown {
			treeRead[[2]string{f.Dir, f.Path}] = true
		}
	}
	for _, f := range rep.Files {
		out = append(out, use{raw: f.Path, dir: f.Dir, write: f.Write, unknown: f.Unknown, pattern: f.Pattern,
			removes: f.Removes || (f.Write && treeRead[[2]string{f.Dir, f.Path}]), what: "A path the command uses"})
	}
	return append(out, argUses(rep)...)
}

// argUses are the path-like words of every command, as veto's analyzer
// does not know what most programs do with their arguments (sqlite3 on
// the state): each is a read, and a write too unless the program only
// reads (cat, grep, ls, veto's read-only subcommands) or prints words
// (echo).
func argUses(rep *shell.Report) []use {
	var out []use
	for _, c := range rep.Commands {
		prog := programName(c)
		if prog == "" || prog == "echo" || prog == "printf" {
			continue
		}
		write := !slices.Contains(readers, prog) && vetoName(prog) == ""
		for _, a := range c.Argv[1:] {
			for _, v := range a.Values {
				if _, val, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
					v = val
				}
				if toolpath.PathLike(v) && !strings.HasPrefix(v, "-") {
					out = append(out, use{raw: v, dir: c.Dir, write: write, guess: true, what: "An argument of the command"})
				}
			}
		}
	}
	return out
}

// readers are programs that only read the files they are given.
var readers = []string{"cat", "tac", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "ack", "ls", "stat",
	"file", "wc", "diff", "cmp", "bat", "jq", "yq", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum",
	"readlink", "realpath", "du", "tree", "nl", "od", "hexdump", "strings", "view", "test", "[", "[[", "basename", "dirname"}

// checkFiles refuses a write of veto's files, a removal or move of a
// directory that holds them, a read of its state or socket directory, and
// a write of the loader's preload list.
func (s *Set) checkFiles(in *veto.Input, rep *shell.Report) (veto.Decision, bool) {
	var reloaded, secrets []string
	readRecords := false
	for _, u := range s.uses(in, rep) {
		raw, dir := u.raw, u.dir
		if u.unknown {
			if raw = knownDir(u.pattern); raw == "" {
				continue
			}
		}
		if dir == "" && !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "~") {
			continue
		}
		p, err := toolpath.Resolve(raw, s.env(dir))
		if err != nil {
			continue // the file rules refuse what cannot be resolved
		}
		for _, form := range p.Forms() {
			if u.write && form == s.places.preload {
				return vetoPreload.Deny(), true
			}
			if !readRecords {
				reloaded, secrets = s.recorded()
				readRecords = true
			}
			if u.write && slices.Contains(reloaded, form) {
				return vetoFiles.Deny(u.what, whatPolicy), true
			}
			if slices.Contains(secrets, form) {
				if u.write {
					return vetoFiles.Deny(u.what, whatKey), true
				}
				return vetoState.Deny(u.what, strings.TrimPrefix(whatKey, "its ")), true
			}
			if what, read, ok := s.places.match(form, s.registeredBinaries()); ok && (u.write || read) {
				if u.write && !(u.guess && read) {
					return vetoFiles.Deny(u.what, what), true
				}
				return vetoState.Deny(u.what, strings.TrimPrefix(what, "its ")), true
			}
			// Removing the home directory or one above it, or a top-level
			// directory (/etc), is the file rules' (root_removal, outside the
			// roots), whatever it holds.
			if u.removes && !u.unknown && !toolpath.Within(s.home, form, false) && strings.Count(form, "/") > 1 {
				if what, ok := s.places.holds(form); ok {
					return vetoFiles.Deny(u.what, what), true
				}
			}
		}
	}
	return veto.Decision{}, false
}

// knownDir is the directory an unknown path's pattern is known to lie in
// ("~/.config/veto" of "~/.config/veto/*"), "" when none is.
func knownDir(pat string) string {
	i := strings.IndexByte(pat, '*')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(pat[:i], '/')
	if j <= 0 {
		return ""
	}
	return pat[:j]
}
