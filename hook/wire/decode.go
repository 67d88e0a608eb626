package wire

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

var errAnswer = errors.New("wire: the answer is not one veto-hook reads")

// ParseResponse reads the server's answer, one JSON object of Response's
// fields, as encoding/json would (FuzzParseResponse holds the two
// together), without its reflection, whose first use in a process costs
// more than the rest of veto-hook's work. It is stricter: a key Response
// does not have, in any spelling, or a value that is an array or object,
// is an error (the answer is handed elsewhere).
func ParseResponse(b []byte) (Response, error) {
	var rs Response
	p := parser{b: b}
	ok := p.object(func(key string) bool {
		if p.lit("null") {
			return true // encoding/json leaves the field as it was
		}
		switch key {
		case "mismatch":
			v, ok := p.bool()
			rs.Mismatch = v
			return ok
		case "exit":
			n, ok := p.int()
			rs.Exit = n
			return ok
		case "build", "stdout", "stderr":
			s, ok := p.str()
			switch key {
			case "build":
				rs.Build = s
			case "stdout":
				rs.Stdout = s
			default:
				rs.Stderr = s
			}
			return ok
		}
		return false
	})
	if !ok {
		return rs, errAnswer
	}
	return rs, p.end()
}

type parser struct {
	b []byte
	i int
}

// object reads a JSON object: for each member, its key, and member with
// the parser at its value, which member reads (false: the object is not
// one the caller reads).
func (p *parser) object(member func(key string) bool) bool {
	p.space()
	if !p.eat('{') {
		return false
	}
	p.space()
	if p.eat('}') {
		return true
	}
	for {
		p.space()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.space()
		if !p.eat(':') {
			return false
		}
		p.space()
		if !member(key) {
			return false
		}
		p.space()
		if p.eat('}') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// end: nothing but white space after the object.
func (p *parser) end() error {
	p.space()
	if p.i != len(p.b) {
		return errAnswer
	}
	return nil
}

// int reads a JSON number that is an int (int64 on this platform's size).
func (p *parser) int() (int, bool) {
	n, ok := p.int64()
	return int(n), ok && int64(int(n)) == n
}

// int64 reads a JSON number that is an int64: an optional minus and
// digits, no leading zero, no fraction or exponent.
func (p *parser) int64() (int64, bool) {
	start := p.i
	p.eat('-')
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return n, err == nil
}

func (p *parser) bool() (bool, bool) {
	switch {
	case p.lit("true"):
		return true, true
	case p.lit("false"):
		return false, true
	}
	return false, false
}

// str reads a JSON string: its escapes decoded, and each byte that is not
// valid UTF-8, and each lone surrogate, as U+FFFD.
func (p *parser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	// The common answer has no escape and is ASCII: taken as it is.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					// A pair is one rune; a lone half is U+FFFD.
					if r2, ok := p.peekEscape(); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
						p.i += 6
						r = utf16.DecodeRune(r, r2)
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, p.b[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// peekEscape reads the \u escape that follows, if one does, without
// moving past it.
func (p *parser) peekEscape() (rune, bool) {
	if len(p.b)-p.i < 6 || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
		return 0, false
	}
	q := parser{b: p.b, i: p.i + 2}
	return q.hex4()
}
