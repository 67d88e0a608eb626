// Package glob is veto's one pattern engine, shared by every rule family
// and by CEL: the path patterns of the file lists (files.protected,
// persistence, credentials, write_scope, sequence.private), the globs of
// tool names and actors (offer.actors, sequence.max_calls, a CEL rule's
// match) and CEL's glob(). It uses the standard library only and imports
// nothing of veto's, so every package may import it.
//
// Three forms, one segment matcher:
//
//   - Name: a tool name or actor against a glob ("mcp__github__*"), with
//     path.Match's syntax but "/" an ordinary character: a tool name is
//     not a path, and "mcp__srv__*" covers "mcp__srv__dir/tool".
//   - Path: a string against a path glob whose "**" segments match any
//     number of segments (CEL's glob()).
//   - Set: a compiled list of path patterns, with "~/", absolute,
//     any-depth and anchored forms, "!" exclusions and case folding.
//
// Path and Set read a pattern's segments with one function (segments), so
// a pattern means one thing wherever a policy uses it: one a Set refuses
// ("//x", "x/", "a//b") matches nothing in Path.
package glob

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Meta are the characters that make a segment a glob rather than a
// literal.
const Meta = "*?[\\"

// Name reports whether name matches the glob pattern: "*" for any run of
// characters, "?" for any one, "[…]" classes and "\" escapes, as
// path.Match reads them, except that "/" is an ordinary character. Tool
// names hold "/" (MCP allows it), and a glob written for a server's tools
// ("mcp__srv__*") must not miss the ones named like paths. A malformed
// pattern matches nothing.
func Name(pattern, name string) bool {
	if _, err := path.Match(pattern, ""); err != nil {
		return false // malformed, wherever the fault lies
	}
	return matchFlat(pattern, name)
}

// CheckName reports what is wrong with a name glob, if anything: empty,
// or malformed for path.Match.
func CheckName(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("empty glob")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("malformed glob %q", pattern)
	}
	return nil
}

// matchFlat matches a well-formed pattern against s with no separator:
// each "*" backs off one byte at a time, as path.Match's does, from the
// last star seen (a later star makes an earlier one's choice final).
func matchFlat(p, s string) bool {
	star, from := -1, 0 // the pattern after the last "*", and where in s it was tried
	for px, sx := 0, 0; ; {
		if px < len(p) && p[px] == '*' {
			px++
			star, from = px, sx
			continue
		}
		if px == len(p) && sx == len(s) {
			return true
		}
		if px < len(p) && sx < len(s) {
			if pn, sn, ok := one(p[px:], s[sx:]); ok {
				px, sx = px+pn, sx+sn
				continue
			}
		}
		if star < 0 || from == len(s) {
			return false
		}
		from++
		px, sx = star, from
	}
}

// one matches the pattern element that starts p (a literal byte, "?", a
// class or an escape; never "*") against the start of s, which is not
// empty, and returns how many bytes of each it took.
func one(p, s string) (pn, sn int, ok bool) {
	switch p[0] {
	case '?':
		_, n := utf8.DecodeRuneInString(s)
		return 1, n, true
	case '[':
		r, n := utf8.DecodeRuneInString(s)
		pn, ok := class(p, r)
		return pn, n, ok
	case '\\':
		return 2, 1, p[1] == s[0]
	}
	return 1, 1, p[0] == s[0]
}

// class matches r against the well-formed class that starts p ("[…]",
// "[^…]") and returns the class's length in bytes.
func class(p string, r rune) (int, bool) {
	i := 1
	negated := i < len(p) && p[i] == '^'
	if negated {
		i++
	}
	match := false
	for n := 0; ; n++ {
		if p[i] == ']' && n > 0 {
			return i + 1, match != negated
		}
		lo, w := classRune(p[i:])
		i += w
		hi := lo
		if p[i] == '-' {
			hi, w = classRune(p[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			match = true
		}
	}
}

// classRune reads one (perhaps escaped) rune of a well-formed class.
func classRune(p string) (rune, int) {
	esc := 0
	if p[0] == '\\' {
		esc = 1
	}
	r, n := utf8.DecodeRuneInString(p[esc:])
	return r, esc + n
}

// segments reads a path pattern as Path and Compile both do: a leading
// "/" makes it absolute, "/" alone is the root (no segments), and every
// segment must be one path.Match reads and not empty. A doubled or
// trailing "/" is refused rather than read: a Set once dropped them where
// Path kept them, so "//**" matched "/0" in one and not the other, and
// "dir/" reads as "dir itself" to some and "below dir" to others.
func segments(pattern string) (segs []string, abs bool, err error) {
	if pattern == "/" {
		return nil, true, nil
	}
	body, abs := strings.CutPrefix(pattern, "/")
	segs = strings.Split(body, "/")
	for _, s := range segs {
		if s == "" {
			return nil, abs, fmt.Errorf("empty segment (a doubled or trailing \"/\"; a tree is \"dir/**\")")
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, abs, fmt.Errorf("malformed segment %q", s)
		}
	}
	return segs, abs, nil
}

// Path reports whether s matches pattern, segment by segment as a Set
// matches: each "/"-separated segment as path.Match reads it, and a
// segment "**" for any number of segments, none included. An absolute
// pattern matches only an absolute s, and on a canonical absolute path
// answers as it does in a Set. The empty pattern matches the empty
// string; a pattern a Set refuses (a doubled or trailing "/", a malformed
// segment) matches nothing. "!" and "~" have no meaning here.
func Path(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	segs, abs, err := segments(pattern)
	if err != nil {
		return false
	}
	if !abs {
		return matchSegs(segs, strings.Split(s, "/"))
	}
	if !strings.HasPrefix(s, "/") {
		return false
	}
	if s == "/" {
		return matchSegs(segs, nil)
	}
	return matchSegs(segs, strings.Split(s[1:], "/"))
}

// matchSegs matches segments against a pattern's segments: "**" for any
// number of them, else one segment path.Match takes. A "**" backs off as
// a "*" of matchFlat does, so that a pattern of many "**" costs the
// product of the two lengths, not their binomial.
func matchSegs(pat, segs []string) bool {
	star, from := -1, 0 // the pattern after the last "**", and where in segs it was tried
	for px, sx := 0, 0; ; {
		if px < len(pat) && pat[px] == "**" {
			px++
			star, from = px, sx
			continue
		}
		if px == len(pat) && sx == len(segs) {
			return true
		}
		if px < len(pat) && sx < len(segs) && segment(pat[px], segs[sx]) {
			px, sx = px+1, sx+1
			continue
		}
		if star < 0 || from == len(segs) {
			return false
		}
		from++
		px, sx = star, from
	}
}

// segment matches one segment: equal text, unless the pattern holds a
// class or an escape, which path.Match reads otherwise ("[a]" is "a").
func segment(pat, seg string) bool {
	if pat == seg && !strings.ContainsAny(pat, "[\\") {
		return true
	}
	ok, _ := path.Match(pat, seg)
	return ok
}
