package glob

import (
	"fmt"
	"path"
	"strings"
)

// A pattern is a glob over path segments: "*" and the other path.Match
// forms within a segment, "**" for any number of segments (none
// included, so "dir/**" covers dir itself). A pattern starting with "/" is
// absolute, with "~/" is below the home directory, and any other matches
// at any depth (or, compiled Anchored, below the anchor given to Match).
// A pattern starting with "!" excludes what it matches.
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

func (pt *pattern) prepare() {
	for _, s := range pt.segs {
		if s != "**" && !strings.ContainsAny(s, Meta) {
			pt.needles = append(pt.needles, "/"+s)
		}
	}
	if len(pt.segs) == 2 && pt.segs[0] == "**" && pt.segs[1] != "**" {
		b := pt.segs[1]
		switch {
		case !strings.ContainsAny(b, Meta):
			pt.base, pt.baseKind = b, '='
		case b[0] == '*' && !strings.ContainsAny(b[1:], Meta):
			pt.base, pt.baseKind = b[1:], 's'
		case b[len(b)-1] == '*' && !strings.ContainsAny(b[:len(b)-1], Meta):
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
		if strings.ContainsAny(s, Meta) {
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

// Options are how Compile reads a list.
type Options struct {
	// Home is what "~" and "~/…" stand for; without it such a pattern is
	// an error.
	Home string
	// Fold compares without case, for filesystems that ignore it.
	Fold bool
	// Anchored matches a relative pattern against the path relative to
	// the anchor given to Match, instead of at any depth.
	Anchored bool
}

// Set is a compiled list of path patterns. The zero Set matches nothing.
type Set struct {
	include, exclude []pattern
	fold             bool
}

// Compile compiles list, naming the first pattern it cannot read.
func Compile(list []string, o Options) (Set, error) {
	ps := Set{fold: o.Fold}
	for _, src := range list {
		neg := strings.HasPrefix(src, "!")
		body := strings.TrimPrefix(src, "!")
		rel := false
		switch {
		case body == "":
			return ps, fmt.Errorf("empty pattern")
		case body == "~" || strings.HasPrefix(body, "~/"):
			if o.Home == "" {
				return ps, fmt.Errorf("pattern %q: home directory unknown", src)
			}
			// A home given with a trailing "/" ("/" itself among them) is
			// not a doubled "/" of the pattern's.
			if body = strings.TrimRight(o.Home, "/") + body[1:]; body == "" {
				body = "/"
			}
		case !strings.HasPrefix(body, "/") && o.Anchored:
			rel = true
		case !strings.HasPrefix(body, "/"):
			body = "**/" + body
		}
		// Read as written, then folded: lower-casing turns bytes that are
		// not UTF-8 into U+FFFD, and a Set must refuse what Check refuses.
		segs, _, err := segments(body)
		if err == nil && o.Fold {
			segs, _, err = segments(strings.ToLower(body))
		}
		if err != nil {
			return ps, fmt.Errorf("pattern %q: %w", src, err)
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

// Check reports what is wrong with a path pattern, if anything, in the
// language of the file rules' lists.
func Check(pattern string) error {
	_, err := Compile([]string{pattern}, Options{Home: "/home"})
	return err
}

// Match reports whether the canonical absolute path p matches an include
// pattern and no exclude pattern, and returns the include pattern as it
// was written. Anchored relative patterns match p relative to anchor, and
// only when p is below it. A p that is not absolute matches nothing.
func (ps *Set) Match(p, anchor string) (string, bool) {
	if ps == nil || !strings.HasPrefix(p, "/") {
		return "", false
	}
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
	relOK := anchor != "" && within(p, anchor)
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

// Anchors returns the fixed directory prefixes of the absolute (and
// "~/") include patterns: "/home/u/.ssh" for "/home/u/.ssh/**". A search of a tree
// holding one of them reads what the pattern protects.
func (ps *Set) Anchors() []string {
	var out []string
	for _, in := range ps.include {
		if in.rel || len(in.segs) == 0 || in.segs[0] == "**" {
			continue
		}
		var fixed []string
		for _, s := range in.segs {
			if strings.ContainsAny(s, Meta) {
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

func splitPath(p string) []string {
	if p == "/" || p == "" {
		return nil
	}
	return strings.Split(strings.Trim(p, "/"), "/")
}

func within(p, root string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root+"/")
}
