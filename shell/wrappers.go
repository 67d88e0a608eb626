package shell

// Wrappers: programs that run another command (sudo, env, nohup, timeout,
// nice, xargs, parallel, watch, …), which is analysed in their place.

import "strings"

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

// wrapSu is su and runuser: -c's command is a script for the user's
// shell; without it, su starts that shell on its input.
func wrapSu(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "csgGw", long: map[string]bool{"command": true, "session-command": true, "shell": true,
		"group": true, "supp-group": true, "whitelist-environment": true, "user": c.name == "runuser"},
		flags: []string{"login", "fast", "preserve-environment", "pty", "help", "version"}}, false)
	if scripts := o.all("c", "command", "session-command"); len(scripts) > 0 {
		for _, s := range scripts {
			w.scriptOf(c, s)
		}
		return stage{}
	}
	if len(o.operands) > 1 && c.name == "runuser" {
		return w.nested(c, o.operands[1:]) // runuser -u user cmd …
	}
	return w.fromStdin(c, false)
}

func wrapSudo(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "ugpCDrtTUh", long: map[string]bool{"user": true, "group": true, "prompt": true,
		"close-from": true, "chdir": true, "role": true, "type": true, "other-user": true, "host": true, "command-timeout": true},
		flags: []string{"askpass", "background", "bell", "preserve-env", "edit", "set-home", "help", "login", "remove-timestamp",
			"reset-timestamp", "list", "non-interactive", "preserve-groups", "chroot", "stdin", "shell", "version", "validate"}}, true)
	if o.has("e", "edit") {
		for _, f := range o.operands {
			w.access(f, true, false)
		}
		return stage{}
	}
	return w.nested(c, o.operands)
}

// envLongs are GNU env's long options.
var envLongs = []string{"split-string", "chdir", "unset", "ignore-environment", "null", "block-signal", "default-signal",
	"ignore-signal", "list-signal-handling", "debug", "help", "version"}

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
		if len(s) > 2 && s[0] == '-' && s[1] != '-' {
			// A cluster of flags before -S (env -iS'…', -vS): the flags
			// change nothing veto judges.
			if j := strings.TrimLeft(s[1:], "iv0"); j != s[1:] && strings.HasPrefix(j, "S") {
				s = "-" + j
			}
		}
		if name, val, hasVal := strings.Cut(strings.TrimPrefix(s, "--"), "="); strings.HasPrefix(s, "--") && s != "--" {
			if full := longName(name, envLongs); full != name {
				s = "--" + full // env takes any unambiguous prefix: --split is --split-string
				if hasVal {
					s += "=" + val
				}
			}
		}
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
			if len(args) > 0 && args[0].unknown {
				w.finding(CannotVouch, c.seg, "env -S is given a string veto cannot see, so it cannot vouch for it.")
				return stage{}
			}
			parts, err := splitEnvS(str, func(name string) (string, bool) {
				if v, ok := w.lookup(name); ok && len(v) == 1 {
					return v[0], true
				}
				return "", false
			})
			if err != nil {
				w.finding(CannotVouch, c.seg, "env -S is given a string it cannot split, so veto cannot vouch for it.")
				return stage{}
			}
			var split []word
			for _, p := range parts {
				if p.unknown {
					split = append(split, word{unknown: true})
					continue
				}
				split = append(split, lit(p.val))
			}
			args = append(split, args[1:]...)
			continue
		case strings.HasPrefix(s, "-"):
		case looksAssign(s):
			name, val, _ := strings.Cut(s, "=")
			w.envHosts(name, lit(val))
			w.startupEnv(name, lit(val), c.depth)
		default:
			goto command
		}
		args = args[1:]
	}
