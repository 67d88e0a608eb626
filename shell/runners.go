package shell

// Programs that run other programs: wrappers veto knows by their options
// (flock, strace, systemd-run, …), and tools that take a command in one
// of their options or in their own language (sed's e, tar's
// --to-command, ssh's ProxyCommand, vim's :!, sqlite3's .shell, gdb's
// shell, git rebase --exec, …). Where the command is visible it is judged
// in their place; where it is not, the call is refused as cannot_vouch.

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapperSpecs are wrappers whose command follows their options (and n
// operands of their own): the command is judged as if run directly.
var wrapperSpecs = map[string]struct {
	spec optSpec
	n    int
}{
	"strace":           {optSpec{val: "abeEIoOpPsSuUX", long: map[string]bool{"output": true, "trace": true, "signal": true, "status": true, "string-limit": true, "user": true, "env": true, "attach": true, "trace-path": true, "summary-columns": true, "summary-sort-by": true, "decode-fds": true}}, 0},
	"ltrace":           {optSpec{val: "aeEFlnopsuwxAD", long: map[string]bool{"output": true, "library": true, "align": true, "indent": true}}, 0},
	"valgrind":         {optSpec{}, 0},
	"firejail":         {optSpec{}, 0},
	"proot":            {optSpec{val: "rbBwmkqR", long: map[string]bool{"rootfs": true, "bind": true, "mount": true, "pwd": true, "cwd": true, "kernel-release": true, "qemu": true}}, 0},
	"torsocks":         {optSpec{val: "upaP"}, 0},
	"torify":           {optSpec{}, 0},
	"proxychains":      {optSpec{val: "f"}, 0},
	"proxychains4":     {optSpec{val: "f"}, 0},
	"caffeinate":       {optSpec{val: "tw"}, 0},
	"chronic":          {optSpec{}, 0},
	"catchsegv":        {optSpec{}, 0},
	"fakeroot":         {optSpec{val: "sil", long: map[string]bool{"lib": true, "faked": true}}, 0},
	"faketime":         {optSpec{val: "m"}, 1},
	"nsenter":          {optSpec{val: "tSG", long: map[string]bool{"target": true, "setuid": true, "setgid": true}}, 0},
	"unshare":          {optSpec{val: "S", long: map[string]bool{"propagation": true, "setuid": true, "setgid": true, "map-user": true, "map-group": true, "map-users": true, "map-groups": true, "wd": true}}, 0},
	"systemd-run":      {optSpec{val: "pEMHu", long: map[string]bool{"unit": true, "property": true, "description": true, "slice": true, "uid": true, "gid": true, "nice": true, "working-directory": true, "setenv": true, "machine": true, "host": true, "on-active": true, "on-boot": true, "on-startup": true, "on-unit-active": true, "on-unit-inactive": true, "on-calendar": true, "on-timezone-change": true, "timer-property": true, "path-property": true, "socket-property": true, "service-type": true, "expand-environment": true}}, 0},
	"systemd-inhibit":  {optSpec{long: map[string]bool{"what": true, "who": true, "why": true, "mode": true}}, 0},
	"dbus-run-session": {optSpec{long: map[string]bool{"config-file": true, "dbus-daemon": true}}, 0},
	"xvfb-run":         {optSpec{val: "efnps", long: map[string]bool{"error-file": true, "auth-file": true, "server-num": true, "xauth-protocol": true, "server-args": true}}, 0},
	"numactl":          {optSpec{val: "CNmpPi", long: map[string]bool{"cpunodebind": true, "membind": true, "physcpubind": true, "preferred": true, "interleave": true}}, 0},
	"trickle":          {optSpec{val: "dulwtn"}, 0},
	"prlimit":          {optSpec{val: "p", long: map[string]bool{"pid": true, "output": true}}, 0},
	"tini":             {optSpec{val: "pe"}, 0},
	"dumb-init":        {optSpec{val: "r", long: map[string]bool{"rewrite": true}}, 0},
	"sshpass":          {optSpec{val: "pfdeP"}, 0},
	"ssh-agent":        {optSpec{val: "aEPt"}, 0},
	"tsp":              {optSpec{val: "LDW"}, 0},
	"nq":               {optSpec{}, 0},
	"run-one":          {optSpec{}, 0},
	"retry":            {optSpec{val: "tdm", long: map[string]bool{"times": true, "delay": true, "until": true}}, 0},
	"setarch":          {optSpec{}, 1},
	"linux32":          {optSpec{}, 0},
	"linux64":          {optSpec{}, 0},
}

// runnerSubs are tools whose subcommand runs a command given after it
// (poetry run cmd, bundle exec cmd): the subcommands, and the options of
// theirs that take a value.
var runnerSubs = map[string]struct {
	subs map[string]bool
	spec optSpec
}{
	"poetry":     {map[string]bool{"run": true}, optSpec{val: "CP", long: map[string]bool{"directory": true, "project": true}}},
	"pipenv":     {map[string]bool{"run": true}, optSpec{}},
	"pdm":        {map[string]bool{"run": true}, optSpec{val: "p", long: map[string]bool{"project": true}}},
	"hatch":      {map[string]bool{"run": true}, optSpec{val: "e", long: map[string]bool{"env": true}}},
	"bundle":     {map[string]bool{"exec": true}, optSpec{long: map[string]bool{"gemfile": true}}},
	"conda":      {map[string]bool{"run": true}, optSpec{val: "np", long: map[string]bool{"name": true, "prefix": true, "cwd": true}}},
	"mamba":      {map[string]bool{"run": true}, optSpec{val: "np", long: map[string]bool{"name": true, "prefix": true, "cwd": true}}},
	"micromamba": {map[string]bool{"run": true}, optSpec{val: "np", long: map[string]bool{"name": true, "prefix": true, "cwd": true}}},
	"pixi":       {map[string]bool{"run": true, "exec": true}, optSpec{val: "e", long: map[string]bool{"environment": true, "manifest-path": true}}},
	"mise":       {map[string]bool{"exec": true, "x": true}, optSpec{val: "C", long: map[string]bool{"cd": true}}},
	"rtx":        {map[string]bool{"exec": true, "x": true}, optSpec{}},
	"asdf":       {map[string]bool{"exec": true}, optSpec{}},
	"devbox":     {map[string]bool{"run": true}, optSpec{val: "c", long: map[string]bool{"config": true}}},
	"op":         {map[string]bool{"run": true}, optSpec{long: map[string]bool{"env-file": true, "account": true}}},
	"doppler":    {map[string]bool{"run": true}, optSpec{val: "pc", long: map[string]bool{"project": true, "config": true}}},
	"dotenvx":    {map[string]bool{"run": true}, optSpec{val: "f", long: map[string]bool{"env-file": true}}},
	"aws-vault":  {map[string]bool{"exec": true}, optSpec{long: map[string]bool{"duration": true, "region": true}}},
	"pipx":       {map[string]bool{"run": true}, optSpec{long: map[string]bool{"spec": true, "python": true}}},
	"direnv":     {map[string]bool{"exec": true}, optSpec{}},
	"perf":       {map[string]bool{"record": true, "stat": true, "trace": true, "mem": true, "c2c": true, "lock": true, "sched": true, "kmem": true, "kvm": true}, optSpec{val: "eoptcFCGmIuDrL", long: map[string]bool{"event": true, "output": true, "pid": true, "tid": true, "count": true, "freq": true, "cpu": true, "call-graph": true, "mmap-pages": true, "cgroup": true, "uid": true, "delay": true, "repeat": true, "filter": true, "clockid": true, "user-regs": true, "intr-regs": true, "max-size": true, "switch-output": true, "aux-sample": true, "affinity": true, "control": true}}},
}

// runWrapper is a wrapper of wrapperSpecs.
func runWrapper(w *walker, c *cmd) stage {
	s := wrapperSpecs[c.name]
	o := parseOpts(c.args, s.spec, true)
	if c.name == "strace" || c.name == "ltrace" {
		w.optFiles(&o, true, notStdio, "o", "output")
	}
	if len(o.operands) <= s.n {
		return stage{}
	}
	return w.nested(c, o.operands[s.n:])
}

// runRunnerSub is a tool of runnerSubs: its running subcommand's command
// is judged; its other subcommands are not.
func runRunnerSub(w *walker, c *cmd) stage {
	r := runnerSubs[c.name]
	o := parseOpts(c.args, r.spec, true)
	if len(o.operands) < 2 || o.operands[0].unknown || !r.subs[o.operands[0].lit] {
		return stage{}
	}
	rest := o.operands[1:]
	if c.name == "direnv" {
		if len(rest) < 2 {
			return stage{}
		}
		w.chdir(rest[0])
		return w.nested(c, rest[1:])
	}
	if c.name == "aws-vault" {
		if len(rest) < 2 {
			return stage{}
		}
		rest = rest[1:] // the profile
	}
	// The subcommand's own options, up to the command or "--".
	p := parseOpts(rest, r.spec, true)
	return w.nested(c, p.operands)
}

// wrapFlock is flock [options] FILE cmd …, flock [options] FILE -c cmd,
// or flock FD.
func wrapFlock(w *walker, c *cmd) stage {
	spec := optSpec{val: "wEc", long: map[string]bool{"timeout": true, "wait": true, "conflict-exit-code": true, "command": true}}
	o := parseOpts(c.args, spec, true)
	for _, s := range o.all("c", "command") {
		w.scriptOf(c, s)
	}
	if len(o.operands) < 2 {
		return stage{}
	}
	rest := o.operands[1:]
	if !rest[0].unknown && (rest[0].lit == "-c" || rest[0].lit == "--command") {
		if len(rest) > 1 {
			w.scriptOf(c, rest[1])
		}
		return stage{}
	}
	if !rest[0].unknown && strings.HasPrefix(rest[0].lit, "--command=") {
		return w.scriptOf(c, tails(rest[0], "--command="))
	}
	// Options may follow the file too (flock FILE -n cmd).
	p := parseOpts(rest, spec, true)
	for _, s := range p.all("c", "command") {
		w.scriptOf(c, s)
	}
	return w.nested(c, p.operands)
}

// wrapEntr is entr: its command follows its options; with -s it is one
// script for the shell.
func wrapEntr(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{}, true)
	if o.has("s") {
		return w.scriptOf(c, joinWords(o.operands))
	}
	return w.nested(c, o.operands)
}

