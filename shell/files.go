package shell

// File accesses: what rm, find, cp, mv, ln, tar, zip, sed, grep and the
// other file tools read and write, and the files options name.

import (
	"path"
	"strings"
)

// rmSpec is rm's options; every long one is listed, so --recur --forc is
// read as getopt_long reads it.
var rmSpec = optSpec{flags: []string{"recursive", "force", "interactive", "dir", "one-file-system", "no-preserve-root",
	"preserve-root", "verbose", "help", "version"}}

// runRm judges a removal: every operand is written (deleted). A recursive
// forced removal of something veto cannot determine is refused here; of
// known paths, the file rules judge them as removals.
func runRm(w *walker, c *cmd) stage {
	o := parseOpts(c.args, rmSpec, false)
	recursive := o.has("r", "R", "recursive")
	force := o.has("f", "force")
	rf := recursive && force
	unknown := c.stdinArgs && rf
	for _, x := range o.operands {
		if x.unknown {
			unknown = true
		}
	}
	if rf && (unknown || w.strict) {
		w.finding(RmRecursiveForce, c.seg, "The command force-removes a tree veto cannot determine, so it is refused.")
		return stage{}
	}
	// rm removes a link it is given, not what the link points at (but
	// through a trailing slash).
	w.unlinking = true
	defer func() { w.unlinking = false }()
	w.keepsContent = true // removed, not rewritten
	for _, x := range o.operands {
		w.access(x, true, recursive) // without -f it removes as much (no one answers its prompts)
	}
	w.keepsContent = false
	return stage{}
}

// findValued are find's predicates that take one argument.
var findValued = map[string]bool{"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true, "-iregex": true,
	"-type": true, "-xtype": true, "-user": true, "-group": true, "-perm": true, "-size": true, "-mtime": true, "-atime": true,
	"-ctime": true, "-mmin": true, "-amin": true, "-cmin": true, "-newer": true, "-anewer": true, "-cnewer": true,
	"-maxdepth": true, "-mindepth": true, "-printf": true, "-samefile": true, "-links": true, "-inum": true,
	"-wholename": true, "-iwholename": true, "-lname": true, "-ilname": true, "-uid": true, "-gid": true, "-used": true,
	"-context": true, "-fstype": true, "-regextype": true, "-files0-from": true}

// findWrites are find's predicates that write the file they name.
var findWrites = map[string]bool{"-fprint": true, "-fprint0": true, "-fls": true, "-fprintf": true}

func runFind(w *walker, c *cmd) stage {
	args := c.args
	// The options before the start points: -L follows every symlink, -H
	// those named as start points, -P (the default) none.
	follow := false
	for len(args) > 0 && !args[0].unknown {
		a := args[0].lit
		switch {
		case a == "-L":
			follow = true
		case a == "-H" || a == "-P":
			follow = false
		case a == "-D":
			if len(args) > 1 {
				args = args[1:]
			}
		case strings.HasPrefix(a, "-O") || strings.HasPrefix(a, "-D"):
		default:
			goto starts
		}
		args = args[1:]
	}
starts:
	var starts []word
	for len(args) > 0 && (args[0].unknown || !(strings.HasPrefix(args[0].lit, "-") || args[0].lit == "(" || args[0].lit == "!")) {
		starts = append(starts, args[0])
		args = args[1:]
	}
	if len(starts) == 0 {
		starts = []word{lit(".")}
	}
	// With -exec, a command runs on every file below the start points:
	// each is read with its tree.
	execs := false
	for _, a := range args {
		switch a.lit {
		case "-exec", "-execdir", "-ok", "-okdir":
			execs = true
		case "-follow":
			follow = true
		}
	}
	for _, s := range starts {
		if execs {
			w.readTree(s)
		} else {
			w.access(s, false, false)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		switch {
		case args[i].unknown:
		case a == "-delete":
			w.finding(FindDelete, c.seg, "The command deletes every file find matches.")
		case findValued[a]:
			i++
		case findWrites[a]:
			if i+1 < len(args) {
				w.access(args[i+1], true, false)
			}
			i++
			if a == "-fprintf" {
				i++
			}
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].lit == ";" || args[j].lit == "+") {
				j++
			}
			sub := args[i+1 : j]
			i = j
			if len(sub) == 0 {
				continue
			}
			// {} is each file found below the start points. A removal of
			// what find finds without following symlinks removes files
			// below the start point and the links themselves, never what
			// a link points at: it is judged as the removal of a file
			// below the start point ("start/{}"), not of the start's
			// entries as a glob would resolve them (through a top-level
			// symlink out of the workspace).
			removes := !follow && !sub[0].unknown && (sub[0].lit == "rm" || sub[0].lit == "unlink")
			argv := make([]word, len(sub))
			for k, x := range sub {
				argv[k] = x
				if !x.unknown && strings.Contains(x.lit, "{}") {
					y := word{}
					for _, s := range starts {
						for _, v := range s.vals {
							found := path.Join(v, "*")
							if removes && x.lit == "{}" {
								found = path.Join(v, "{}")
							}
							y.vals = append(y.vals, strings.ReplaceAll(x.lit, "{}", found))
						}
					}
					if len(y.vals) == 0 {
						y.unknown = true
					} else {
						y.lit = y.vals[0]
					}
					argv[k] = y
				}
			}
			if rmRecursiveForce(argv, w) {
				w.finding(RmRecursiveForce, c.seg, "The command force-removes every tree find matches.")
				continue
			}
			w.command(argv, c.depth, nil, false, "")
		}
	}
	return stage{}
}

