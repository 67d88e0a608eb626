package control

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/shell"
	"github.com/vetohq/veto/toolpath"
)

// Class is what a veto subcommand does to veto.
type Class int

const (
	// ReadOnly subcommands change nothing veto decides or records.
	ReadOnly Class = iota + 1
	// Changes subcommands change policy, state, registration, tokens,
	// approvals, pins, egress or a server.
	Changes
	// BySub subcommands are judged by their own subcommand (log prune,
	// egress allow, mcp approve, policy show, state repair).
	BySub
	// Hook is the hook itself: only a client runs it.
	Hook
)

// Subcommands classifies every subcommand of veto (cli.commands); a
// subcommand missing here is refused, and cli's test fails until it is
// classified.
var Subcommands = map[string]Class{
	"demo":        ReadOnly, // a throw-away workspace and state in a temporary directory
	"check":       ReadOnly, // but --state records the decision (checkArgs)
	"hook":        Hook,
	"init":        Changes,
	"uninstall":   Changes,
	"doctor":      ReadOnly,
	"serve-hooks": Changes, // --stop, --status and the server alike
	"serve":       Changes,
	"mcp":         BySub,
	"token":       Changes,
	"approve":     Changes, // listing too: the questions are a person's to read
	"ui":          Changes, // it prints the page's key
	"explain":     ReadOnly,
	"policy":      BySub,
	"validate":    ReadOnly,
	"test":        ReadOnly,
	"log":         BySub,
	"state":       BySub,
	"egress":      BySub,
	"replay":      ReadOnly,
	// exec runs its command under the supervisor: its command is analysed
	// as a wrapper's, and what runs is decided more closely, never less.
	"exec":    ReadOnly,
	"version": ReadOnly,
	"help":    ReadOnly,
	"-h":      ReadOnly,
	"-help":   ReadOnly,
	"--help":  ReadOnly,
}

// subSubcommands are the read-only subcommands of each BySub subcommand;
// any other (or none, where one is required) changes veto.
var subSubcommands = map[string]struct {
	readOnly []string
	none     bool     // the subcommand without one of its own is read-only (veto log)
	first    bool     // its subcommand is its first word, as veto reads it, else its first operand
	valued   []string // its flags that take the next word
}{
	"log":    {readOnly: []string{"verify"}, none: true, first: true},
	"state":  {readOnly: []string{"check"}, first: true},
	"egress": {readOnly: []string{"list"}, first: true},
	"mcp":    {readOnly: []string{"pins"}, first: true},
	"policy": {readOnly: []string{"show", "default", "schema", "revisions", "diff"}, valued: []string{"policy", "cwd"}},
}

// Classified reports whether veto.control knows what a subcommand of veto
// does.
func Classified(name string) bool { _, ok := Subcommands[name]; return ok }

// checkVeto judges one command: veto's hook, veto with a subcommand, go
// run of veto, or veto given a library to preload.
func (s *Set) checkVeto(in *veto.Input, rep *shell.Report, c shell.Command, lk *look) (veto.Decision, bool) {
	argv := c.Argv
	kind := s.vetoProgram(c.Dir, argv[0], lk)
	if kind == "" {
		var ok bool
		if kind, argv, ok = goRun(c); !ok {
			return veto.Decision{}, false
		}
	}
	if preloads(rep) {
		return vetoPreload.Deny(), true
	}
	if kind == "veto-hook" {
		return vetoHook.Deny(), true
	}
	args := argv[1:]
	if len(args) == 0 {
		if c.InputArgs {
			return vetoUnknown.Deny(), true
		}
		return veto.Decision{}, false // the usage
	}
	if args[0].Unknown || len(args[0].Values) != 1 {
		return vetoUnknown.Deny(), true
	}
	sub := args[0].Values[0]
	switch Subcommands[sub] {
	case ReadOnly:
		if sub == "check" && !checkReadOnly(args[1:]) {
			return vetoCommand.Deny("check --state"), true
		}
		if sub == "exec" && !execOwnRun(args[1:], in.Call.Run.Ref) {
			return vetoCommand.Deny("exec --run of another run"), true
		}
		return veto.Decision{}, false
	case Hook:
		return vetoHook.Deny(), true
	case Changes:
		return vetoCommand.Deny(sub), true
	case BySub:
		if name, ok := subReadOnly(sub, args[1:]); !ok {
			if name == "" {
				return vetoUnknown.Deny(), true
			}
			return vetoCommand.Deny(sub + " " + name), true
		}
		return veto.Decision{}, false
	}
	return vetoUnknown.Deny(), true
}