// wrapHyperfine is hyperfine: every operand, and its prepare, setup,
// cleanup and conclude options, is a script for the shell.
func wrapHyperfine(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "wmMrpcsnSPLDuNo", long: map[string]bool{"warmup": true, "min-runs": true, "max-runs": true, "runs": true,
		"prepare": true, "conclude": true, "cleanup": true, "setup": true, "command-name": true, "shell": true, "parameter-scan": true,
		"parameter-step-size": true, "parameter-list": true, "time-unit": true, "export-asciidoc": true, "export-csv": true, "export-json": true,
		"export-markdown": true, "export-orgmode": true, "style": true, "sort": true, "output": true, "input": true, "reference": true}}, false)
	for _, s := range o.all("p", "prepare", "c", "cleanup", "s", "setup", "conclude", "reference") {
		w.scriptOf(c, s)
	}
	for _, s := range o.operands {
		w.scriptOf(c, s)
	}
	return stage{}
}

// wrapNixShell is nix-shell --run/--command SCRIPT, and nix develop
// -c/--command cmd ….
func wrapNixShell(w *walker, c *cmd) stage {
	if c.name == "nix" {
		if len(c.args) == 0 || c.args[0].unknown || (c.args[0].lit != "develop" && c.args[0].lit != "shell") {
			return stage{}
		}
		for i, a := range c.args[1:] {
			if !a.unknown && (a.lit == "-c" || a.lit == "--command") {
				return w.nested(c, c.args[i+2:])
			}
		}
		return stage{}
	}
	o := parseOpts(c.args, optSpec{val: "pIA", long: map[string]bool{"run": true, "command": true, "packages": true, "attr": true, "arg": true, "argstr": true, "expr": true, "include": true, "option": true}}, false)
	for _, s := range o.all("run", "command") {
		w.scriptOf(c, s)
	}
	return stage{}
}

