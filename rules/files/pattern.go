package files

import (
	"fmt"
	"path"
	"strings"
)

// A pattern is a glob over path segments: "*" and the other path.Match
// forms within a segment, "**" for any number of segments (none
// included, so "dir/**" covers dir itself). A pattern starting with "/" is
// absolute, with "~/" is below the home directory, and any other matches
// at any depth. A pattern starting with "!" excludes what it matches.
type pattern struct {
	src  string
	segs []string
	rel  bool // matched against the path relative to an anchor

	// Fast paths, so that most patterns cost a string compare.
	base     string   // for "**/<one segment>": the segment, matched against the last one only
	baseKind byte     // how base matches: '=' literal, 's' "*lit" suffix, 'p' "lit*" prefix, 'g' glob
	prefix   string   // for an absolute pattern: its leading literal segments, joined
	under    string   // prefix + "/"
	needles  []string // "/seg" for every literal segment: a path lacking one cannot match
}

const globMeta = "*?[\\"

func (pt *pattern) prepare() {
	for _, s := range pt.segs {
		if s != "**" && !strings.ContainsAny(s, globMeta) {
			pt.needles = append(pt.needles, "/"+s)
		}
	}
	if len(pt.segs) == 2 && pt.segs[0] == "**" && pt.segs[1] != "**" {
		b := pt.segs[1]
		switch {
		case !strings.ContainsAny(b, globMeta):
			pt.base, pt.baseKind = b, '='
		case b[0] == '*' && !strings.ContainsAny(b[1:], globMeta):
			pt.base, pt.baseKind = b[1:], 's'
		case b[len(b)-1] == '*' && !strings.ContainsAny(b[:len(b)-1], globMeta):
			pt.base, pt.baseKind = b[:len(b)-1], 'p'
		default:
			pt.base, pt.baseKind = b, 'g'
		}
		return
	}
	if pt.rel {
		return
	}
	for _, s := range pt.segs {
		if strings.ContainsAny(s, globMeta) {
			break
		}
		pt.prefix += "/" + s
	}
	pt.under = pt.prefix + "/"
}

// hitAbs matches pt against the absolute path p, whose last segment is
// last; segs splits p into segments the first time a pattern needs them.
func (pt *pattern) hitAbs(p, last string, segs func() []string) bool {
	if pt.baseKind != 0 {
		if p == "/" {
			return false
		}
		switch pt.baseKind {
		case '=':
			return last == pt.base
		case 's':
			return strings.HasSuffix(last, pt.base)
		case 'p':
			return strings.HasPrefix(last, pt.base)
		}
		ok, _ := path.Match(pt.base, last)
		return ok
	}
	if pt.prefix != "" && !(p == pt.prefix || strings.HasPrefix(p, pt.under)) {
		return false
	}
	for _, n := range pt.needles {
		if !strings.Contains(p, n) {
			return false
		}
	}
	return matchSegs(pt.segs, segs())
}

type patterns struct {
	include, exclude []pattern
	fold             bool
}

// compilePatterns compiles list. With anchored, a relative pattern is
// matched against the path relative to the anchor given to match, instead
// of at any depth.
func compilePatterns(list []string, home string, fold, anchored bool) (patterns, error) {
	ps := patterns{fold: fold}
	for _, src := range list {
		neg := strings.HasPrefix(src, "!")
		body := strings.TrimPrefix(src, "!")
		rel := false
		switch {
		case body == "":
			return ps, fmt.Errorf("empty pattern")
		case body == "~" || strings.HasPrefix(body, "~/"):
			if home == "" {
				return ps, fmt.Errorf("pattern %q: home directory unknown", src)
			}
			body = home + body[1:]
		case !strings.HasPrefix(body, "/") && anchored:
			rel = true
		case !strings.HasPrefix(body, "/"):
			body = "**/" + body
		}
		if fold {
			body = strings.ToLower(body)
		}
		segs := strings.Split(strings.Trim(body, "/"), "/")
		if body == "/" {
			segs = nil
		}
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil || s == "" {
				return ps, fmt.Errorf("pattern %q: malformed segment %q", src, s)
			}
		}
		p := pattern{src: src, segs: segs, rel: rel}
		p.prepare()
		if neg {
			ps.exclude = append(ps.exclude, p)
		} else {
			ps.include = append(ps.include, p)
		}
	}
	return ps, nil
}

// match reports whether the canonical absolute path p matches an include
// pattern and no exclude pattern, and returns the include pattern.
// Anchored relative patterns match p relative to anchor, and only when p
// is below it.
func (ps *patterns) match(p, anchor string) (string, bool) {
	if ps.fold {
		p, anchor = strings.ToLower(p), strings.ToLower(anchor)
	}
	var abs []string
	segs := func() []string {
		if abs == nil {
			abs = splitPath(p)
		}
		return abs
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	relOK := anchor != "" && toolpathWithin(p, anchor)
	hit := func(pt *pattern) bool {
		if pt.rel {
			return relOK && matchSegs(pt.segs, segs()[len(splitPath(anchor)):])
		}
		return pt.hitAbs(p, last, segs)
	}
	for i := range ps.include {
		if !hit(&ps.include[i]) {
			continue
		}
		for j := range ps.exclude {
			if hit(&ps.exclude[j]) {
				return "", false
			}
		}
		return ps.include[i].src, true
	}
	return "", false
}

func splitPath(p string) []string {
	if p == "/" || p == "" {
		return nil
	}
	return strings.Split(strings.Trim(p, "/"), "/")
}

func toolpathWithin(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
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
		if pat[0] != segs[0] {
			if ok, _ := path.Match(pat[0], segs[0]); !ok {
				return false
			}
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// anchors returns the fixed directory prefixes of the absolute include
// patterns: "/home/u/.ssh" for "/home/u/.ssh/**". A search of a tree
// holding one of them reads what the pattern protects.
func (ps *patterns) anchors() []string {
	var out []string
	for _, in := range ps.include {
		if len(in.segs) == 0 || in.segs[0] == "**" {
			continue
		}
		var fixed []string
		for _, s := range in.segs {
			if strings.ContainsAny(s, "*?[\\") {
				break
			}
			fixed = append(fixed, s)
		}
		if len(fixed) > 0 {
			out = append(out, "/"+strings.Join(fixed, "/"))
		}
	}
	return out
}

// CheckPattern reports what is wrong with a pattern, if anything, in the
// language of the file rules' lists.
func CheckPattern(p string) error {
	_, err := compilePatterns([]string{p}, "/home", false, false)
	return err
}

// Matcher is a compiled list of file patterns, for rules outside this
// package that judge paths the same way (sequence.no_egress_after_private_read).
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
	if m == nil || p == "" || !strings.HasPrefix(p, "/") {
		return "", false
	}
	return m.ps.match(p, "")
}
