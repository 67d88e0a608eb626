package files

import (
	"github.com/vetohq/veto/glob"
)

// patterns is a compiled pattern list; the engine is package glob's.
type patterns struct{ set glob.Set }

// compilePatterns compiles list. With anchored, a relative pattern is
// matched against the path relative to the anchor given to match, instead
// of at any depth.
func compilePatterns(list []string, home string, fold, anchored bool) (patterns, error) {
	set, err := glob.Compile(list, glob.Options{Home: home, Fold: fold, Anchored: anchored})
	return patterns{set}, err
}

// match reports whether the canonical absolute path p matches an include
// pattern and no exclude pattern, and returns the include pattern.
func (ps *patterns) match(p, anchor string) (string, bool) { return ps.set.Match(p, anchor) }

// anchors returns the fixed directory prefixes of the absolute include
// patterns (glob.Set.Anchors).
func (ps *patterns) anchors() []string { return ps.set.Anchors() }

// CheckPattern reports what is wrong with a pattern, if anything, in the
// language of the file rules' lists (glob.Check).
func CheckPattern(p string) error { return glob.Check(p) }

// Matcher is a compiled list of file patterns, for code outside this
// package that judges paths the same way. New code uses glob.Set.
type Matcher struct{ ps patterns }

// CompileMatcher compiles list; "~/" patterns need home.
func CompileMatcher(list []string, home string) (*Matcher, error) {
	ps, err := compilePatterns(list, home, false, false)
	if err != nil {
		return nil, err
	}
	return &Matcher{ps}, nil
}

// Match reports whether the canonical absolute path p matches, and the
// pattern that did.
func (m *Matcher) Match(p string) (string, bool) {
	if m == nil {
		return "", false
	}
	return m.ps.match(p, "")
}