// wrapNodemon is nodemon --exec 'cmd …' (and -x).
func wrapNodemon(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "xwexiVdCsI", long: map[string]bool{"exec": true, "watch": true, "ext": true, "ignore": true,
		"delay": true, "signal": true, "config": true, "cwd": true}}, true)
	for _, s := range o.all("x", "exec") {
		w.scriptOf(c, s)
	}
	return stage{}
}

// wrapWatchexec is watchexec [options] [--] command …; with
// --shell=none the command is argv, otherwise a script.
func wrapWatchexec(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "ewfidpsWEcn", long: map[string]bool{"exts": true, "extensions": true, "watch": true, "filter": true,
		"ignore": true, "debounce": true, "delay-run": true, "signal": true, "shell": true, "env": true, "workdir": true, "project-origin": true,
		"on-busy-update": true, "stop-signal": true, "stop-timeout": true, "filter-file": true, "ignore-file": true, "emit-events-to": true,
		"poll": true, "color": true, "timings": true, "notify": true, "wrap-process": true, "clear": true, "restart": true}}, true)
	if len(o.operands) == 0 {
		return stage{}
	}
	return w.scriptOf(c, joinWords(o.operands))
}

// wrapTmux is tmux new-session, new-window, split-window and
// respawn-pane: their shell command. (send-keys, keys typed into another
// terminal, is rules/control's.)
func wrapTmux(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "LSfcT"}, true)
	if len(o.operands) == 0 || o.operands[0].unknown {
		return stage{}
	}
	sub, rest := o.operands[0].lit, o.operands[1:]
	switch sub {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw":
		p := parseOpts(rest, optSpec{val: "cefFlnstxyBNTe"}, true)
		if len(p.operands) > 0 {
			return w.scriptOf(c, joinWords(p.operands))
		}
	}
	return stage{}
}

// wrapScreen is screen [options] cmd …: its command follows its options.
func wrapScreen(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "SceThpstX"}, true)
	if o.has("X", "r", "R", "x", "ls", "list", "wipe", "Q") {
		return stage{}
	}
	return w.nested(c, o.operands)
}

// wrapExpect is expect -c SCRIPT: Tcl, whose spawn and exec run
// programs; read as code.
func wrapExpect(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "cf"}, false)
	for _, s := range o.all("c") {
		w.readCode(c, s)
	}
	return stage{}
}

// runCmake is cmake -E, its portable commands: rm and remove_directory
// are removals, chdir, env and time run a command.
func runCmake(w *walker, c *cmd) stage {
	for i, a := range c.args {
		if a.unknown || a.lit != "-E" {
			continue
		}
		rest := c.args[i+1:]
		if len(rest) == 0 || rest[0].unknown {
			return stage{}
		}
		args := rest[1:]
		switch rest[0].lit {
		case "rm":
			return w.command(append([]word{lit("rm")}, args...), c.depth+1, c.up, false, "")
		case "remove":
			return w.command(append([]word{lit("rm"), lit("-f")}, nonOpts(args)...), c.depth+1, c.up, false, "")
		case "remove_directory":
			return w.command(append([]word{lit("rm"), lit("-rf"), lit("--")}, args...), c.depth+1, c.up, false, "")
		case "chdir":
			if len(args) < 2 {
				return stage{}
			}
			sub := w.fork()
			sub.chdir(args[0])
			return sub.nested(c, args[1:])
		case "env":
			return w.command(append([]word{lit("env")}, args...), c.depth+1, c.up, false, "")
		case "time":
			return w.nested(c, args)
		case "copy", "copy_directory", "copy_if_different", "rename", "create_symlink", "create_hardlink":
			if len(args) > 1 {
				w.access(args[len(args)-1], true, false)
			}
		case "make_directory", "touch", "touch_nocreate":
			for _, f := range args {
				w.access(f, true, false)
			}
		}
		return stage{}
	}
	return stage{}
}

// nonOpts drops cmake -E remove's -f.
func nonOpts(args []word) []word {
	var out []word
	for _, a := range args {
		if !a.unknown && a.lit == "-f" {
			continue
		}
		out = append(out, a)
	}
	return out
}

// runRimraf is rimraf (and del-cli's del): a recursive removal of every
// operand.
func runRimraf(w *walker, c *cmd) stage {
	var targets []word
	for _, a := range c.args {
		if !a.unknown && strings.HasPrefix(a.lit, "-") {
			continue
		}
		targets = append(targets, a)
	}
	if len(targets) == 0 {
		return stage{}
	}
	return w.command(append([]word{lit("rm"), lit("-rf"), lit("--")}, targets...), c.depth+1, c.up, false, "")
}

// runPackageRunner is npx, bunx, uvx, pnpm dlx/exec, yarn dlx/exec, npm
// exec and bun x: the package's program runs with the arguments, and is
// judged under its own name (npx rimraf ~ is rimraf ~). Registry options
// name hosts, as for npm.
func runPackageRunner(w *walker, c *cmd) stage {
	args := c.args
	switch c.name {
	case "npm", "pnpm", "yarn", "bun":
		runNpmInstall(w, c)
		i := 0
		for i < len(args) && !args[i].unknown && strings.HasPrefix(args[i].lit, "-") {
			i++
		}
		if i >= len(args) || args[i].unknown {
			return stage{}
		}
		switch args[i].lit {
		case "exec", "dlx", "x":
			if c.name == "bun" && args[i].lit != "x" {
				return stage{}
			}
			if c.name == "npm" && args[i].lit != "exec" && args[i].lit != "x" {
				return stage{}
			}
		default:
			return stage{}
		}
		args = args[i+1:]
	case "npx":
		runNpmInstall(w, c)
	case "uvx":
	}
	o := parseOpts(args, optSpec{val: "pc", long: map[string]bool{"package": true, "call": true, "registry": true, "cache": true,
		"from": true, "with": true, "python": true, "index": true, "index-url": true, "userconfig": true, "workspace": true}}, true)
	for _, s := range o.all("c", "call") {
		w.scriptOf(c, s)
	}
	if len(o.operands) == 0 || o.operands[0].unknown {
		return stage{}
	}
	prog := packageBin(o.operands[0].lit)
	if prog == "" {
		return stage{}
	}
	return w.command(append([]word{lit(prog)}, o.operands[1:]...), c.depth+1, c.up, false, "")
}

