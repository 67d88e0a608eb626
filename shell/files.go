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
			// {} is each file found below the start points.
			argv := make([]word, len(sub))
			for k, x := range sub {
				argv[k] = x
				if !x.unknown && strings.Contains(x.lit, "{}") {
					y := word{}
					for _, s := range starts {
						for _, v := range s.vals {
							y.vals = append(y.vals, strings.ReplaceAll(x.lit, "{}", path.Join(v, "*")))
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
	if !o.has("e", "expression", "f", "file") && len(ops) > 0 {
		ops = ops[1:]
	}
	inPlace := o.has("i", "in-place")
	for k := range o.set {
		if strings.HasPrefix(k, "in-place") {
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
	o := parseOpts(args, optSpec{val: "fCT", long: map[string]bool{"file": true, "directory": true, "files-from": true, "exclude": true}}, false)
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
		if o.has("C", "directory") {
			w.optFiles(&o, true, nil, "C", "directory")
		} else {
			w.access(lit("."), true, false)
		}
	default:
		archive(false)
	}
	return stage{}
}

func runZip(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "bnPtx", long: map[string]bool{}}, false)
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