// rmRecursiveForce reports whether argv, after the wrappers veto unwraps,
// is rm -r -f.
func rmRecursiveForce(argv []word, w *walker) bool {
	probe := &Report{}
	pw := newWalker(w.env, probe)
	pw.remote = true
	pw.strict = true
	pw.command(argv, 0, nil, false, "")
	for _, f := range probe.Findings {
		if f.Reason == RmRecursiveForce {
			return true
		}
	}
	return false
}

func runLn(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "tS", long: map[string]bool{"target-directory": true, "suffix": true}}, false)
	ops := o.operands
	w.keepsContent = true // a link holds what its target holds (below)
	defer func() { w.keepsContent = false }()
	// What a link points at is read through it afterwards, by this command
	// or a later one: each target is judged as a read, with its tree.
	// A relative target is relative to the link's directory: the last
	// operand's, or the last operand itself when it is a directory, or -t's.
	targets, bases := ops, []string{}
	if dir, ok := o.get("t", "target-directory"); ok {
		bases = append(bases, dir)
	} else if len(ops) > 1 {
		targets = ops[:len(ops)-1]
		if l := ops[len(ops)-1]; !l.unknown {
			bases = append(bases, path.Dir(l.lit), l.lit)
		}
	}
	for _, t := range targets {
		w.readTree(t)
		w.readTreeUnder(t, bases)
	}
	// The links made, for a write through one later in the command.
	name := func(t word) string {
		if t.unknown || len(t.vals) == 0 {
			return ""
		}
		return path.Base(t.vals[0])
	}
	for _, t := range targets {
		if t.unknown || len(t.vals) == 0 {
			continue
		}
		at := ""
		if dir, ok := o.get("t", "target-directory"); ok {
			at = path.Join(dir, name(t))
		} else if len(ops) == 1 {
			at = name(t)
		} else if l := ops[len(ops)-1]; !l.unknown {
			at = l.lit
			if len(targets) > 1 || strings.HasSuffix(at, "/") {
				at = path.Join(at, name(t))
			}
		}
		// Made once the link itself is written: writing the link is not
		// writing its target.
		defer w.madeLink(at, t.vals[0])
	}
	if dir, ok := o.get("t", "target-directory"); ok {
		for _, t := range ops {
			w.access(lit(path.Join(dir, path.Base(t.lit))), true, false)
		}
		return stage{}
	}
	switch len(ops) {
	case 0:
	case 1:
		if !ops[0].unknown {
			w.access(lit(path.Base(ops[0].lit)), true, false)
		}
	default:
		l := ops[len(ops)-1]
		w.access(l, true, false)
		if len(ops) == 2 && !ops[0].unknown && !l.unknown && w.r.written != nil {
			// A link to a file the command wrote runs what was written.
			t := ops[0].lit
			if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && o.has("s", "symbolic") {
				t = path.Join(path.Dir(l.lit), t)
			}
			if wr := w.writtenAt(lit(t)); wr != nil {
				w.wrote(l, wr.vals, false, wr.fetched)
			}
		}
	}
	return stage{}
}