// packageBin is the program a package spec runs: rimraf@5 is rimraf,
// @scope/tool@1 is tool; a path, a URL or a git spec names none.
func packageBin(spec string) string {
	if strings.Contains(spec, ":") || strings.HasPrefix(spec, ".") || strings.HasPrefix(spec, "/") {
		return ""
	}
	if strings.HasPrefix(spec, "@") {
		spec = spec[1:]
	}
	if i := strings.IndexByte(spec, '@'); i >= 0 {
		spec = spec[:i]
	}
	if i := strings.IndexAny(spec, "=<>~"); i >= 0 {
		spec = spec[:i]
	}
	switch spec = path.Base(spec); spec {
	case "del-cli":
		return "del"
	}
	return spec
}

// runAt is at and batch: the commands come on their input, or from -f's
// file.
func runAt(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "qftT"}, false)
	if o.has("l", "d", "r", "c", "V") {
		return stage{}
	}
	if fs := o.all("f"); len(fs) > 0 {
		for _, f := range fs {
			w.runFile(c, f, nil, false)
		}
		return stage{}
	}
	return w.fromStdin(c, false)
}

// runMan is man: -P and --pager name the pager, a command for the shell.
func runMan(w *walker, c *cmd) stage {
	w.unseenOptions(c, c.args, "--pager=", "-P", "--html=")
	o := parseOpts(c.args, optSpec{val: "PMCSemLpREr", long: map[string]bool{"pager": true, "manpath": true, "config-file": true,
		"sections": true, "extension": true, "locale": true, "preprocessor": true, "encoding": true, "prompt": true}}, false)
	for _, p := range o.all("P", "pager", "H", "html") {
		w.scriptOf(c, p)
	}
	return stage{}
}

// runFd is fd (fdfind): -x/--exec and -X/--exec-batch run the rest of the
// line on each file found, which veto cannot list.
func runFd(w *walker, c *cmd) stage {
	for i, a := range c.args {
		if a.unknown {
			continue
		}
		switch a.lit {
		case "-x", "--exec", "-X", "--exec-batch":
			return w.command(c.args[i+1:], c.depth+1, c.up, true, "{}")
		}
	}
	return stage{}
}

// runGdb is gdb: the commands -ex, -iex and --eval-command give are read
// for the shell commands they run (shell, !, pipe) and the code they call;
// with --args, the program and its arguments are the command debugged.
func runGdb(w *walker, c *cmd) stage {
	args := c.args
	var cmds []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			continue
		}
		s := strings.TrimLeft(a.lit, "-")
		name, val, hasVal := strings.Cut(s, "=")
		switch name {
		case "ex", "iex", "eval-command", "init-eval-command":
			if !strings.HasPrefix(a.lit, "-") {
				continue
			}
			if hasVal {
				cmds = append(cmds, tails(a, a.lit[:len(a.lit)-len(val)]))
			} else if i+1 < len(args) {
				i++
				cmds = append(cmds, args[i])
			}
		case "args":
			if strings.HasPrefix(a.lit, "-") {
				for _, x := range cmds {
					w.gdbCommand(c, x)
				}
				if i+1 < len(args) {
					return w.nested(c, args[i+1:])
				}
				return stage{}
			}
		}
	}
	for _, x := range cmds {
		w.gdbCommand(c, x)
	}
	return stage{}
}

func (w *walker) gdbCommand(c *cmd, x word) {
	if x.unknown {
		w.finding(CannotVouch, c.seg, "The debugger runs a command veto cannot see, so it cannot vouch for it.")
		return
	}
	for _, v := range x.vals {
		s := strings.TrimSpace(v)
		if rest, ok := strings.CutPrefix(s, "!"); ok {
			w.fork().script(rest, c.depth+1)
			continue
		}
		word, rest, _ := strings.Cut(s, " ")
		switch word {
		case "shell":
			w.fork().script(rest, c.depth+1)
		case "pipe", "|":
			if _, sh, ok := strings.Cut(rest, "|"); ok {
				w.fork().script(sh, c.depth+1)
			} else {
				w.finding(CannotVouch, c.seg, "The debugger pipes into a command veto cannot see, so it cannot vouch for it.")
			}
		case "python", "py", "python3", "pi", "python-interactive", "guile", "gu", "call", "print", "p", "output", "eval":
			w.readCode(c, lit(rest))
		}
	}
}

// runEditor is vim, vi, nvim, view, ex and gvim: the ex commands -c,
// --cmd and +cmd give are read for the shell commands they run (:!cmd,
// :r !cmd, :w !cmd, :terminal) and the code they call (system(), :py,
// :lua); the files named are written.
func runEditor(w *walker, c *cmd) stage {
	var cmds []word
	var files []word
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			files = append(files, a)
			continue
		}
		s := a.lit
		switch {
		case s == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "+"):
			if len(s) > 1 {
				cmds = append(cmds, tails(a, "+"))
			}
		case s == "-c" || s == "--cmd":
			if i+1 < len(args) {
				i++
				cmds = append(cmds, args[i])
			}
		case s == "-S" || s == "-u" || s == "-U" || s == "-T" || s == "-s" || s == "-w" || s == "-W" || s == "-i" || s == "-t" || s == "-q" ||
			s == "-r" || s == "--listen" || s == "--server" || s == "--servername" || s == "--remote-send" || s == "--remote-expr":
			if i+1 < len(args) {
				i++
				if s == "--remote-send" || s == "--remote-expr" {
					cmds = append(cmds, args[i])
				}
			}
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			cmds = append(cmds, tails(a, "-c"))
		case strings.HasPrefix(s, "-"):
		default:
			files = append(files, a)
		}
	}
	for _, x := range cmds {
		if x.unknown {
			w.finding(CannotVouch, c.seg, "The editor runs a command veto cannot see, so it cannot vouch for it.")
			continue
		}
		for _, v := range x.vals {
			w.exCommand(c, v, 0)
		}
	}
	for _, f := range files {
		w.access(f, true, false)
	}
	return stage{}
}

