package shell

import (
	"net/url"
	"path"
	"strings"
)

// nested runs operands as a command of its own.
func (w *walker) nested(c *cmd, argv []word) stage {
	return w.command(argv, c.depth, c.up, c.stdinArgs, c.repl)
}

func wrapOpts(spec optSpec) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, true)
		return w.nested(c, o.operands)
	}
}

// wrapOperands is a wrapper whose first n operands are its own (timeout's
// duration, taskset's mask) before the command.
func wrapOperands(spec optSpec, n int) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, true)
		if len(o.operands) <= n {
			return stage{}
		}
		return w.nested(c, o.operands[n:])
	}
}

func wrapSudo(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "ugpCDrtTUh", long: map[string]bool{"user": true, "group": true, "prompt": true,
		"close-from": true, "chdir": true, "role": true, "type": true, "other-user": true, "host": true, "command-timeout": true}}, true)
	if o.has("e", "edit") {
		for _, f := range o.operands {
			w.access(f, true, false)
		}
		return stage{}
	}
	return w.nested(c, o.operands)
}

// wrapEnv is env: options, assignments, then the command. With no
// command, env prints the environment.
func wrapEnv(w *walker, c *cmd) stage {
	args := c.args
	for len(args) > 0 {
		a := args[0]
		if a.unknown {
			break
		}
		s := a.lit
		next := func() (string, bool) {
			if len(args) < 2 {
				return "", false
			}
			args = args[1:]
			return args[0].lit, true
		}
		switch {
		case s == "--":
			args = args[1:]
			goto command
		case s == "-" || s == "-i" || s == "-0" || s == "-v" || s == "--ignore-environment" || s == "--null" || s == "--debug":
		case s == "-u" || s == "--unset" || s == "-P":
			next()
		case s == "-C" || s == "--chdir":
			if d, ok := next(); ok {
				w.chdir(lit(d))
			}
		case strings.HasPrefix(s, "--chdir="):
			w.chdir(lit(s[len("--chdir="):]))
		case strings.HasPrefix(s, "-C"):
			w.chdir(lit(s[2:]))
		case s == "-S" || s == "--split-string" || strings.HasPrefix(s, "-S") || strings.HasPrefix(s, "--split-string="):
			var str string
			switch {
			case s == "-S" || s == "--split-string":
				str, _ = next()
			case strings.HasPrefix(s, "--split-string="):
				str = s[len("--split-string="):]
			default:
				str = s[2:]
			}
			var split []word
			for _, f := range strings.Fields(str) {
				split = append(split, lit(f))
			}
			args = append(split, args[1:]...)
			continue
		case strings.HasPrefix(s, "-"):
		case looksAssign(s):
			name, val, _ := strings.Cut(s, "=")
			w.envHosts(name, lit(val))
		default:
			goto command
		}
		args = args[1:]
	}
command:
	if len(args) == 0 {
		w.r.find(RuleEnvDump, "env_dump", c.seg, "The command prints the environment, which holds secrets.")
		return stage{}
	}
	return w.nested(c, args)
}

func wrapWatch(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "nqs", long: map[string]bool{"interval": true}}, true)
	if o.has("x", "exec") {
		return w.nested(c, o.operands)
	}
	return w.scriptOf(c, joinWords(o.operands))
}

// joinWords joins words with spaces; unknown if any is.
func joinWords(ws []word) word {
	var parts []string
	for _, x := range ws {
		if x.unknown {
			return word{unknown: true}
		}
		parts = append(parts, x.lit)
	}
	return lit(strings.Join(parts, " "))
}

// scriptOf analyses a word as a shell script one level deeper.
func (w *walker) scriptOf(c *cmd, script word) stage {
	if script.unknown {
		w.finding("cannot_vouch", c.seg, "The command runs a script veto cannot see (a variable, an expansion or input), so it cannot vouch for it.")
		return stage{}
	}
	for _, v := range script.vals {
		w.fork().script(v, c.depth+1)
	}
	return stage{}
}