// runCopy is cp (sources read) and mv (sources read and removed); the last
// operand, or -t's directory, is written.
func runCopy(move bool) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, optSpec{val: "tS", long: map[string]bool{"target-directory": true, "suffix": true}}, false)
		ops := o.operands
		if dir, ok := o.get("t", "target-directory"); ok {
			ops = append(ops, lit(dir))
		}
		if len(ops) < 2 {
			return stage{}
		}
		// mv takes a directory with everything below it; so does cp -r.
		tree := move || o.has("r", "R", "a", "recursive", "archive")
		for _, s := range ops[:len(ops)-1] {
			if move {
				w.keepsContent = true // moved, not changed: what it holds goes with it (below)
				w.access(s, true, false)
				w.keepsContent = false
			}
			if tree {
				w.readTree(s)
			} else {
				w.access(s, false, false)
			}
		}
		dst := ops[len(ops)-1]
		w.access(dst, true, false)
		// cp -s and cp -l make links, as ln does.
		if !move && o.has("s", "l", "symbolic-link", "link") {
			dest := ops[len(ops)-1]
			for _, src := range ops[:len(ops)-1] {
				if src.unknown || dest.unknown || len(src.vals) == 0 {
					continue
				}
				at := dest.lit
				if len(ops) > 2 || strings.HasSuffix(at, "/") {
					at = path.Join(at, path.Base(src.vals[0]))
				}
				w.madeLink(at, src.vals[0])
			}
		}
		if w.r.written != nil {
			// A copy of a file this command wrote holds what was written
			// (at the destination, or in it when it is a directory).
			for _, s := range ops[:len(ops)-1] {
				wr := w.writtenAt(s)
				if wr == nil {
					w.forget(dst)
					continue
				}
				w.wrote(dst, wr.vals, false, wr.fetched)
				if !s.unknown && !dst.unknown {
					w.wrote(lit(path.Join(dst.lit, path.Base(s.lit))), wr.vals, false, wr.fetched)
				}
				if move {
					w.forget(s)
				}
			}
		}
		return stage{}
	}
}

func runInstall(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "mogtS", long: map[string]bool{"mode": true, "owner": true, "group": true, "target-directory": true, "suffix": true}}, false)
	if o.has("d", "directory") {
		for _, d := range o.operands {
			w.access(d, true, false)
		}
		return stage{}
	}
	return runCopy(false)(w, &cmd{name: c.name, args: c.args, depth: c.depth, seg: c.seg})
}

// writesAll is a program every operand of which it writes.
func writesAll(spec optSpec) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, false)
		// touch changes times, mkdir and rmdir directories; tee records
		// what it writes below.
		w.keepsContent = c.name == "touch" || c.name == "tee" || c.name == "mkdir" || c.name == "rmdir" || c.name == "mkfifo"
		for _, f := range o.operands {
			w.access(f, true, false)
		}
		w.keepsContent = false
		if c.name == "tee" {
			var text []string
			fetched := false
			if len(c.up) > 0 {
				text, fetched = c.up[len(c.up)-1].text, c.up[len(c.up)-1].fetch
			}
			for _, f := range o.operands {
				w.wrote(f, text, o.has("a", "append"), fetched)
			}
		}
		if c.name == "touch" || c.name == "truncate" {
			w.optFiles(&o, false, nil, "r", "reference")
		}
		if c.name == "tee" && len(c.up) > 0 {
			return c.up[len(c.up)-1] // tee passes its input on
		}
		return stage{}
	}
}

// readsAll is a program every operand of which it reads.
func readsAll(spec optSpec) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, false)
		for _, f := range o.operands {
			w.access(f, false, false)
		}
		if c.name == "tree" || c.name == "iconv" {
			w.optFiles(&o, true, notStdio, "o", "output") // the file they print to
		}
		if c.name != "cat" {
			return stage{}
		}
		// cat prints the files it reads, or passes its input on.
		if len(o.operands) == 0 {
			if len(c.up) > 0 {
				return c.up[len(c.up)-1]
			}
			return stage{}
		}
		for _, f := range o.operands {
			if f.unknown {
				return stage{}
			}
		}
		if p := w.printed(o.operands); p != nil {
			return *p // cat x.sh | sh: what the command wrote there
		}
		return stage{file: true}
	}
}