// exCommand reads one line of ex commands, separated by |.
func (w *walker) exCommand(c *cmd, line string, depth int) {
	if depth > 8 {
		return
	}
	s := strings.TrimLeft(line, " \t:")
	// A range: numbers, marks, patterns, %, $, ., and their offsets.
	for len(s) > 0 && strings.IndexByte("0123456789,;.$%+-'<> \t", s[0]) >= 0 {
		if s[0] == '\'' && len(s) > 1 {
			s = s[1:]
		}
		s = s[1:]
	}
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		w.fork().script(rest, c.depth+1) // the rest of the line, | included
		return
	}
	n := 0
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	name, rest := s[:n], s[n:]
	next := ""
	if i := exBar(rest); i >= 0 {
		rest, next = rest[:i], rest[i+1:]
	}
	switch name {
	case "r", "re", "rea", "read":
		if r := strings.TrimLeft(rest, " \t"); strings.HasPrefix(r, "!") {
			w.fork().script(r[1:]+orEmpty(next), c.depth+1)
			return
		}
	case "w", "wr", "wri", "writ", "write", "wq", "x", "xi", "xit", "up", "update":
		if r := strings.TrimLeft(rest, " \t"); len(r) < len(rest) && strings.HasPrefix(r, "!") {
			w.fork().script(r[1:]+orEmpty(next), c.depth+1)
			return
		}
	case "ter", "term", "termi", "termin", "termina", "terminal":
		r := strings.TrimLeft(rest, " \t!")
		for strings.HasPrefix(r, "++") {
			_, r, _ = strings.Cut(r, " ")
			r = strings.TrimLeft(r, " \t")
		}
		w.fork().script(r+orEmpty(next), c.depth+1)
		return
	case "sil", "sile", "silen", "silent", "uns", "unsilent", "verb", "verbose", "keepj", "keepjumps", "keepp", "keeppatterns",
		"noa", "noautocmd", "sandbox", "sand", "lefta", "leftabove", "abo", "aboveleft", "bel", "belowright", "bo", "botright",
		"to", "topleft", "vert", "vertical", "tab", "hid", "hide", "conf", "confirm", "keepalt", "keepmarks", "lockm", "lockmarks":
		// A modifier (silent! too): the command follows.
		r := strings.TrimPrefix(rest, "!")
		for len(r) > 0 && (r[0] >= '0' && r[0] <= '9') {
			r = r[1:]
		}
		w.exCommand(c, r+orEmpty(next), depth+1)
		return
	case "exe", "exec", "execu", "execut", "execute", "norm", "norma", "normal",
		"g", "gl", "glo", "glob", "globa", "global", "v", "vg", "vglobal", "windo", "bufdo", "argdo", "tabdo", "cdo", "cfdo", "ldo", "lfdo",
		"redir", "au", "autocmd",
		"com", "command", "nn", "nnoremap", "nm", "nmap", "map", "no", "noremap", "ino", "inoremap", "cnoremap", "cno", "tno", "tnoremap":
		// A command (or keys) run by another: the rest is read, and any
		// string in it.
		r := strings.TrimLeft(rest, "! \t")
		if strings.HasPrefix(name, "g") || strings.HasPrefix(name, "v") {
			// :g/pat/cmd
			if len(r) > 0 {
				d := r[0]
				if end := strings.IndexByte(r[1:], d); end >= 0 {
					r = r[end+2:]
				}
			}
		}
		if strings.Contains(r, "!") || strings.Contains(r, "system") {
			w.exCommand(c, strings.Trim(r, "\"'"), depth+1)
			w.readCode(c, lit(r))
		}
	case "cal", "call", "let", "ec", "echo", "py", "py3", "python", "python3", "pyx", "pythonx", "pydo", "py3do", "pyf", "pyfile",
		"lua", "luado", "perl", "perldo", "rub", "ruby", "rubydo", "tcl", "tcldo", "mz", "mzscheme", "if", "wh", "while", "for", "return":
		w.readCode(c, lit(rest))
	case "so", "sou", "sour", "sourc", "source", "luafile", "rubyfile", "py3file", "pyxfile", "perlfile", "tclfile":
		w.access(lit(strings.TrimSpace(rest)), false, false)
	}
	if next != "" {
		w.exCommand(c, next, depth+1)
	}
}

func orEmpty(next string) string {
	if next == "" {
		return ""
	}
	return "|" + next
}

// exBar is where the next ex command starts: the first | not escaped
// with a backslash or inside a string.
func exBar(s string) int {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '|':
			return i
		}
	}
	return -1
}

