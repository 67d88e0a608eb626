package files

import "strings"

// gitVar is one variable a git config file sets: its section and
// subsection (case kept; git compares sections without case, subsections
// with it), its name and its value. A name given without "=" is boolean
// true, its value "" with isBool set.
type gitVar struct {
	section, subsection, name, value string
	isBool                           bool
}

// parseGitConfig reads the variables of a git config file as git does
// (git-config(1), "Syntax"): a section header [section], [section
// "subsection"] or the older [section.subsection], which a variable may
// follow on the same line; "name = value" lines, # and ; comments outside
// double quotes; in a value, leading and trailing whitespace dropped,
// inner whitespace kept, double quotes removed, the escapes \" \\ \n \t \b,
// and a backslash at the end of a line joining the next. It returns the
// variables read before the first error (a line git refuses, after which
// git reads nothing of the file); ok is false then.
func parseGitConfig(text string) (vars []gitVar, ok bool) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	p := &gitConfigParser{s: text}
	for {
		p.skipSpace()
		c, more := p.peek()
		if !more {
			return vars, true
		}
		switch {
		case c == '\n':
			p.i++
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			if !p.header() {
				return vars, false
			}
		case isAlpha(c):
			v, good := p.variable()
			if !good {
				return vars, false
			}
			vars = append(vars, v)
		default:
			return vars, false
		}
	}
}

type gitConfigParser struct {
	s                   string
	i                   int
	section, subsection string
}

func (p *gitConfigParser) peek() (byte, bool) {
	if p.i >= len(p.s) {
		return 0, false
	}
	return p.s[p.i], true
}

// skipSpace skips spaces and tabs (not newlines).
func (p *gitConfigParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\v' || p.s[p.i] == '\f' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *gitConfigParser) skipLine() {
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		p.i++
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isNameChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

// header reads [section], [section "subsection"] or [section.sub].
func (p *gitConfigParser) header() bool {
	p.i++ // [
	start := p.i
	for p.i < len(p.s) && (isNameChar(p.s[p.i]) || p.s[p.i] == '.') {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return false
	}
	p.section, p.subsection = name, ""
	if dot := strings.IndexByte(name, '.'); dot >= 0 {
		// The older form: the subsection, lower-cased by git.
		p.section, p.subsection = name[:dot], strings.ToLower(name[dot+1:])
	}
	c, more := p.peek()
	switch {
	case !more:
		return false
	case c == ']':
		p.i++
		return true
	case c == ' ' || c == '\t':
		if strings.Contains(name, ".") {
			return false
		}
		p.skipSpace()
		if c, _ := p.peek(); c != '"' {
			return false
		}
		p.i++
		var sub strings.Builder
		for {
			c, more := p.peek()
			if !more || c == '\n' {
				return false
			}
			p.i++
			if c == '"' {
				break
			}
			if c == '\\' {
				if c, more = p.peek(); !more || c == '\n' {
					return false
				}
				p.i++
			}
			sub.WriteByte(c)
		}
		if c, _ := p.peek(); c != ']' {
			return false
		}
		p.i++
		p.subsection = sub.String()
		return true
	}
	return false
}

// variable reads "name", "name = value" or "name =" to the end of its
// line (or of the lines a trailing backslash joins).
func (p *gitConfigParser) variable() (gitVar, bool) {
	start := p.i
	for p.i < len(p.s) && isNameChar(p.s[p.i]) {
		p.i++
	}
	v := gitVar{section: p.section, subsection: p.subsection, name: p.s[start:p.i]}
	p.skipSpace()
	c, more := p.peek()
	switch {
	case !more || c == '\n':
		v.isBool = true
		return v, true
	case c == '#' || c == ';':
		p.skipLine()
		v.isBool = true
		return v, true
	case c != '=':
		return v, false
	}
	p.i++ // =
	val, good := p.value()
	v.value = val
	return v, good
}

// value reads a value as git-config(1) says, up to the end of its line.
func (p *gitConfigParser) value() (string, bool) {
	var b strings.Builder
	quote, comment := false, false
	space := 0
	for {
		c, more := p.peek()
		if !more {
			return b.String(), !quote
		}
		p.i++
		if c == '\n' {
			return b.String(), !quote
		}
		if comment {
			continue
		}
		if !quote {
			if c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' {
				if b.Len() > 0 {
					space++
				}
				continue
			}
			if c == ';' || c == '#' {
				comment = true
				continue
			}
		}
		for ; space > 0; space-- {
			b.WriteByte(' ')
		}
		switch c {
		case '\\':
			e, more := p.peek()
			if !more {
				return b.String(), false
			}
			p.i++
			switch e {
			case '\n':
				continue
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case 'n':
				e = '\n'
			case '\\', '"':
			default:
				return b.String(), false
			}
			b.WriteByte(e)
		case '"':
			quote = !quote
		default:
			b.WriteByte(c)
		}
	}
}
