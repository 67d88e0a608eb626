package shell

// Programs veto has no handler for are not assumed harmless when they are
// given a command: an option named like one that runs a command (--exec,
// --command, --run, --shell, --post-hook, …) has its value judged as a
// script; an operand that is a whole shell invocation ('bash -c "…"') is
// judged; and a shell, an interpreter or a removal among the operands
// with its own arguments (docker run img sh -c '…') is judged as the
// command it would be. Weaker signs (-c, -e or -x with a value, an
// operand that starts with a destructive program) are read as code is:
// only what would destroy counts, so a query, a pattern or a message is
// never refused for not parsing.

import (
	"path"
	"strings"
)

// foreignRunners run their command in a container or on another machine:
// its paths are not ours.
var foreignRunners = map[string]bool{"docker": true, "podman": true, "nerdctl": true, "kubectl": true, "oc": true, "lxc": true,
	"incus": true, "multipass": true, "vagrant": true, "limactl": true, "lima": true, "colima": true, "distrobox": true,
	"toolbox": true, "orb": true, "orbctl": true, "gcloud": true, "minikube": true, "kind": true}

// execOption is how strongly an option's name says its value is a
// command: 2 for --exec, --command, --cmd, --run, --shell, --eval and
// names built on them (--post-hook, --on-change-cmd), 1 for -c, -e and -x,
// 0 otherwise.
func execOption(name string) int {
	name = strings.ToLower(name)
	switch name {
	case "c", "e", "x":
		return 1
	case "exec", "execute", "command", "cmd", "run", "shell", "sh", "eval", "hook", "script", "call", "do", "sh-exec", "shell-cmd":
		return 2
	}
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		switch part {
		case "exec", "execute", "command", "cmd", "hook", "shell":
			return 2
		}
	}
	return 0
}

// shellNames are the programs that take a script with -c.
var shellNames = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "ash": true,
	"mksh": true, "csh": true, "tcsh": true, "yash": true, "busybox": true}

// destroyers are the programs whose mere arguments can destroy.
var destroyers = map[string]bool{"rm": true, "dd": true, "shred": true, "wipefs": true, "mkfs": true, "mke2fs": true,
	"rimraf": true, "blkdiscard": true, "crontab": true}

// invocation reports whether argv, from its first word, starts a command
// veto should judge: a shell given -c, an interpreter given code, or a
// destructive program given arguments.
func invocation(first string, next string, more bool) bool {
	name := strings.ToLower(path.Base(first))
	switch {
	case shellNames[name]:
		return strings.HasPrefix(next, "-") && !strings.HasPrefix(next, "--") && strings.Contains(next, "c")
	case pythonName(name) || name == "node" || name == "perl" || name == "ruby" || name == "php":
		return next == "-c" || next == "-e" || next == "-r" || next == "-E"
	case name == "eval":
		return more
	case destroyers[name] || strings.HasPrefix(name, "mkfs."):
		return more
	}
	return false
}

// unknownProgram reads the arguments of a program veto has no handler for
// for a command it is given.
func (w *walker) unknownProgram(c *cmd) {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.unknown {
			// --exec="$X": a command veto cannot see.
			if v, ok := visibleText(a); ok && strings.HasPrefix(v, "-") {
				if name, _, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "="); hasVal && !strings.Contains(name, hole) && execOption(name) == 2 {
					w.finding(CannotVouch, c.seg, "The program is told to run a command veto cannot see, so it cannot vouch for it.")
				}
			}
			continue
		}
		if a.lit == "" {
			continue
		}
		s := a.lit
		// A shell, an interpreter or a removal among the operands, with
		// its arguments: the rest of the line is that command.
		if i+1 < len(args) && !args[i+1].unknown && invocation(s, args[i+1].lit, true) && (shellLike(s) || runsNext(args, i)) {
			sub := w.fork()
			sub.remote = sub.remote || foreignRunners[c.name]
			sub.guest = sub.guest || foreignRunners[c.name]
			sub.command(args[i:], c.depth+1, c.up, false, "")
			return
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 && s != "--" {
			name, _, hasVal := strings.Cut(strings.TrimLeft(s, "-"), "=")
			strength := execOption(name)
			var val word
			switch {
			case strength == 0:
				continue
			case hasVal:
				val = tails(a, s[:strings.IndexByte(s, '=')+1])
			case i+1 < len(args):
				i++
				val = args[i]
			default:
				continue
			}
			w.commandValue(c, val, strength == 2)
			continue
		}
		if strings.ContainsAny(s, " \t\n") {
			w.commandOperand(c, a, i > 0 && isValueTaker(args[i-1]))
		}
	}
}

