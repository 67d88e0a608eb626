package shell

// sed scripts: GNU sed's e command and s///e flag run shell commands, and
// its w and W commands and s///w flag write files.

import "strings"

// sedScript reads a sed script for what it runs and writes.
func (w *walker) sedScript(c *cmd, x word) {
	if x.unknown {
		// A value inside the script (s/$old/$new/) is text; a script, or
		// a command, veto cannot see may be e or w.
		v, ok := visibleText(x)
		if !ok || startsHole(v) || strings.Contains(v, ";"+hole) || strings.Contains(v, "}"+hole) {
			w.finding(CannotVouch, c.seg, "sed runs a script veto cannot see, which may run commands or write files.")
			return
		}
		x = lit(v)
	}
	for _, v := range x.vals {
		if !strings.ContainsAny(v, "ewW") {
			continue // neither an e nor a w anywhere: nothing to find
		}
		w.sedCommands(c, v)
	}
}

// sedCommands walks the commands of one script.
func (w *walker) sedCommands(c *cmd, s string) {
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		var out string
		if j < 0 {
			out, i = s[i:], len(s)
		} else {
			out, i = s[i:i+j], i+j+1
		}
		return out
	}
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited skips a delimited part (a regex, s's parts), its
	// delimiter at s[i-1].
	delimited := func(d byte) {
		for i < len(s) {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return
			case '\n':
				if d != '\n' {
					i++
					return
				}
			}
			i++
		}
	}
	for i < len(s) {
		// Separators and addresses.
		for i < len(s) && strings.IndexByte(" \t\n;{}!", s[i]) >= 0 {
			i++
		}
		for i < len(s) {
			ch := s[i]
			switch {
			case ch >= '0' && ch <= '9' || ch == '$' || ch == ',' || ch == '~' || ch == '+' || ch == ' ' || ch == '\t' || ch == '!':
				i++
				continue
			case ch == '/':
				i++
				delimited('/')
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			case ch == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				delimited(d)
				continue
			}
			break
		}
		if i >= len(s) {
			return
		}
		cmdch := s[i]
		i++
		switch cmdch {
		case '{', '}', ';', '\n':
		case '#', ':', 'b', 't', 'T', 'a', 'i', 'c', 'r', 'R', 'q', 'Q', 'l', 'L', 'v', 'z', '=':
			// Labels, text, files read and the like take the rest of the
			// line; labels and b/t stop at ';' too in GNU sed.
			switch cmdch {
			case ':', 'b', 't', 'T', 'q', 'Q', 'l', 'L', 'v':
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					i++
				}
			case 'z', '=':
			case 'a', 'i', 'c':
				// Text, continued on the next line after a backslash.
				for text := restOfLine(); strings.HasSuffix(text, "\\") && i < len(s); {
					text = restOfLine()
				}
			default:
				restOfLine()
			}
		case 'e':
			skipSpace()
			command := restOfLine()
			if strings.TrimSpace(command) == "" {
				w.finding(CannotVouch, c.seg, "sed runs its pattern space as a command, which veto cannot see.")
				continue
			}
			if strings.Contains(command, hole) {
				w.finding(CannotVouch, c.seg, "sed runs a command veto cannot see, so it cannot vouch for it.")
				continue
			}
			w.fork().script(command, c.depth+1)
		case 'w', 'W':
			skipSpace()
			w.sedWrite(restOfLine())
		case 's', 'y':
			if i >= len(s) {
				return
			}
			d := s[i]
			i++
			delimited(d)
			delimited(d)
			if cmdch == 'y' {
				continue
			}
			// Flags, up to the end of the command.
			for i < len(s) {
				f := s[i]
				if f == ';' || f == '\n' || f == '}' || f == '#' {
					break
				}
				i++
				switch f {
				case 'e':
					w.finding(CannotVouch, c.seg, "sed runs the result of a substitution as a command, which veto cannot see.")
				case 'w':
					skipSpace()
					w.sedWrite(restOfLine())
				}
			}
		default:
			// n, N, p, P, d, D, g, G, h, H, x, F: one letter each.
		}
	}
}

// sedWrite is a file sed writes: /dev/stdout and /dev/stderr are none.
func (w *walker) sedWrite(name string) {
	if name == "" || name == "/dev/stdout" || name == "/dev/stderr" {
		return
	}
	if strings.Contains(name, hole) {
		w.access(word{unknown: true}, true, false)
		return
	}
	w.access(lit(name), true, false)
}