// readsAfterPattern is grep, awk, jq: the first operand is a pattern or
// program unless one was given by option; the rest are files read.
func readsAfterPattern(spec optSpec, patternOpt, fileOpt string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, false)
		ops := o.operands
		given := (patternOpt != "" && o.has(patternOpt, "regexp")) || (fileOpt != "" && o.has(fileOpt, "file", "from-file"))
		if fileOpt != "" {
			w.optFiles(&o, false, nil, fileOpt, "file", "from-file")
		}
		if !given && len(ops) > 0 {
			ops = ops[1:]
		}
		// rg, ag and ack search directories by default; grep with -r.
		tree := c.name == "rg" || c.name == "ag" || c.name == "ack" || o.has("r", "R", "recursive", "dereference-recursive")
		if d, ok := o.get("d", "directories"); ok && d == "recurse" {
			tree = true
		}
		if tree && len(ops) == 0 {
			w.readTree(lit(".")) // a recursive search with no path searches the working directory
		}
		for _, f := range ops {
			if tree {
				w.readTree(f)
				continue
			}
			w.access(f, false, false)
		}
		return stage{}
	}
}

func runCompress(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "S", long: map[string]bool{"suffix": true}}, false)
	write := !o.has("c", "stdout", "to-stdout", "t", "test", "l", "list", "k", "keep")
	for _, f := range o.operands {
		w.access(f, false, false)
		if write {
			w.access(f, true, false)
		}
	}
	return stage{}
}

func runSed(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "efl", long: map[string]bool{"expression": true, "file": true, "line-length": true},
		flags: []string{"in-place", "quiet", "silent", "debug", "posix", "regexp-extended", "separate", "sandbox", "unbuffered",
			"null-data", "zero-terminated", "follow-symlinks", "binary", "help", "version"}}, false)
	ops := o.operands
	w.optFiles(&o, false, nil, "f", "file")
	for _, x := range o.all("e", "expression") {
		w.sedScript(c, x)
	}
	if !o.has("e", "expression", "f", "file") && len(ops) > 0 {
		w.sedScript(c, ops[0])
		ops = ops[1:]
	}
	inPlace := o.has("i", "in-place")
	for _, kv := range o.set {
		if strings.HasPrefix(kv.name, "in-place") {
			inPlace = true
		}
	}
	for _, f := range ops {
		w.access(f, false, false)
		if inPlace {
			w.access(f, true, false)
		}
	}
	return stage{}
}

func runSort(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "kotST", long: map[string]bool{"key": true, "output": true, "field-separator": true, "buffer-size": true, "temporary-directory": true, "files0-from": true}}, false)
	w.optFiles(&o, true, nil, "o", "output")
	for _, f := range o.operands {
		w.access(f, false, false)
	}
	return stage{}
}

func runUniq(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "fsw", long: map[string]bool{"skip-fields": true, "skip-chars": true, "check-chars": true}}, false)
	if len(o.operands) > 0 {
		w.access(o.operands[0], false, false)
	}
	if len(o.operands) > 1 {
		w.access(o.operands[1], true, false)
	}
	return stage{}
}