// isValueTaker reports whether a word is an option that may take the
// next word as its value (--body, -m): a message, not an operand.
func isValueTaker(a word) bool {
	return !a.unknown && strings.HasPrefix(a.lit, "-") && !strings.Contains(a.lit, "=") && a.lit != "--"
}

// commandValue judges the value of an option that runs a command: with a
// strong name as a script (a variable veto cannot see is cannot_vouch);
// with a weak one as code, only when it looks like a command line.
func (w *walker) commandValue(c *cmd, x word, strong bool) {
	if x.unknown {
		if strong {
			w.finding(CannotVouch, c.seg, "The program is told to run a command veto cannot see, so it cannot vouch for it.")
		}
		return
	}
	for _, v := range x.vals {
		if _, _, err := parse(v); err != nil {
			continue
		}
		sub := w.fork()
		sub.remote = sub.remote || foreignRunners[c.name]
		sub.guest = sub.guest || foreignRunners[c.name]
		if !strong {
			if !commandLine(v) {
				continue
			}
			sub.code = true
		}
		sub.script(v, c.depth+1)
	}
}

// commandOperand judges an operand that holds a whole command line: a
// shell invocation as a script, a destructive program's line as code. An
// operand that follows an option (a message, a title, a body) is judged
// only as a shell invocation.
func (w *walker) commandOperand(c *cmd, x word, afterOption bool) {
	for _, v := range x.vals {
		f := strings.Fields(v)
		if len(f) < 2 {
			continue
		}
		shellLike := shellLike(f[0])
		if !invocation(f[0], f[1], true) || (!shellLike && afterOption) {
			continue
		}
		if _, _, err := parse(v); err != nil {
			continue
		}
		sub := w.fork()
		sub.remote = sub.remote || foreignRunners[c.name]
		sub.guest = sub.guest || foreignRunners[c.name]
		sub.code = !shellLike
		sub.script(v, c.depth+1)
	}
}

// commandLine reports whether a weak option's value reads as a command
// line: its first word a program veto judges, given arguments.
func commandLine(v string) bool {
	f := strings.Fields(v)
	if len(f) < 2 {
		return false
	}
	name := strings.ToLower(path.Base(f[0]))
	return handler(name) != nil && !readerSpecsHas(name)
}

// readerSpecsHas reports whether a program only reads (cat, ls, wc): no
// command line worth reading.
func readerSpecsHas(name string) bool {
	_, ok := readerSpecs[name]
	return ok
}

// shellLike reports whether a program runs the script or code it is
// given: a shell, an interpreter, eval.
func shellLike(prog string) bool {
	name := strings.ToLower(path.Base(prog))
	return shellNames[name] || pythonName(name) || name == "node" || name == "perl" || name == "ruby" || name == "php" || name == "eval"
}

// runsNext reports whether the word at i stands where a command to run
// would: after "--", after an option, or after a subcommand that runs one
// (run, exec). A program's own subcommand (docker rm, brew rm) is not.
func runsNext(args []word, i int) bool {
	if i == 0 || args[i-1].unknown {
		return false
	}
	switch p := args[i-1].lit; {
	case p == "--", p == "run", p == "exec", p == "x", p == "do", p == "execute", p == "call", p == "with":
		return true
	case strings.HasPrefix(p, "-"):
		return true
	}
	return false
}
