package shell

// Interpreters: shells with -c or a script, eval, source, and the
// one-liners of python, node, perl, ruby, php, lua, deno and bun, whose
// code is read for the commands it would run.

import "strings"

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
			w.finding(CannotVouch, c.seg, "The shell is given a script veto cannot see, so it cannot vouch for it.")
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
			w.finding(CannotVouch, c.seg, "The shell runs a script taken from input veto cannot see, so it cannot vouch for it.")
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
		w.finding(FetchToShell, c.seg, "The command runs what it downloads, which veto cannot see.")
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
		w.finding(FetchToShell, c.seg, "The command runs what it downloads, which veto cannot see.")
		return stage{}
	}
	if f.unknown {
		w.finding(CannotVouch, c.seg, "The command sources a file veto cannot determine, so it cannot vouch for it.")
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
		w.finding(CannotVouch, c.seg, "The interpreter runs code veto cannot see, so it cannot vouch for it.")
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