func runTar(w *walker, c *cmd) stage {
	args := c.args
	if len(args) > 0 && !args[0].unknown && !strings.HasPrefix(args[0].lit, "-") {
		// Old style, "cfz ARCHIVE dir": each letter that takes a value takes
		// the next word, in the order of the letters.
		old, rest := args[0].lit, args[1:]
		args = nil
		for _, l := range old {
			args = append(args, lit("-"+string(l)))
			if strings.ContainsRune("fCT", l) && len(rest) > 0 {
				args, rest = append(args, rest[0]), rest[1:]
			}
		}
		args = append(args, rest...)
	}
	short := "fCTIF"
	if c.name == "bsdtar" {
		short += "s" // bsdtar's -s rewrites member names, as GNU tar's --transform
	}
	o := parseOpts(args, optSpec{val: short, long: map[string]bool{"file": true, "directory": true, "files-from": true, "exclude": true,
		"transform": true, "xform": true, "to-command": true, "use-compress-program": true, "checkpoint-action": true, "info-script": true, "new-volume-script": true,
		"rsh-command": true}}, false)
	// Programs tar runs: a compressor, a command each member is piped to,
	// a volume script, a checkpoint action, the remote shell.
	w.unseenOptions(c, args, "--checkpoint-action=", "--to-command=", "--use-compress-program=", "--info-script=", "--new-volume-script=", "--rsh-command=")
	for _, x := range o.all("to-command", "use-compress-program", "I", "info-script", "F", "new-volume-script", "rsh-command") {
		w.scriptOf(c, x)
	}
	for _, x := range o.all("checkpoint-action") {
		if x.unknown {
			w.finding(CannotVouch, c.seg, "tar is given a checkpoint action veto cannot see, so it cannot vouch for it.")
			continue
		}
		for _, v := range x.vals {
			if command, ok := strings.CutPrefix(v, "exec="); ok {
				w.fork().script(command, c.depth+1)
			}
		}
	}
	archive := func(write bool) { w.optFiles(&o, write, notStdio, "f", "file") }
	switch {
	case o.has("c", "create", "r", "append", "u", "update"):
		archive(true)
		w.optFiles(&o, false, nil, "T", "files-from")
		// tar takes a directory with everything below it; a relative one
		// below a -C directory, when one is given.
		dirs := o.all("C", "directory")
		for _, d := range dirs {
			if d.unknown {
				w.finding(CannotVouch, c.seg, "The archive's files lie in a directory veto cannot see (tar -C with a variable or an expansion).")
				return stage{}
			}
		}
		var bases []string
		for _, d := range dirs {
			bases = append(bases, d.vals...)
		}
		for _, f := range o.operands {
			w.readTree(f)
			w.readTreeUnder(f, bases)
		}
	case o.has("x", "extract", "get"):
		archive(false)
		if o.has("P", "absolute-names") {
			w.finding(ArchiveAnywhere, c.seg, "The archive is extracted with its absolute names kept, so its files may land anywhere.")
		}
		dirs := []string{"."}
		if o.has("C", "directory") {
			w.optFiles(&o, true, nil, "C", "directory")
			dirs = nil
			for _, d := range o.all("C", "directory") {
				dirs = append(dirs, d.vals...)
			}
		} else {
			w.access(lit("."), true, false)
		}
		// A name rewrite (--transform 's,^,.git/hooks/,', bsdtar -s) puts
		// members below the directory its replacement names.
		rewrites := o.all("transform", "xform")
		sed := len(rewrites)
		if c.name == "bsdtar" {
			rewrites = append(rewrites, o.all("s")...) // /old/new/, without the s
		}
		for n, x := range rewrites {
			if x.unknown {
				w.access(x, true, false)
				continue
			}
			for _, v := range x.vals {
				if n >= sed {
					v = "s" + v
				}
				if d := rewriteDir(v); d != "" {
					for _, base := range dirs {
						w.access(lit(path.Join(base, d)), true, false)
					}
				}
			}
		}
	default:
		archive(false)
	}
	return stage{}
}

// rewriteDir is the directory the replacement of a sed-like name rewrite
// (s/REGEX/REPLACEMENT/FLAGS, any delimiter) names: its text up to the
// last slash before a back-reference (&, \1), leading slashes stripped
// as tar strips them; "" when it names none.
func rewriteDir(expr string) string {
	if len(expr) < 4 || expr[0] != 's' {
		return ""
	}
	parts := strings.Split(expr[2:], expr[1:2])
	if len(parts) < 2 {
		return ""
	}
	repl := parts[1]
	if i := strings.IndexAny(repl, "&\\"); i >= 0 {
		repl = repl[:i]
	}
	repl = strings.TrimLeft(repl, "/")
	i := strings.LastIndexByte(repl, '/')
	if i <= 0 {
		return ""
	}
	dir := repl[:i]
	if dir[0] == '~' {
		dir = "./" + dir // tar makes a directory named ~
	}
	return dir
}

func runZip(w *walker, c *cmd) stage {
	// -TT and --unzip-command name the command zip -T tests the archive
	// with, run by the shell.
	args := make([]word, 0, len(c.args))
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a.unknown:
			if w.unseenOption(c, a, "--unzip-command=", "-TT") {
				continue
			}
		case (a.lit == "-TT" || a.lit == "--unzip-command") && i+1 < len(c.args):
			i++
			w.scriptOf(c, c.args[i])
			continue
		case strings.HasPrefix(a.lit, "--unzip-command="):
			w.scriptOf(c, tails(a, "--unzip-command="))
			continue
		case strings.HasPrefix(a.lit, "-TT") && len(a.lit) > 3:
			w.scriptOf(c, tails(a, "-TT"))
			continue
		}
		args = append(args, a)
	}
	o := parseOpts(args, optSpec{val: "bnPtx", long: map[string]bool{}}, false)
	if len(o.operands) == 0 {
		return stage{}
	}
	w.access(o.operands[0], true, false)
	for _, f := range o.operands[1:] {
		if o.has("r", "R", "recurse-paths") {
			w.readTree(f)
		} else {
			w.access(f, false, false)
		}
	}
	return stage{}
}