func wrapXargs(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "aEdIJLnPs", long: map[string]bool{"arg-file": true, "delimiter": true,
		"max-args": true, "max-procs": true, "max-chars": true, "process-slot-var": true}}, true)
	repl := ""
	if v, ok := o.get("I", "J"); ok {
		repl = v
	}
	if v, ok := o.get("i", "replace"); ok {
		repl = v
		if repl == "" {
			repl = "{}"
		}
	}
	w.optFiles(&o, false, nil, "a", "arg-file")
	if len(o.operands) == 0 {
		return stage{}
	}
	// Input items are appended, or put where the placeholder is: either
	// way the command's targets come from input veto cannot see.
	return w.command(o.operands, c.depth, nil, true, orDefault(repl, "\x00none"))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// wrapParallel is GNU parallel (and sem): options, a command, then
// argument lists after ":::". With no command, the arguments (or the input)
// are the commands.
func wrapParallel(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "jSnNLlEIad", long: map[string]bool{"jobs": true, "sshlogin": true, "halt": true,
		"max-args": true, "delay": true, "timeout": true, "joblog": true, "results": true, "tmpdir": true, "workdir": true, "wd": true,
		"arg-file": true, "colsep": true, "env": true, "tag-string": true, "tagstring": true, "sshloginfile": true, "basefile": true,
		"return": true, "memfree": true, "load": true, "retries": true, "block": true, "blocksize": true, "id": true}}, true)
	var command, values []word
	inArgs, sawSep := false, false
	for _, a := range o.operands {
		if !a.unknown && strings.HasPrefix(a.lit, ":::") {
			inArgs, sawSep = true, true
			continue
		}
		if inArgs {
			values = append(values, a)
		} else {
			command = append(command, a)
		}
	}
	repl := "{}"
	if v, ok := o.get("I"); ok {
		repl = v
	}
	if len(command) == 0 {
		if sawSep {
			for _, v := range values {
				w.scriptOf(c, v)
			}
			return stage{}
		}
		return w.fromStdin(c)
	}
	if !sawSep {
		return w.command(command, c.depth, nil, true, repl)
	}
	// The argument values are known: put them where they go.
	vals := word{}
	for _, v := range values {
		if v.unknown {
			vals = word{unknown: true}
			break
		}
		vals.vals = append(vals.vals, v.vals...)
	}
	if !vals.unknown && len(vals.vals) > 0 {
		vals.lit = vals.vals[0]
	}
	placed := false
	argv := make([]word, 0, len(command)+1)
	for _, a := range command {
		if !a.unknown && strings.Contains(a.lit, repl) {
			placed = true
			if vals.unknown {
				argv = append(argv, vals)
				continue
			}
			x := word{}
			for _, v := range vals.vals {
				x.vals = append(x.vals, strings.ReplaceAll(a.lit, repl, v))
			}
			if len(x.vals) > 0 {
				x.lit = x.vals[0]
			}
			argv = append(argv, x)
			continue
		}
		argv = append(argv, a)
	}
	if !placed && len(values) > 0 {
		argv = append(argv, vals)
	}
	return w.command(argv, c.depth, nil, false, "")
}

// fromStdin analyses commands a program reads from its input: the literal
// text an upstream echo printed, or nothing veto can vouch for.
func (w *walker) fromStdin(c *cmd) stage {
	for _, s := range c.up {
		switch {
		case s.fetch:
			w.finding("fetch_to_shell", c.seg, "The command runs what it downloads, which veto cannot see.")
			return stage{}
		case s.decode:
			w.finding("decode_to_shell", c.seg, "The command runs what it decodes, which veto cannot see.")
			return stage{}
		}
	}
	if len(c.up) == 0 {
		return stage{}
	}
	last := c.up[len(c.up)-1]
	if last.text == nil {
		return stage{}
	}
	for _, t := range last.text {
		w.fork().script(t, c.depth+1)
	}
	return stage{}
}