// checkReadOnly reports whether veto check's arguments leave the state
// alone: no --state (which records the decision), none veto cannot read.
func checkReadOnly(args []shell.Word) bool {
	for _, a := range args {
		if a.Unknown {
			return false
		}
		for _, v := range a.Values {
			f := strings.TrimLeft(v, "-")
			if strings.HasPrefix(v, "-") && (f == "state" || strings.HasPrefix(f, "state=")) {
				return false
			}
		}
	}
	return true
}

// execOwnRun reports whether veto exec's arguments record its decisions
// in the calling run (--run absent, or naming it): decisions recorded in
// another run would change what that run's history rules see.
func execOwnRun(args []shell.Word, run string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Unknown || len(a.Values) != 1 {
			return false
		}
		v := a.Values[0]
		switch {
		case v == "--":
			return true
		case v == "--run" || v == "-run":
			if i+1 >= len(args) || args[i+1].Unknown || len(args[i+1].Values) != 1 || args[i+1].Values[0] != run || run == "" {
				return false
			}
			i++
		case strings.HasPrefix(v, "--run=") || strings.HasPrefix(v, "-run="):
			if _, val, _ := strings.Cut(v, "="); val != run || run == "" {
				return false
			}
		case !strings.HasPrefix(v, "-"):
			return true // the command
		}
	}
	return true
}

// subReadOnly judges a BySub subcommand's arguments. It names the
// subcommand that changes veto ("" when it cannot tell) unless ok.
func subReadOnly(sub string, args []shell.Word) (name string, ok bool) {
	spec := subSubcommands[sub]
	first := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.Unknown || len(a.Values) != 1 {
			return "", false
		}
		v := a.Values[0]
		if spec.first {
			if !strings.HasPrefix(v, "-") {
				first = v
			}
			break
		}
		if strings.HasPrefix(v, "-") {
			if f := strings.TrimLeft(v, "-"); slices.Contains(spec.valued, f) {
				i++
			}
			continue
		}
		first = v
		break
	}
	// Every word is looked at too: a sub-subcommand that changes veto
	// anywhere on the line is refused, however veto would parse it.
	for _, a := range args {
		for _, v := range a.Values {
			if v == "prune" || v == "repair" || v == "allow" || v == "add" || v == "approve" {
				return v, false
			}
		}
	}
	switch {
	case first == "" && spec.none:
		return "", true
	case slices.Contains(spec.readOnly, first):
		return "", true
	case first == "":
		if sub == "mcp" {
			return "(the gateway)", false
		}
		return "", false
	}
	if sub == "mcp" {
		return "(the gateway)", false
	}
	return first, false
}

// vetoProgram says which of veto's programs a command's program word is:
// "veto", "veto-hook" or "" for another program. A word that names veto
// by its base name is veto wherever it lies; any other is resolved (a
// bare name through PATH) and compared with veto's binaries, by path, by
// file identity, and by the module it was built from.
func (s *Set) vetoProgram(dir string, prog shell.Word, lk *look) string {
	if prog.Unknown {
		return "" // the analyzer cannot vouch for it, and refuses it
	}
	for _, v := range prog.Values {
		if k := vetoName(path.Base(v)); k != "" {
			return k
		}
	}
	for _, v := range prog.Values {
		key := dir + "\x00" + v
		k, seen := lk.programs[key]
		if !seen {
			k = s.vetoWord(dir, v, lk)
			if lk.programs == nil {
				lk.programs = map[string]string{}
			}
			lk.programs[key] = k
		}
		if k != "" {
			return k
		}
	}
	return ""
}

// vetoWord is vetoProgram for one value of the program word.
func (s *Set) vetoWord(dir, word string, lk *look) string {
	for _, c := range s.programPaths(dir, word, lk) {
		if k := s.vetoFile(c.Path, c.found, lk); k != "" {
			return k
		}
	}
	return ""
}

// look is what one check has looked at on the filesystem: each of veto's
// binaries is looked at once, a program word met twice on one line (git
// status && git diff) is resolved once, and so is each of PATH's
// directories, which every program named on the line is looked for in.
type look struct {
	programs map[string]string // dir NUL word: what vetoWord said
	looked   bool
	binaries []os.FileInfo // veto's binaries that exist, once looked
	walks    *walks
}

// walked is the filesystem programs are resolved on, walking each path
// once a check.
func (lk *look) walked(s *Set) *walks {
	if lk.walks == nil {
		var fsys toolpath.FS = toolpath.OS{}
		if s.fs != nil {
			fsys = s.fs
		}
		lk.walks = &walks{FS: fsys, seen: map[string]toolpath.Resolution{}}
	}
	return lk.walks
}