// runSqlite is sqlite3: its arguments after the database (and -cmd's)
// are SQL or dot commands, and so is its input; .shell and .system run a
// shell command, .once, .output, .import and .read with |cmd a pipe to or
// from one, .load a shared library.
func runSqlite(w *walker, c *cmd) stage {
	var texts []word
	db := false
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			if db {
				texts = append(texts, a)
			}
			db = true
			continue
		}
		s := a.lit
		opt := strings.TrimLeft(s, "-")
		switch {
		case s == "--":
			if i+1 < len(args) && !db {
				i++
				db = true
			}
			texts = append(texts, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(s, "-") && (opt == "cmd"):
			if i+1 < len(args) {
				i++
				texts = append(texts, args[i])
			}
		case strings.HasPrefix(s, "-") && (opt == "init"):
			if i+1 < len(args) {
				i++
				w.access(args[i], false, false)
			}
		case strings.HasPrefix(s, "-") && (opt == "separator" || opt == "newline" || opt == "nullvalue" || opt == "mmap" || opt == "vfs" ||
			opt == "lookaside" || opt == "pagecache" || opt == "heap" || opt == "maxsize" || opt == "escape" || opt == "pcachetrace" || opt == "zip"):
			i++
		case strings.HasPrefix(s, "-") && len(s) > 1:
		case !db:
			db = true
			w.access(a, false, false)
		default:
			texts = append(texts, a)
		}
	}
	for _, t := range texts {
		if t.unknown {
			// A value inside SQL is data; a command veto cannot see, or a
			// line that starts with one, may be a dot command.
			v, ok := visibleText(t)
			if !ok || startsHole(v) {
				w.finding(CannotVouch, c.seg, "sqlite3 runs commands veto cannot see, so it cannot vouch for them.")
				continue
			}
			w.sqliteText(c, v)
			continue
		}
		for _, v := range t.vals {
			w.sqliteText(c, v)
		}
	}
	if len(texts) > 0 || len(c.up) == 0 {
		return stage{}
	}
	for _, s := range c.up {
		if s.fetch || s.decode {
			w.finding(CannotVouch, c.seg, "sqlite3 runs commands it reads from a download or a decoding, which veto cannot see.")
			return stage{}
		}
	}
	last := c.up[len(c.up)-1]
	switch {
	case last.file:
	case last.text == nil:
		w.finding(CannotVouch, c.seg, "sqlite3 reads commands from input veto cannot see, so it cannot vouch for them.")
	default:
		for _, t := range last.text {
			w.sqliteText(c, t)
		}
	}
	return stage{}
}

// sqliteText reads SQL and dot commands, one dot command a line.
func (w *walker) sqliteText(c *cmd, text string) {
	if strings.Contains(strings.ToLower(text), "load_extension") {
		w.finding(CannotVouch, c.seg, "sqlite3 loads a shared library, code veto cannot see.")
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, ".") {
			continue
		}
		f := sqliteFields(line[1:])
		if len(f) == 0 {
			continue
		}
		args := f[1:]
		switch f[0] {
		case "shell", "system", "sh":
			w.fork().script(strings.Join(args, " "), c.depth+1)
		case "once", "output", "o", "import", "read", "r", "excel":
			for _, a := range args {
				if strings.HasPrefix(a, "-") && f[0] != "read" {
					continue
				}
				if p, ok := strings.CutPrefix(a, "|"); ok {
					w.fork().script(p, c.depth+1)
				} else {
					w.access(lit(a), f[0] == "once" || f[0] == "output" || f[0] == "o", false)
				}
				break
			}
		case "load":
			w.finding(CannotVouch, c.seg, "sqlite3 loads a shared library, code veto cannot see.")
		case "backup", "save":
			if len(args) > 0 {
				w.access(lit(args[len(args)-1]), true, false)
			}
		}
	}
}

// sqliteFields splits a dot command's arguments as sqlite3 does: on
// white space, with '…' and "…" quoting.
func sqliteFields(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			break
		}
		var b strings.Builder
		if q := s[i]; q == '\'' || q == '"' {
			i++
			for i < len(s) && s[i] != q {
				if q == '"' && s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			i++
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' {
				b.WriteByte(s[i])
				i++
			}
		}
		out = append(out, b.String())
	}
	return out
}

// gitRuns judges the commands git subcommands are given to run: rebase
// --exec, submodule foreach, bisect run, filter-branch's filters,
// difftool --extcmd, grep --open-files-in-pager, the upload-pack and
// receive-pack programs, and the ext:: transport, which runs a command
// for a remote.
func (w *walker) gitRuns(c *cmd, sub string, rest []word) {
	script := func(x word) { w.scriptOf(c, x) }
	valued := func(short string, long ...string) {
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			if a.unknown {
				for _, l := range long {
					w.unseenOption(c, a, "--"+l+"=")
				}
				continue
			}
			if a.lit == "--" {
				return
			}
			for _, l := range long {
				switch {
				case a.lit == "--"+l && i+1 < len(rest):
					i++
					script(rest[i])
				case strings.HasPrefix(a.lit, "--"+l+"="):
					script(tails(a, "--"+l+"="))
				}
			}
			if short != "" && strings.HasPrefix(a.lit, "-") && !strings.HasPrefix(a.lit, "--") {
				if j := strings.Index(a.lit, short); j > 0 {
					if j+1 < len(a.lit) {
						script(tails(a, a.lit[:j+1]))
					} else if i+1 < len(rest) {
						i++
						script(rest[i])
					}
				}
			}
		}
	}
	switch sub {
	case "rebase":
		valued("x", "exec")
	case "submodule":
		i := 0
		for i < len(rest) && !rest[i].unknown && strings.HasPrefix(rest[i].lit, "-") {
			i++
		}
		if i < len(rest) && !rest[i].unknown && rest[i].lit == "foreach" {
			args := rest[i+1:]
			for len(args) > 0 && !args[0].unknown && (args[0].lit == "--recursive" || args[0].lit == "--quiet" || args[0].lit == "-q") {
				args = args[1:]
			}
			if len(args) > 0 {
				w.scriptOf(c, joinWords(args))
			}
		}
	case "bisect":
		if len(rest) > 1 && !rest[0].unknown && rest[0].lit == "run" {
			w.nested(c, rest[1:])
		}
	case "filter-branch":
		valued("", "env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter", "setup")
	case "difftool", "mergetool":
		valued("x", "extcmd")
	case "grep":
		valued("O", "open-files-in-pager")
	case "clone":
		valued("u", "upload-pack")
	case "fetch", "pull", "ls-remote", "archive":
		valued("", "upload-pack", "exec")
	case "push", "send-pack":
		valued("", "receive-pack", "exec")
	}
	switch sub {
	case "clone", "fetch", "pull", "ls-remote", "submodule", "remote", "push", "archive":
		for _, a := range rest {
			for _, v := range a.vals {
				if strings.HasPrefix(strings.ToLower(v), "ext::") {
					w.finding(CannotVouch, c.seg, "git is told to reach a repository through a command (the ext transport), which veto does not vouch for.")
					return
				}
			}
		}
	}
}