// runShell is a shell: -c runs a script, a file argument runs a file, and
// with neither it runs its input.
func runShell(w *walker, c *cmd) stage {
	cflag := false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a.unknown {
			if cflag {
				return w.scriptOf(c, a)
			}
			w.finding("cannot_vouch", c.seg, "The shell is given a script veto cannot see, so it cannot vouch for it.")
			return stage{}
		}
		s := a.lit
		switch {
		case s == "--" || s == "-":
			if cflag {
				if i+1 < len(c.args) {
					return w.scriptOf(c, c.args[i+1])
				}
				return stage{}
			}
			return w.shellFile(c, c.args[i+1:])
		case s == "-o" || s == "+o" || s == "-O" || s == "+O" || s == "--rcfile" || s == "--init-file":
			i++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			if strings.ContainsRune(s[1:], 'c') && s[0] == '-' {
				cflag = true
			}
		default:
			if cflag {
				return w.scriptOf(c, a)
			}
			return w.shellFile(c, c.args[i:])
		}
	}
	if cflag {
		if c.stdinArgs {
			w.finding("cannot_vouch", c.seg, "The shell runs a script taken from input veto cannot see, so it cannot vouch for it.")
		}
		return stage{}
	}
	return w.fromStdin(c)
}

// shellFile is a shell running a script file (or, with no file, its input).
func (w *walker) shellFile(c *cmd, rest []word) stage {
	if len(rest) == 0 {
		return w.fromStdin(c)
	}
	if rest[0].fetch {
		w.finding("fetch_to_shell", c.seg, "The command runs what it downloads, which veto cannot see.")
		return stage{}
	}
	w.access(rest[0], false, false)
	return stage{}
}

func runEval(w *walker, c *cmd) stage {
	if len(c.args) == 0 {
		return stage{}
	}
	return w.scriptOf(c, joinWords(c.args))
}

func runSource(w *walker, c *cmd) stage {
	if len(c.args) == 0 {
		return stage{}
	}
	f := c.args[0]
	if f.fetch {
		w.finding("fetch_to_shell", c.seg, "The command runs what it downloads, which veto cannot see.")
		return stage{}
	}
	if f.unknown {
		w.finding("cannot_vouch", c.seg, "The command sources a file veto cannot determine, so it cannot vouch for it.")
		return stage{}
	}
	w.access(f, false, false)
	return stage{}
}

// interp is an interpreter whose one-liner flags are flags: the code is
// read for the shell commands it would run (its text as shell, and each
// string literal in it) and the URLs it names.
func interp(flags string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		for i := 0; i < len(c.args); i++ {
			a := c.args[i]
			if a.unknown {
				break
			}
			s := a.lit
			isFlag := len(s) == 2 && s[0] == '-' && strings.ContainsRune(flags, rune(s[1]))
			if s == "--eval" || s == "--print" || isFlag {
				if i+1 < len(c.args) {
					return w.readCode(c, c.args[i+1])
				}
				return stage{}
			}
			if strings.HasPrefix(s, "--eval=") || strings.HasPrefix(s, "--print=") {
				_, v, _ := strings.Cut(s, "=")
				return w.readCode(c, lit(v))
			}
			if strings.HasPrefix(s, "-m") && (s == "-m" || len(s) > 2) {
				return stage{} // a module: nothing veto reads
			}
			if !strings.HasPrefix(s, "-") {
				return w.shellFile(c, c.args[i:])
			}
		}
		return w.fromStdin(c)
	}
}

func runDeno(w *walker, c *cmd) stage {
	if len(c.args) >= 2 && c.args[0].lit == "eval" {
		return w.readCode(c, c.args[len(c.args)-1])
	}
	return stage{}
}

// code reads interpreter code for what veto recognises.
func (w *walker) readCode(c *cmd, x word) stage {
	if x.unknown {
		w.finding("cannot_vouch", c.seg, "The interpreter runs code veto cannot see, so it cannot vouch for it.")
		return stage{}
	}
	for _, src := range x.vals {
		sub := w.fork()
		sub.code = true
		sub.script(src, c.depth+1)
		for _, s := range stringLiterals(src) {
			if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
				w.host(c, s)
				continue
			}
			sub := w.fork()
			sub.code = true
			sub.script(s, c.depth+1)
		}
	}
	return stage{}
}