func runUnzip(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.lit == "--" {
			break
		}
		if !a.unknown && strings.HasPrefix(a.lit, "-") && !strings.HasPrefix(a.lit, "--") && strings.Contains(a.lit, ":") {
			w.finding(ArchiveAnywhere, c.seg, "The archive is extracted with its parent and absolute paths kept, so its files may land anywhere.")
		}
	}
	o := parseOpts(c.args, optSpec{val: "dxP"}, false)
	if len(o.operands) > 0 {
		w.access(o.operands[0], false, false)
	}
	if o.has("l", "t", "p", "Z", "v") {
		return stage{}
	}
	if o.has("d") {
		w.optFiles(&o, true, nil, "d")
	} else {
		w.access(lit("."), true, false)
	}
	return stage{}
}

// runCpio is cpio: -i extracts its input's members below -D's directory
// (or the current one), where absolute names stay absolute unless
// --no-absolute-filenames; -p copies into the directory operand; -o
// writes an archive of the names it reads.
func runCpio(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "DEFHIMORC", long: map[string]bool{"directory": true, "file": true, "format": true,
		"pattern-file": true, "owner": true, "message": true, "block-size": true, "io-size": true, "rsh-command": true}}, false)
	switch {
	case o.has("i", "extract"):
		w.optFiles(&o, false, notStdio, "F", "I", "file")
		if o.has("t", "list") {
			return stage{}
		}
		fromRPM := len(c.up) > 0 && c.up[len(c.up)-1].rel
		if !o.has("no-absolute-filenames") && !fromRPM {
			w.finding(ArchiveAnywhere, c.seg, "The archive is extracted with its absolute names kept, so its files may land anywhere.")
		}
		if o.has("D", "directory") {
			w.optFiles(&o, true, nil, "D", "directory")
		} else {
			w.access(lit("."), true, false)
		}
	case o.has("p", "pass-through"):
		if len(o.operands) > 0 {
			w.access(o.operands[len(o.operands)-1], true, false)
		}
	case o.has("o", "create"):
		w.optFiles(&o, true, notStdio, "F", "O", "file")
	}
	return stage{}
}

// runRpm2cpio reads a package and prints its payload, an archive whose
// members are all relative ("./usr/bin/x").
func runRpm2cpio(w *walker, c *cmd) stage {
	for _, a := range c.args {
		w.access(a, false, false)
	}
	return stage{rel: true}
}

// run7z is 7z, 7za and 7zr: x and e extract below -o's directory (or the
// current one), -spf keeping absolute paths; a and u write the archive.
func run7z(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown {
		return stage{}
	}
	verb := strings.ToLower(c.args[0].lit)
	out, ops, anywhere := word{}, []word(nil), false
	hasOut := false
	for _, a := range c.args[1:] {
		switch {
		case a.unknown:
			ops = append(ops, a)
		case strings.HasPrefix(a.lit, "-o"):
			out, hasOut = tails(a, "-o"), true
		case strings.HasPrefix(a.lit, "-spf"):
			anywhere = true
		case strings.HasPrefix(a.lit, "-"):
		default:
			ops = append(ops, a)
		}
	}
	switch verb {
	case "x", "e":
		if len(ops) > 0 {
			w.access(ops[0], false, false)
		}
		if anywhere {
			w.finding(ArchiveAnywhere, c.seg, "The archive is extracted with its absolute paths kept, so its files may land anywhere.")
		}
		if hasOut {
			w.access(out, true, false)
		} else {
			w.access(lit("."), true, false)
		}
	case "a", "u", "d", "rn":
		if len(ops) > 0 {
			w.access(ops[0], true, false)
		}
		for _, f := range ops[1:] {
			w.readTree(f)
		}
	}
	return stage{}
}

// optFiles judges every value given to the options names as a file the
// command reads or writes (write): each value a word may have, and, for a
// write, a value veto cannot know statically as an unknown file (which no
// root holds). An unknown read names nothing to judge. file, when set,
// says which values name a file, and which file.
func (w *walker) optFiles(o *opts, write bool, file func(v string) (string, bool), names ...string) {
	for _, x := range o.all(names...) {
		if x.unknown {
			if write {
				w.access(x, true, false)
			}
			continue
		}
		for _, v := range x.vals {
			if file != nil {
				var ok bool
				if v, ok = file(v); !ok {
					continue
				}
			}
			w.access(lit(v), write, false)
		}
	}
}

// notStdio is a file option's value that names a file: not "-" (the
// standard streams) and not empty.
func notStdio(v string) (string, bool) { return v, v != "-" && v != "" }