// addRunners puts the programs that run other programs in the table.
func addRunners(m map[string]func(*walker, *cmd) stage) {
	// A program another handler already judges (poetry add, pipx install)
	// keeps that judgement, and its run subcommand is unwrapped too.
	both := func(a, b func(*walker, *cmd) stage) func(*walker, *cmd) stage {
		if a == nil {
			return b
		}
		return func(w *walker, c *cmd) stage {
			a(w, c)
			return b(w, c)
		}
	}
	for name := range wrapperSpecs {
		m[name] = both(m[name], runWrapper)
	}
	for name := range runnerSubs {
		m[name] = both(m[name], runRunnerSub)
	}
	for name, h := range map[string]func(*walker, *cmd) stage{
		"vim": runEditor, "vi": runEditor, "nvim": runEditor, "gvim": runEditor, "ex": runEditor, "rvim": runEditor,
		"emacs": runEmacs, "sqlite3": runSqlite, "gdb": runGdb, "man": runMan, "at": runAt, "batch": runAt,
		"fd": runFd, "fdfind": runFd, "cmake": runCmake, "rimraf": runRimraf, "del": runRimraf,
		"npx": runPackageRunner, "bunx": runPackageRunner, "uvx": runPackageRunner,
		"flock": wrapFlock, "sg": wrapSg, "entr": wrapEntr, "hyperfine": wrapHyperfine, "nix-shell": wrapNixShell, "nix": wrapNixShell,
		"nodemon": wrapNodemon, "watchexec": wrapWatchexec, "tmux": wrapTmux, "screen": wrapScreen, "expect": wrapExpect,
		"rscript": runInterp, "r": runInterp, "julia": runInterp, "elixir": runInterp, "groovy": runInterp, "octave": runInterp,
		"lldb": runLldb, "psql": runSQLClient, "mysql": runSQLClient, "mariadb": runSQLClient,
		"less": runLess,
	} {
		m[name] = h
	}
}

// runUv is uv: its registry options name hosts; uv run runs a command,
// uv tool run (uvx) a package's program.
func runUv(w *walker, c *cmd) stage {
	runPipInstall(w, c)
	spec := optSpec{val: "pw", long: map[string]bool{"python": true, "with": true, "from": true, "directory": true, "project": true,
		"index": true, "index-url": true, "extra-index-url": true, "env-file": true, "extra": true, "group": true, "package": true}}
	o := parseOpts(c.args, spec, true)
	if len(o.operands) < 2 || o.operands[0].unknown {
		return stage{}
	}
	switch o.operands[0].lit {
	case "run":
		p := parseOpts(o.operands[1:], spec, true)
		return w.nested(c, p.operands)
	case "tool":
		if !o.operands[1].unknown && (o.operands[1].lit == "run" || o.operands[1].lit == "x") {
			return runPackageRunner(w, &cmd{name: "uvx", args: o.operands[2:], depth: c.depth, up: c.up, seg: c.seg})
		}
	}
	return stage{}
}

// runEmacs is emacs: --eval's Lisp is read as code (shell-command,
// call-process); the files named are written.
func runEmacs(w *walker, c *cmd) stage {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			w.access(a, true, false)
			continue
		}
		switch s := a.lit; {
		case s == "--eval" || s == "-eval" || s == "--execute" || s == "-execute":
			if i+1 < len(args) {
				i++
				w.readCode(c, args[i])
			}
		case strings.HasPrefix(s, "--eval="):
			w.readCode(c, tails(a, "--eval="))
		case s == "-l" || s == "--load" || s == "-f" || s == "--funcall" || s == "-L" || s == "--directory" || s == "--script" || s == "-u" || s == "--user":
			i++
		case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "+"):
		default:
			w.access(a, true, false)
		}
	}
	return stage{}
}

// rSystem2 reads R's system2(command, args) and processx::run(command,
// args): the literals inside the call, quoted, are the command line.
func (w *walker) rSystem2(c *cmd, src string, t *codeText) {
	for _, call := range []string{"system2(", "run("} {
		from := 0
		for {
			i := strings.Index(src[from:], call)
			if i < 0 {
				break
			}
			start := from + i + len(call)
			depth, end := 1, len(src)
			for j := start; j < len(src); j++ {
				if src[j] == '(' {
					depth++
				} else if src[j] == ')' {
					if depth--; depth == 0 {
						end = j
						break
					}
				}
			}
			var argv []string
			for _, l := range t.lits {
				if l.start >= start && l.end <= end {
					argv = append(argv, "'"+strings.ReplaceAll(l.val, "'", `'\''`)+"'")
				}
			}
			if len(argv) > 0 {
				sub := w.fork()
				sub.code = true
				sub.script(strings.Join(argv, " "), c.depth+1)
			}
			from = start
		}
	}
}

// hole stands in the visible text of a word for a part veto cannot know.
const hole = "\x00"

// visibleText is a word's text with each part veto cannot know (a
// variable from the environment, a substitution) as hole: enough to see
// the structure of a sed script or of SQL around a value. ok is false
// when veto has not the word's source.
func visibleText(x word) (string, bool) {
	if !x.unknown {
		return x.lit, true
	}
	if x.src == nil {
		return "", false
	}
	var b strings.Builder
	var walk func(parts []syntax.WordPart)
	walk = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				walk(p.Parts)
			default:
				b.WriteString(hole)
			}
		}
	}
	walk(x.src.Parts)
	return b.String(), true
}

// startsHole reports whether text, or one of its lines, starts with a
// part veto cannot know.
func startsHole(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), hole) {
			return true
		}
	}
	return false
}