// stringLiterals returns the quoted strings in code, with \" and \'
// unescaped.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) {
				j++
			}
			b.WriteByte(code[j])
		}
		if j < len(code) {
			out = append(out, b.String())
		}
		i = j
	}
	return out
}

// runRm judges a removal: every operand is written (deleted). A recursive
// forced removal of something veto cannot determine is refused here; of
// known paths, the file rules judge them as removals.
func runRm(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{}, false)
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
		w.finding("rm_recursive_force", c.seg, "The command force-removes a tree veto cannot determine, so it is refused.")
		return stage{}
	}
	for _, x := range o.operands {
		w.access(x, true, rf)
	}
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
			w.finding("find_delete", c.seg, "The command deletes every file find matches.")
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
				w.finding("rm_recursive_force", c.seg, "The command force-removes every tree find matches.")
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
		if f.Reason == "rm_recursive_force" {
			return true
		}
	}
	return false
}

// blockDevice reports whether p names a disk.
func blockDevice(p string) bool {
	for _, prefix := range []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/mapper/", "/dev/md", "/dev/dm-", "/dev/loop", "/dev/rdisk"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

func runDd(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.unknown {
			continue
		}
		k, v, ok := strings.Cut(a.lit, "=")
		if !ok {
			continue
		}
		switch k {
		case "if":
			w.access(lit(v), false, false)
		case "of":
			if blockDevice(v) {
				w.finding("disk_destroy", c.seg, "The command writes over a disk device.")
				continue
			}
			w.access(lit(v), true, false)
		}
	}
	return stage{}
}

func destroyDisk(w *walker, c *cmd) stage {
	w.finding("disk_destroy", c.seg, "The command destroys data on a disk or a file beyond recovery.")
	return stage{}
}

func runChmod(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{long: map[string]bool{"reference": true, "from": true}}, false)
	ops := o.operands
	if !o.has("reference") && len(ops) > 0 {
		ops = ops[1:] // the mode or the owner
	}
	recursive := o.has("R", "recursive")
	home := w.env.Vars["HOME"]
	for _, x := range ops {
		if recursive && !x.unknown {
			for _, v := range x.vals {
				if p := path.Clean(v); p == "/" || v == "~" || v == "~/" || (home != "" && p == path.Clean(home)) {
					w.finding("recursive_root_change", c.seg, "The command changes the mode or owner of everything below / or the home directory.")
				}
			}
		}
		w.access(x, true, false)
	}
	return stage{}
}

func runCrontab(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "u"}, false)
	if o.has("r") {
		w.finding("crontab_remove", c.seg, "The command removes the user's crontab.")
		return stage{}
	}
	if o.has("l") {
		return stage{}
	}
	for _, f := range o.operands {
		w.access(f, false, false)
	}
	user := w.env.Vars["USER"]
	if u, ok := o.get("u"); ok {
		user = u
	}
	w.access(lit("/var/spool/cron/crontabs/"+orDefault(user, "user")), true, false)
	return stage{}
}

func runSystemctl(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "tpHMsn", long: map[string]bool{"type": true, "property": true, "host": true, "machine": true, "signal": true, "root": true}}, false)
	if len(o.operands) == 0 || o.operands[0].unknown {
		return stage{}
	}
	switch o.operands[0].lit {
	case "enable", "link", "edit", "preset", "add-wants", "add-requires", "set-property", "revert", "reenable":
	default:
		return stage{}
	}
	dir := "/etc/systemd/system/"
	if o.has("user", "global") {
		dir = "~/.config/systemd/user/"
	}
	for _, u := range o.operands[1:] {
		if u.unknown {
			w.access(u, true, false)
			continue
		}
		w.access(lit(dir+path.Base(u.lit)), true, false)
	}
	return stage{}
}

