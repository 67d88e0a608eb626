package shell

// What a pipeline stage gives a shell to run: the text echo and printf
// print, and what base64, xxd, openssl and uudecode decode.

import "strings"

// runEcho prints its arguments: the text is known when every argument is,
// and echo -e decodes escapes.
func runEcho(w *walker, c *cmd) stage {
	args := c.args
	decode, newline := false, true
	for len(args) > 0 && !args[0].unknown && (args[0].lit == "-n" || args[0].lit == "-e" || args[0].lit == "-E" || args[0].lit == "-ne" || args[0].lit == "-en") {
		decode = decode || strings.Contains(args[0].lit, "e")
		newline = newline && !strings.Contains(args[0].lit, "n")
		args = args[1:]
	}
	text := joinWords(args)
	if text.unknown {
		return stage{}
	}
	if decode && strings.Contains(text.lit, `\`) {
		return stage{decode: true}
	}
	if newline {
		for i := range text.vals {
			text.vals[i] += "\n"
		}
	}
	return stage{text: text.vals}
}

func runPrintf(w *walker, c *cmd) stage {
	if len(c.args) > 1 && !c.args[0].unknown && c.args[0].lit == "-v" {
		// printf -v NAME: the text goes to the variable.
		if c.args[1].unknown {
			return stage{}
		}
		var vals []string
		args := c.args[2:]
		if len(args) > 0 && !args[0].unknown && args[0].lit == "--" {
			args = args[1:]
		}
		if len(args) > 0 && !args[0].unknown && len(args[0].vals) == 1 {
			if text, ok := printfText(args[0].lit, args[1:]); ok {
				vals = []string{text}
			}
		}
		w.setVar(c, c.args[1].lit, vals)
		return stage{}
	}
	if len(c.args) == 0 || c.args[0].unknown || len(c.args[0].vals) != 1 {
		return stage{}
	}
	for _, a := range c.args[1:] {
		if a.unknown {
			return stage{} // text veto cannot know
		}
	}
	if text, ok := printfText(c.args[0].lit, c.args[1:]); ok {
		return stage{text: []string{text}}
	}
	return stage{decode: true}
}

// printfText is what printf prints for a format of plain text, %s, %%
// and the escapes \n, \t and \\, with known arguments (the format is
// reused while arguments remain, as printf does). Any other format may
// spell what it prints in code: not known.
func printfText(f string, args []word) (string, bool) {
	for _, a := range args {
		if a.unknown || len(a.vals) != 1 {
			return "", false
		}
	}
	var b strings.Builder
	used := 0
	for {
		for i := 0; i < len(f); i++ {
			switch c := f[i]; {
			case c == '\\' && i+1 < len(f):
				i++
				switch f[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\\':
					b.WriteByte('\\')
				default:
					return "", false
				}
			case c == '%' && i+1 < len(f):
				i++
				switch f[i] {
				case '%':
					b.WriteByte('%')
				case 's':
					if used < len(args) {
						b.WriteString(args[used].lit)
						used++
					}
				default:
					return "", false
				}
			case c == '\\' || c == '%':
				return "", false
			default:
				b.WriteByte(c)
			}
		}
		if used >= len(args) || !strings.Contains(f, "%s") {
			return b.String(), true
		}
	}
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
	// The files it reads: -in, and the key of -inkey, -key, -signkey,
	// -kfile, -CAkey (openssl rsa -in ~/.ssh/id_rsa prints the key).
	for i, a := range c.args {
		if i+1 < len(c.args) && (a.lit == "-in" || a.lit == "-inkey" || a.lit == "-key" || a.lit == "-signkey" || a.lit == "-kfile" || a.lit == "-CAkey") {
			w.access(c.args[i+1], false, false)
		}
	}
	for _, a := range c.args {
		if a.lit == "-d" || a.lit == "-base64" || a.lit == "base64" {
			return stage{decode: true}
		}
	}
	return stage{}
}

// decodeANSIC decodes the body of a $'…' string as bash does: \n, \t and
// the other C escapes, \xHH, \uHHHH, \UHHHHHHHH, octal \NNN and \cX.
func decodeANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n, j := 0, i+1
			for ; j < len(s) && j <= i+width && hexVal(s[j]) >= 0; j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		default: // \\, \', \", \? and anything else: the character itself
			if c != '\\' && c != '\'' && c != '"' && c != '?' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