// runLldb is lldb: the commands -o/--one-line, -O, -k and -K give are
// read as gdb's are: platform shell and shell run a script, script runs
// Python.
func runLldb(w *walker, c *cmd) stage {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			continue
		}
		switch a.lit {
		case "-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash":
			if i+1 < len(args) {
				i++
				x := args[i]
				if !x.unknown {
					x = lit(strings.TrimPrefix(strings.TrimSpace(x.lit), "platform "))
				}
				w.gdbCommand(c, x)
			}
		case "-s", "--source", "-S", "--source-before-file", "-K", "--source-on-crash":
			if i+1 < len(args) {
				i++
				w.access(args[i], false, false)
			}
		case "--":
			if i+1 < len(args) {
				return stage{}
			}
		}
	}
	return stage{}
}

// runSQLClient is psql, mysql and mariadb: their meta-commands run a
// shell (psql's \! and \o or \g to |cmd, \copy … program 'cmd'; mysql's
// \! and system), in the SQL of -c/--command (psql), -e/--execute
// (mysql) or their input.
func runSQLClient(w *walker, c *cmd) stage {
	var texts []word
	psql := c.name == "psql"
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			continue
		}
		s := a.lit
		switch {
		case psql && (s == "-c" || s == "--command"), !psql && (s == "-e" || s == "--execute"):
			if i+1 < len(args) {
				i++
				texts = append(texts, args[i])
			}
		case psql && strings.HasPrefix(s, "--command="):
			texts = append(texts, tails(a, "--command="))
		case !psql && strings.HasPrefix(s, "--execute="):
			texts = append(texts, tails(a, "--execute="))
		case psql && strings.HasPrefix(s, "-c") && len(s) > 2:
			texts = append(texts, tails(a, "-c"))
		case !psql && strings.HasPrefix(s, "-e") && len(s) > 2:
			texts = append(texts, tails(a, "-e"))
		}
	}
	if len(texts) == 0 && len(c.up) > 0 {
		if last := c.up[len(c.up)-1]; last.text != nil {
			for _, t := range last.text {
				texts = append(texts, lit(t))
			}
		}
	}
	for _, t := range texts {
		// A value inside SQL is data; SQL veto cannot see, or a line that
		// starts with a part it cannot, may be a meta-command.
		v, ok := visibleText(t)
		if !ok || startsHole(v) {
			w.finding(CannotVouch, c.seg, "The database client runs commands veto cannot see, so it cannot vouch for them.")
			continue
		}
		w.sqlMeta(c, v, psql)
	}
	return stage{}
}

// sqlMeta reads the shell escapes of psql or mysql in text.
func (w *walker) sqlMeta(c *cmd, text string, psql bool) {
	run := func(s string) {
		if strings.Contains(s, hole) {
			w.finding(CannotVouch, c.seg, "The database client runs a shell command veto cannot see, so it cannot vouch for it.")
			return
		}
		w.fork().script(s, c.depth+1)
	}
	for _, line := range strings.Split(text, "\n") {
		for {
			i := strings.Index(line, `\`)
			if i < 0 || i+1 >= len(line) {
				break
			}
			rest := line[i+2:]
			switch line[i+1] {
			case '!':
				run(rest)
				rest = ""
			case 'o', 'g':
				if r := strings.TrimLeft(rest, " \t"); strings.HasPrefix(r, "|") && psql {
					run(r[1:])
					rest = ""
				}
			}
			line = rest
		}
		if !psql {
			for _, stmt := range strings.Split(line, ";") {
				if t := strings.TrimSpace(stmt); strings.HasPrefix(strings.ToLower(t), "system ") {
					run(t[len("system "):])
				}
			}
		}
	}
	if psql {
		lower := strings.ToLower(text)
		for from := 0; ; {
			i := strings.Index(lower[from:], "program ")
			if i < 0 {
				break
			}
			from += i + len("program ")
			r := strings.TrimLeft(text[from:], " \t")
			if len(r) > 1 && (r[0] == '\'' || r[0] == '"') {
				if end := strings.IndexByte(r[1:], r[0]); end >= 0 {
					run(r[1 : end+1])
				}
			}
		}
	}
}

// unseenOption reports, and refuses as cannot_vouch, an option word veto
// cannot know whose visible start is one of prefixes (--to-command="$X"):
// the command it gives cannot be seen.
func (w *walker) unseenOption(c *cmd, a word, prefixes ...string) bool {
	if !a.unknown {
		return false
	}
	v, ok := visibleText(a)
	if !ok {
		return false
	}
	for _, p := range prefixes {
		if strings.HasPrefix(v, p) {
			w.finding(CannotVouch, c.seg, "The program is told to run a command veto cannot see, so it cannot vouch for it.")
			return true
		}
	}
	return false
}

// unseenOptions is unseenOption for each of args.
func (w *walker) unseenOptions(c *cmd, args []word, prefixes ...string) {
	for _, a := range args {
		w.unseenOption(c, a, prefixes...)
	}
}

// runLess is less: its files are read; an initial command (+cmd, and
// ++cmd for every file) that is ! runs a shell command.
func runLess(w *walker, c *cmd) stage {
	files := make([]word, 0, len(c.args))
	for _, a := range c.args {
		if a.unknown || !strings.HasPrefix(a.lit, "+") {
			files = append(files, a)
		}
	}
	st := readsAll(readerSpecs["less"])(w, &cmd{name: c.name, args: files, depth: c.depth, up: c.up, seg: c.seg, stdinArgs: c.stdinArgs, repl: c.repl})
	for _, a := range c.args {
		if a.unknown {
			if v, ok := visibleText(a); ok && strings.HasPrefix(strings.TrimLeft(v, "+"), "!") {
				w.finding(CannotVouch, c.seg, "less is told to run a shell command veto cannot see, so it cannot vouch for it.")
			}
			continue
		}
		if a.lit == "--" {
			break
		}
		if cmd, ok := strings.CutPrefix(strings.TrimLeft(a.lit, "+"), "!"); ok && strings.HasPrefix(a.lit, "+") {
			w.fork().script(cmd, c.depth+1)
		}
	}
	return st
}