func runLaunchctl(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown {
		return stage{}
	}
	switch c.args[0].lit {
	case "load", "bootstrap", "enable", "submit":
	default:
		return stage{}
	}
	for _, a := range c.args[1:] {
		if a.unknown {
			w.access(a, true, false)
			continue
		}
		if strings.HasPrefix(a.lit, "-") || !strings.Contains(a.lit, ".") {
			continue
		}
		w.access(lit("~/Library/LaunchAgents/"+path.Base(a.lit)), true, false)
	}
	return stage{}
}

func runCd(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{}, true)
	if c.name == "pushd" {
		w.dirs = append(w.dirs, w.cwd)
	}
	if len(o.operands) == 0 {
		if c.name == "pushd" {
			w.cwd = ""
			return stage{}
		}
		w.chdir(lit("~"))
		return stage{}
	}
	w.chdir(o.operands[0])
	return stage{}
}

func runPopd(w *walker, c *cmd) stage {
	if n := len(w.dirs); n > 0 {
		w.cwd, w.dirs = w.dirs[n-1], w.dirs[:n-1]
		return stage{}
	}
	w.cwd = ""
	return stage{}
}

func envDump(w *walker, c *cmd) stage {
	w.r.find(RuleEnvDump, "env_dump", c.seg, "The command prints the environment, which holds secrets.")
	return stage{}
}

// runSet is set and export: with no arguments (or export -p) they print
// every variable.
func runSet(w *walker, c *cmd) stage {
	if len(c.args) == 0 || (c.name == "export" && len(c.args) == 1 && c.args[0].lit == "-p") {
		return envDump(w, c)
	}
	return stage{}
}

func runCompgen(w *walker, c *cmd) stage {
	for i, a := range c.args {
		if a.lit == "-v" || a.lit == "-e" || (a.lit == "-A" && i+1 < len(c.args) && (c.args[i+1].lit == "variable" || c.args[i+1].lit == "export")) {
			return envDump(w, c)
		}
	}
	return stage{}
}