// walks is a filesystem that asks the one below it how a path resolves
// (toolpath.Walker) at most once: when it cannot say, resolving looks
// at each component, as on the filesystem below.
type walks struct {
	toolpath.FS
	seen map[string]toolpath.Resolution
}

// Walk is the filesystem's Walk of p, asked once.
func (w *walks) Walk(p string) toolpath.Resolution {
	r, ok := w.seen[p]
	if !ok {
		if inner, walker := w.FS.(toolpath.Walker); walker {
			r = inner.Walk(p)
		}
		w.seen[p] = r
	}
	return r
}

// binaryFiles are veto's binaries that exist, looked at on first need.
func (lk *look) binaryFiles(s *Set) []os.FileInfo {
	if !lk.looked {
		lk.looked = true
		for _, b := range append(slices.Clone(s.binaries), s.registeredBinaries()...) {
			if bi, err := os.Stat(b); err == nil {
				lk.binaries = append(lk.binaries, bi)
			}
		}
	}
	return lk.binaries
}

// candidate is a file a program word may run, and what resolving it
// found of it (toolpath.Find).
type candidate struct {
	toolpath.Path
	found toolpath.Resolution
}

// vetoName is the program a base name names, if it is veto's.
func vetoName(base string) string {
	switch strings.ToLower(base) {
	case "veto", "veto.exe":
		return "veto"
	case "veto-hook", "veto-hook.exe":
		return "veto-hook"
	}
	return ""
}

// programPaths are the files a program word may run: the word resolved
// when it holds a slash, else each PATH directory's file of that name, up
// to the first that exists.
func (s *Set) programPaths(dir, word string, lk *look) []candidate {
	var raws []string
	if strings.Contains(word, "/") {
		raws = []string{word}
	} else {
		if shellBuiltin(word) {
			return nil
		}
		for _, d := range s.path {
			raws = append(raws, d+"/"+word)
		}
	}
	env := s.env(dir)
	env.FS = lk.walked(s)
	var out []candidate
	for _, r := range raws {
		p, found, err := toolpath.Find(r, env)
		if err != nil {
			continue
		}
		out = append(out, candidate{p, found})
		if len(raws) > 1 && s.exists(p.Real, found) {
			break // the shell runs the first PATH holds
		}
	}
	return out
}

// exists reports whether a file is at p, on the filesystem paths resolve
// on: as resolving found it, or, when that could not tell, looked at.
func (s *Set) exists(p string, found toolpath.Resolution) bool {
	if found != toolpath.Unsure {
		return found == toolpath.Clean
	}
	fsys := s.fs
	if fsys == nil {
		fsys = toolpath.OS{}
	}
	_, err := fsys.Lstat(p)
	return err == nil
}

// vetoFile says whether the file at p is one of veto's binaries; found
// is what resolving p found of it (Missing: no file to look at).
func (s *Set) vetoFile(p toolpath.Path, found toolpath.Resolution, lk *look) string {
	for _, form := range p.Forms() {
		if k := vetoName(path.Base(form)); k != "" {
			return k
		}
		if slices.Contains(s.binaries, form) || slices.Contains(s.registeredBinaries(), form) {
			return "veto"
		}
	}
	if s.fs != nil {
		if _, live := s.fs.(toolpath.OS); !live {
			return "" // off the live filesystem, files are not opened
		}
	}
	if found == toolpath.Missing {
		return "" // no file: nothing to compare or read
	}
	fi, err := os.Stat(p.Real)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	for _, bi := range lk.binaryFiles(s) {
		if os.SameFile(fi, bi) {
			return "veto"
		}
	}
	if systemDir(p.Real) || !ownFile(fi) {
		return "" // another user's (root's): not a copy the agent made
	}
	return builtFromVeto(p.Real)
}

// builtFromVeto reads the Go build information of a file: a binary built
// from veto's commands is veto, whatever its name.
func builtFromVeto(file string) string {
	bi, err := buildinfo.ReadFile(file)
	if err != nil {
		return ""
	}
	switch {
	case strings.HasSuffix(bi.Path, "/cmd/veto-hook"):
		return "veto-hook"
	case strings.HasSuffix(bi.Path, "/cmd/veto") && strings.Contains(bi.Path, "veto"):
		return "veto"
	}
	return ""
}

