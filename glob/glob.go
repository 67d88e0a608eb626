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
//     path.Match's syntax.
//   - Path: a string against a glob whose "**" segments match any number
//     of segments (CEL's glob(), a CEL rule's match).
//   - Set: a compiled list of path patterns, with "~/", absolute,
//     any-depth and anchored forms, "!" exclusions and case folding.
package glob

import (
	"fmt"
	"path"
	"strings"
)

// Meta are the characters that make a segment a glob rather than a
// literal.
const Meta = "*?[\\"

// Name reports whether name matches the glob pattern, with path.Match's
// syntax: "*" and "?" within a "/"-separated part, "[…]" classes, "\"
// escapes. A malformed pattern matches nothing.
func Name(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
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

// Path reports whether s matches pattern, segment by segment as a Set
// matches: each "/"-separated segment as path.Match reads it, and a
// segment "**" for any number of segments, none included. On an absolute
// path an absolute pattern answers as it does in a Set. A malformed
// pattern matches nothing.
func Path(pattern, s string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(s, "/"))
}

// matchSegs matches segments against a pattern's segments: "**" for any
// number of them, else one segment path.Match takes.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		// Equal text matches unless the segment holds a class or an
		// escape, which path.Match reads otherwise ("[a]" is "a").
		if pat[0] != segs[0] || strings.ContainsAny(pat[0], "[\\") {
			if ok, _ := path.Match(pat[0], segs[0]); !ok {
				return false
			}
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