// runEcho prints its arguments: the text is known when every argument is,
// and echo -e decodes escapes.
func runEcho(w *walker, c *cmd) stage {
	args := c.args
	decode := false
	for len(args) > 0 && !args[0].unknown && (args[0].lit == "-n" || args[0].lit == "-e" || args[0].lit == "-E" || args[0].lit == "-ne" || args[0].lit == "-en") {
		decode = decode || strings.Contains(args[0].lit, "e")
		args = args[1:]
	}
	text := joinWords(args)
	if text.unknown {
		return stage{}
	}
	if decode && strings.Contains(text.lit, `\`) {
		return stage{decode: true}
	}
	return stage{text: text.vals}
}

func runPrintf(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown {
		return stage{}
	}
	f := c.args[0].lit
	if strings.Contains(f, `\`) || (strings.Contains(f, "%") && len(c.args) > 1) {
		return stage{decode: true}
	}
	return stage{text: []string{f}}
}

// runDecoder is a program that decodes with one of its flags.
func runDecoder(short, long string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, optSpec{val: "w"}, false)
		for _, f := range o.operands {
			w.access(f, false, false)
		}
		if o.has(short, long) || (c.name == "base64" && o.has("D")) {
			return stage{decode: true}
		}
		return stage{}
	}
}

func alwaysDecode(w *walker, c *cmd) stage { return stage{decode: true} }

func runOpenssl(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.lit == "-d" || a.lit == "-base64" || a.lit == "base64" {
			return stage{decode: true}
		}
	}
	return stage{}
}

func runLn(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "tS", long: map[string]bool{"target-directory": true, "suffix": true}}, false)
	ops := o.operands
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
		w.access(ops[len(ops)-1], true, false)
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
				w.access(s, true, false)
			}
			if tree {
				w.readTree(s)
			} else {
				w.access(s, false, false)
			}
		}
		w.access(ops[len(ops)-1], true, false)
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
		for _, f := range o.operands {
			w.access(f, true, false)
		}
		if c.name == "touch" || c.name == "truncate" {
			w.optFiles(&o, false, nil, "r", "reference")
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
		return stage{}
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
	o := parseOpts(c.args, optSpec{val: "efl", long: map[string]bool{"expression": true, "file": true, "line-length": true}}, false)
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
				w.finding("cannot_vouch", c.seg, "The archive's files lie in a directory veto cannot see (tar -C with a variable or an expansion).")
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

// Hosts.

// host records the destination of a URL or host word.
func (w *walker) host(c *cmd, s string) {
	h, ok := hostOf(s)
	if !ok {
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
		return
	}
	w.r.Hosts = append(w.r.Hosts, Host{Host: h, Command: c.name, Segment: c.seg})
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

// optHosts takes every value given to the options names as a host the
// command reaches.
func (w *walker) optHosts(c *cmd, o *opts, names ...string) {
	for _, x := range o.all(names...) {
		w.hostWord(c, x)
	}
}

// notStdio is a file option's value that names a file: not "-" (the
// standard streams) and not empty.
func notStdio(v string) (string, bool) { return v, v != "-" && v != "" }

func (w *walker) hostWord(c *cmd, x word) {
	if x.unknown {
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
		return
	}
	for _, v := range x.vals {
		w.host(c, v)
	}
}

// hostOf extracts the host of a URL, "user@host:path", "host:port" or a
// bare host name. It does not normalise; the egress rule does.
func hostOf(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	if i := strings.Index(s, "://"); i > 0 {
		u, err := url.Parse(s)
		if err != nil {
			// Fall back to what sits between the scheme and the path.
			rest := s[i+3:]
			if j := strings.IndexAny(rest, "/?#"); j >= 0 {
				rest = rest[:j]
			}
			if k := strings.LastIndexByte(rest, '@'); k >= 0 {
				rest = rest[k+1:]
			}
			return rest, rest != ""
		}
		return u.Hostname(), u.Hostname() != ""
	}
	if k := strings.LastIndexByte(s, '@'); k >= 0 {
		s = s[k+1:]
	}
	if strings.HasPrefix(s, "[") {
		if j := strings.IndexByte(s, ']'); j > 0 {
			return s[:j+1], true
		}
	}
	if j := strings.IndexByte(s, ':'); j >= 0 && strings.Count(s, ":") == 1 {
		s = s[:j]
	}
	if j := strings.IndexByte(s, '/'); j >= 0 {
		s = s[:j]
	}
	return s, s != ""
}

// envHosts records hosts named by variables that steer downloads.
func (w *walker) envHosts(name string, x word) {
	switch name {
	case "GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "npm_config_registry", "NPM_CONFIG_REGISTRY", "UV_INDEX_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY":
	default:
		return
	}
	c := &cmd{name: name, seg: w.r.Segments}
	if x.unknown {
		w.hostWord(c, x)
		return
	}
	for _, v := range x.vals {
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
			if part == "direct" || part == "off" {
				continue
			}
			w.host(c, part)
		}
	}
}

var curlValued = map[string]bool{"output": true, "data": true, "data-binary": true, "data-raw": true, "data-urlencode": true,
	"data-ascii": true, "json": true, "form": true, "form-string": true, "upload-file": true, "header": true, "user-agent": true,
	"referer": true, "user": true, "request": true, "cookie": true, "cookie-jar": true, "dump-header": true, "trace": true,
	"trace-ascii": true, "stderr": true, "config": true, "proxy": true, "cert": true, "key": true, "cacert": true, "capath": true,
	"url": true, "max-time": true, "connect-timeout": true, "retry": true, "write-out": true, "resolve": true, "connect-to": true,
	"netrc-file": true, "output-dir": true, "range": true, "interface": true, "local-port": true, "oauth2-bearer": true,
	"socks5": true, "socks5-hostname": true, "preproxy": true, "proxy-user": true, "limit-rate": true, "max-filesize": true,
	"continue-at": true, "time-cond": true, "variable": true, "expand-url": true}

func runCurl(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "odTFHAeuXbcDKxECrmyYzw", long: curlValued}, false)
	// Every value of a repeated option counts: curl sends every -d and
	// writes every -o.
	w.optFiles(&o, true, notStdio, "o", "output", "D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr")
	at := func(v string) (string, bool) { // @file, but not @- (standard input)
		return strings.TrimPrefix(v, "@"), strings.HasPrefix(v, "@") && v != "@-"
	}
	w.optFiles(&o, false, at, "d", "data", "data-binary", "data-ascii", "json", "H", "header")
	w.optFiles(&o, false, func(v string) (string, bool) { // @file or name@file, not name=content
		i := strings.IndexByte(v, '@')
		return v[i+1:], i >= 0 && !strings.Contains(v[:i], "=") && v[i+1:] != "-"
	}, "data-urlencode")
	w.optFiles(&o, false, func(v string) (string, bool) {
		if _, f, found := strings.Cut(v, "=@"); found {
			return strings.SplitN(f, ";", 2)[0], true
		}
		_, f, found := strings.Cut(v, "=<")
		return f, found
	}, "F", "form")
	w.optFiles(&o, false, func(v string) (string, bool) { return v, v != "-" && v != "." && v != "" },
		"T", "upload-file", "K", "config", "netrc-file")
	w.optFiles(&o, false, func(v string) (string, bool) { return v, v != "" && v != "-" && !strings.Contains(v, "=") },
		"b", "cookie") // a cookie file; name=value is a cookie
	w.optHosts(c, &o, "x", "proxy", "preproxy", "socks5", "socks5-hostname", "url")
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	return stage{}
}

func runWget(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "OoaPiUeTtlQwYAR", long: map[string]bool{"output-document": true, "output-file": true,
		"append-output": true, "directory-prefix": true, "input-file": true, "post-file": true, "body-file": true, "post-data": true,
		"user-agent": true, "header": true, "execute": true, "tries": true, "timeout": true, "level": true, "user": true,
		"password": true, "http-user": true, "http-password": true, "load-cookies": true, "save-cookies": true, "referer": true}}, false)
	w.optFiles(&o, true, notStdio, "O", "output-document", "o", "output-file", "a", "append-output", "save-cookies")
	w.optFiles(&o, true, nil, "P", "directory-prefix")
	w.optFiles(&o, false, notStdio, "post-file", "body-file", "load-cookies")
	if o.has("i", "input-file") {
		w.optFiles(&o, false, notStdio, "i", "input-file")
		w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
	}
	for _, u := range o.operands {
		w.hostWord(c, u)
	}
	return stage{}
}

func runNetcat(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "psxwiqXTOMGgIecP", long: map[string]bool{"proxy": true, "source": true, "exec": true, "sh-exec": true, "wait": true}}, false)
	if o.has("l", "listen") {
		return stage{}
	}
	w.optHosts(c, &o, "x", "proxy")
	for _, x := range o.all("e", "c", "exec", "sh-exec") {
		w.scriptOf(c, x)
	}
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	return stage{}
}

func runSocat(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.unknown {
			w.r.Hosts = append(w.r.Hosts, Host{Unknown: true, Command: c.name, Segment: c.seg})
			continue
		}
		kind, rest, ok := strings.Cut(a.lit, ":")
		if !ok {
			continue
		}
		switch strings.ToUpper(kind) {
		case "TCP", "TCP4", "TCP6", "UDP", "UDP4", "UDP6", "OPENSSL", "SSL", "SCTP", "DCCP", "UDP-SENDTO", "TCP-CONNECT", "SOCKS4", "SOCKS4A", "SOCKS5", "PROXY":
			host := rest
			if i := strings.IndexAny(host, ":,"); i >= 0 {
				host = host[:i]
			}
			w.host(c, host)
		case "EXEC", "SYSTEM":
			w.scriptOf(c, lit(strings.SplitN(rest, ",", 2)[0]))
		}
	}
	return stage{}
}

func runFirstHost(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "lpbenS"}, false)
	if len(o.operands) > 0 {
		w.hostWord(c, o.operands[0])
	}
	return stage{}
}

var sshValued = optSpec{val: "bcDEeFIiJLlmOoPpQRSWwB"}

// runSSH reaches a host and runs a command there: the command is judged
// strictly, and its paths are the remote machine's, not ours.
func runSSH(w *walker, c *cmd) stage {
	o := parseOpts(c.args, sshValued, true)
	if len(o.operands) == 0 {
		return stage{}
	}
	w.hostWord(c, o.operands[0])
	w.optHosts(c, &o, "J")
	if len(o.operands) > 1 {
		remote := joinWords(o.operands[1:])
		sub := w.fork()
		sub.remote, sub.strict = true, true
		sub.scriptOf(c, remote)
	}
	return stage{}
}

// runRemoteCopy is scp, sftp and rsync: "host:path" operands reach a host;
// local operands are read, and the last one written.
func runRemoteCopy(w *walker, c *cmd) stage {
	short := "PiFolcJSeBfT" // scp's and sftp's options that take a value
	if c.name == "rsync" {
		short = "eBfTM" // rsync's -P, -i, -l, -o, -c, -S and -F are flags
	}
	o := parseOpts(c.args, optSpec{val: short, long: map[string]bool{"rsh": true, "rsync-path": true, "filter": true,
		"exclude": true, "include": true, "exclude-from": true, "include-from": true, "files-from": true, "port": true,
		"password-file": true, "temp-dir": true, "log-file": true, "partial-dir": true, "backup-dir": true, "suffix": true,
		"chmod": true, "chown": true, "timeout": true, "bwlimit": true, "compare-dest": true, "copy-dest": true, "link-dest": true}}, false)
	for i, x := range o.operands {
		if x.unknown {
			w.hostWord(c, x)
			continue
		}
		if remoteSpec(x.lit) {
			w.host(c, x.lit)
			continue
		}
		if c.name == "sftp" {
			w.hostWord(c, x)
			continue
		}
		last := i == len(o.operands)-1 && len(o.operands) > 1
		if !last && o.has("r", "a", "recursive", "archive") {
			w.readTree(x)
			continue
		}
		w.access(x, last, false)
	}
	return stage{}
}

// remoteSpec reports whether an scp or rsync operand names a remote file.
func remoteSpec(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.ContainsRune(s[:i], '/')
}

// registryHosts is a package manager: the hosts its index, registry and
// proxy options name, and the URLs among its operands.
func registryHosts(spec optSpec, keys ...string) func(*walker, *cmd) stage {
	return func(w *walker, c *cmd) stage {
		o := parseOpts(c.args, spec, false)
		w.optHosts(c, &o, keys...)
		for _, op := range o.operands {
			if !op.unknown && strings.Contains(op.lit, "://") {
				w.host(c, strings.TrimPrefix(op.lit, "git+"))
			}
		}
		return stage{}
	}
}

var (
	runPip = registryHosts(optSpec{val: "ifcre", long: map[string]bool{"index-url": true, "extra-index-url": true, "find-links": true,
		"trusted-host": true, "requirement": true, "constraint": true, "proxy": true, "target": true, "index": true, "default-index": true}},
		"i", "index-url", "extra-index-url", "f", "find-links", "trusted-host", "proxy", "index", "default-index")
	runNpm = registryHosts(optSpec{long: map[string]bool{"registry": true, "proxy": true, "https-proxy": true}}, "registry", "proxy", "https-proxy")
)

// runGo reads "go env -w NAME=value" for the proxies it sets.
func runGo(w *walker, c *cmd) stage {
	if len(c.args) < 3 || c.args[0].lit != "env" || c.args[1].lit != "-w" {
		return stage{}
	}
	for _, a := range c.args[2:] {
		if name, val, ok := strings.Cut(a.lit, "="); ok && !a.unknown {
			w.envHosts(name, lit(val))
		}
	}
	return stage{}
}