command:
	if len(args) == 0 {
		w.r.find(RuleEnvDump, EnvDump, c.seg, "The command prints the environment, which holds secrets.")
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

// joinWords joins words with spaces; unknown if any is. A word with
// several values gives a joined text for each (past maxValues, unknown).
func joinWords(ws []word) word {
	multi := false
	for _, x := range ws {
		if x.unknown {
			return word{unknown: true}
		}
		multi = multi || len(x.vals) > 1
	}
	if !multi {
		parts := make([]string, len(ws))
		for i, x := range ws {
			parts[i] = x.lit
		}
		return lit(strings.Join(parts, " "))
	}
	vals := []string{""}
	for i, x := range ws {
		sep := " "
		if i == 0 {
			sep = ""
		}
		next := make([]string, 0, len(vals)*len(x.vals))
		for _, v := range vals {
			for _, y := range x.vals {
				next = append(next, v+sep+y)
			}
		}
		if len(next) > maxValues {
			return word{unknown: true}
		}
		vals = next
	}
	return word{vals: vals, lit: vals[0]}
}

// scriptOf analyses a word as a shell script one level deeper.
func (w *walker) scriptOf(c *cmd, script word) stage {
	if script.unknown {
		w.finding(CannotVouch, c.seg, "The command runs a script veto cannot see (a variable, an expansion or input), so it cannot vouch for it.")
		return stage{}
	}
	for _, v := range script.vals {
		w.fork().script(v, c.depth+1)
	}
	return stage{}
}

func wrapXargs(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "aEdIJLnPs", long: map[string]bool{"arg-file": true, "delimiter": true,
		"max-args": true, "max-procs": true, "max-chars": true, "process-slot-var": true},
		flags: []string{"null", "eof", "replace", "max-lines", "interactive", "no-run-if-empty", "show-limits", "verbose", "exit",
			"open-tty", "help", "version"}}, true)
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
		return w.fromStdin(c, false)
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

// fromStdin analyses what a shell (or, with code, an interpreter) reads
// from its input: a download or decoding anywhere upstream is refused; the
// literal text an echo, a here-document or a here-string gives is
// analysed; a file given with cat or < is a file read; any other producer
// cannot be vouched for. With no input at all there is nothing to run.
func (w *walker) fromStdin(c *cmd, code bool) stage {
	if len(c.up) == 0 {
		return stage{}
	}
	return w.runFeed(c, c.up, code)
}

// runFeed analyses a stream a shell or interpreter runs: the last of
// stages, with what the ones before it did.
func (w *walker) runFeed(c *cmd, stages []stage, code bool) stage {
	for _, s := range stages {
		switch {
		case s.fetch:
			w.finding(FetchToShell, c.seg, "The command runs what it downloads, which veto cannot see.")
			return stage{}
		case s.decode:
			w.finding(DecodeToShell, c.seg, "The command runs what it decodes, which veto cannot see.")
			return stage{}
		}
	}
	last := stages[len(stages)-1]
	switch {
	case last.file:
		return stage{}
	case last.text == nil:
		w.finding(CannotVouch, c.seg, "The command runs a script it reads from input veto cannot see, so it cannot vouch for it.")
		return stage{}
	}
	for _, t := range last.text {
		if code {
			w.readCode(c, lit(t))
			continue
		}
		if (c.name == "source" || c.name == ".") && len(last.text) == 1 {
			w.script(t, c.depth+1) // source runs it in this shell: what it defines holds
			continue
		}
		w.fork().script(t, c.depth+1)
	}
	return stage{}
}

// wrapScript is script(1): -c's command runs in a shell on a terminal of
// its own; without it, script starts the user's shell on its input. The
// operand is the typescript file it writes.
func wrapScript(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "cEIOTBm", long: map[string]bool{"command": true, "echo": true, "log-in": true,
		"log-out": true, "log-timing": true, "log-io": true, "logging-format": true, "output-limit": true, "timing": true}}, false)
	for _, f := range o.operands {
		w.access(f, true, false)
	}
	if scripts := o.all("c", "command"); len(scripts) > 0 {
		for _, s := range scripts {
			w.scriptOf(c, s)
		}
		return stage{}
	}
	return w.fromStdin(c, false)
}

// wrapCommand is the command builtin: command -v NAME only says what the
// name is. With more words (command -v git reset --hard) what follows is
// judged as a command still, as a careful reader would.
func wrapCommand(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{}, true)
	if o.has("v", "V") && len(o.operands) == 1 {
		return stage{}
	}
	return w.nested(c, o.operands)
}