// systemDir reports whether a program lies where only root installs.
func systemDir(p string) bool {
	for _, d := range []string{"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/lib/", "/usr/libexec/", "/lib/"} {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// shellBuiltin reports whether a word runs no file: a shell builtin or
// keyword, which PATH does not hold.
func shellBuiltin(w string) bool {
	switch w {
	case "cd", "echo", "printf", "export", "set", "unset", "eval", "exec", "source", ".", "test", "[", "[[", "true", "false",
		"read", "local", "declare", "typeset", "alias", "type", "command", "builtin", "pwd", "shift", "return", "exit",
		"trap", "wait", "jobs", "fg", "bg", "umask", "ulimit", "hash", "let", ":", "kill", "pushd", "popd", "dirs", "getopts":
		return true
	}
	return false
}

// goRun finds go run of one of veto's commands: its package as a path
// (./cmd/veto, .../cmd/veto-hook, a main.go below one) or a module
// path (github.com/vetohq/veto/cmd/veto@v1). It returns the program and
// the argv veto would see.
func goRun(c shell.Command) (kind string, argv []shell.Word, ok bool) {
	if len(c.Argv) < 3 || c.Argv[0].Unknown || c.Argv[1].Unknown {
		return "", nil, false
	}
	if !slices.ContainsFunc(c.Argv[0].Values, func(v string) bool { return path.Base(v) == "go" }) ||
		!slices.Contains(c.Argv[1].Values, "run") {
		return "", nil, false
	}
	for i, a := range c.Argv[2:] {
		for _, v := range a.Values {
			pkg, _, _ := strings.Cut(v, "@")
			pkg = strings.TrimSuffix(strings.TrimSuffix(pkg, "/main.go"), "/")
			if pkg == "." || pkg == "" {
				pkg = c.Dir
			}
			if k := vetoName(path.Base(pkg)); k != "" && path.Base(path.Dir(pkg)) == "cmd" {
				return k, c.Argv[2+i:], true
			}
		}
	}
	return "", nil, false
}

// registeredBinaries are the programs the clients' user settings
// register as veto's hook, resolved; read once, on first need.
func (s *Set) registeredBinaries() []string {
	s.registered.Do(func() {
		if s.fs != nil {
			if _, live := s.fs.(toolpath.OS); !live {
				return
			}
		}
		for _, c := range clients.All {
			if c.Settings.User == "" {
				continue
			}
			dir := s.home
			if c.Settings.UserDirEnv != "" && s.getenv(c.Settings.UserDirEnv) != "" {
				dir = s.getenv(c.Settings.UserDirEnv)
			} else {
				dir = path.Join(dir, path.Dir(c.Settings.User))
			}
			s.registeredBins = append(s.registeredBins, s.hookPrograms(path.Join(dir, path.Base(c.Settings.User)))...)
		}
	})
	return s.registeredBins
}

// maxSettings bounds the settings file read for registered binaries.
const maxSettings = 1 << 20

// hookPrograms are the absolute programs of the commands a settings file
// holds whose base name is veto's.
func (s *Set) hookPrograms(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil || len(b) > maxSettings {
		return nil
	}
	var doc any
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		case string:
			f := strings.Fields(clients.Unguarded(x))
			if len(f) > 0 && strings.HasPrefix(f[0], "/") && vetoName(path.Base(strings.Trim(f[0], `"'`))) != "" {
				if p, err := toolpath.Resolve(strings.Trim(f[0], `"'`), s.env("/")); err == nil {
					out = append(out, p.Real)
				}
			}
		}
	}
	walk(doc)
	return out
}

// findBinaries resolves veto's binaries: this one and those beside it,
// the policy's, and veto and veto-hook on PATH.
func (s *Set) findBinaries(exe string, more []string) {
	add := func(raw string) {
		if p, err := toolpath.Resolve(raw, s.env("/")); err == nil {
			for _, f := range p.Forms() {
				if !slices.Contains(s.binaries, f) {
					s.binaries = append(s.binaries, f)
				}
			}
		}
	}
	if strings.HasPrefix(exe, "/") {
		if p, err := toolpath.Resolve(exe, s.env("/")); err == nil {
			s.self = p.Real
		}
		add(exe)
		add(path.Join(path.Dir(exe), "veto"))
		add(path.Join(path.Dir(exe), "veto-hook"))
	}
	for _, b := range more {
		add(b)
	}
	for _, d := range s.path {
		for _, n := range []string{"veto", "veto-hook"} {
			if _, err := os.Lstat(d + "/" + n); err == nil {
				add(d + "/" + n)
			}
		}
	}
}

// splitPath returns PATH's absolute directories.
func splitPath(p string) []string {
	var out []string
	for _, d := range strings.Split(p, ":") {
		if strings.HasPrefix(d, "/") && !slices.Contains(out, d) {
			out = append(out, path.Clean(d))
		}
	}
	return out
}
