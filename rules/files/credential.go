package files

import (
	"context"
	"path"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// credential denies reading or writing a file that holds secrets, and a
// search of a directory tree that holds a credential directory. It is the
// one rule every path-bearing argument meets, written or read.
type credential struct{ s *Set }

func (r *credential) Info() veto.RuleInfo { return Credential.RuleInfo() }

func (r *credential) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, list := range [][]pathArg{a.written, a.read} {
		for _, p := range list {
			if p.unknown {
				continue
			}
			if p.err != nil {
				return pathUnresolvable.Deny(p.what()), nil
			}
			if matchAny(&r.s.credentials, p.path, "") {
				return credentialPath.Deny(p.what()), nil
			}
		}
	}
	// A read of a path known only in part is judged by every credential
	// pattern it could match, its unknown parts taken as anything.
	for _, u := range a.unseen {
		if r.s.couldBeCredential(u) {
			return credentialPath.Deny("A path the command uses"), nil
		}
	}
	// A search tool's directory, or a command's recursive read (tar, cp -r,
	// grep -r, …), reads the tree below it.
	searches := a.desc.Has(veto.CapSearchesTree)
	for _, p := range a.read {
		if p.command && p.tree || !p.command && searches {
			for _, anchor := range r.s.credAnchors {
				if p.path.Any(func(form string) bool { return form != anchor && r.s.within(pathOf(anchor), []string{form}) }) {
					return credentialSearch.Deny(p.what()), nil
				}
			}
		}
	}
	return veto.Allow(), nil
}

// unseenRead is a read of a path veto knows only in part.
type unseenRead struct {
	pattern string // "*" for each unknown part
	dir     string // what a relative pattern is relative to; "" when unknown
}

// maxUnseen bounds the candidate paths one pattern is tried as.
const maxUnseen = 4096

// couldBeCredential reports whether the path u names could be a file that
// holds credentials: each unknown part is tried as every literal segment
// the credential patterns name, the home directory, the root and a name
// that matches any segment, and each candidate is judged as a path is.
func (s *Set) couldBeCredential(u unseenRead) bool {
	parts := strings.Split(u.pattern, "*")
	cands := []string{parts[0]}
	fill := s.fillersFor(parts[0], parts[len(parts)-1])
	for _, rest := range parts[1:] {
		next := make([]string, 0, min(len(cands)*len(fill), maxUnseen))
		for _, c := range cands {
			for _, f := range fill {
				if len(next) < maxUnseen {
					next = append(next, c+f+rest)
				}
			}
		}
		cands = next
	}
	env := s.env(u.dir)
	if u.dir == "" {
		env = s.env("/")
	}
	for _, c := range cands {
		if !strings.HasPrefix(c, "/") && !strings.HasPrefix(c, "~") && u.dir == "" {
			c = "/" + c
		}
		p, err := toolpath.Resolve(c, env)
		if err != nil {
			continue
		}
		if matchAny(&s.credentials, p, "") {
			return true
		}
	}
	return false
}

// fillers are what an unknown part of a path is tried as: the literal
// segments of the credential patterns (".aws", "credentials", "gh"…),
// joined runs of them ("gh/hosts.yml"), the home directory, the root and a
// plain name.
func fillers(patterns []string, home string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	add("x")
	add("")
	if home != "" {
		add(home)
	}
	add("/")
	for _, p := range patterns {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "~/")
		segs := strings.Split(strings.Trim(p, "/"), "/")
		var run []string
		for _, seg := range segs {
			if seg == "" || strings.ContainsAny(seg, "*?[") {
				run = nil
				continue
			}
			add(seg)
			run = append(run, seg)
			if len(run) > 1 {
				add(strings.Join(run, "/"))
			}
		}
	}
	return out
}

// fillersFor are the fillers of the credential patterns a path with this
// literal head (before its first unknown part) and tail (after its last)
// could match: a pattern whose last segment cannot be the tail's last
// segment (id_rsa for .../notes.txt), or whose fixed start differs from
// the head's (~/Library/… for ~/.config/…), gives none. Fewer fillers, fewer
// candidates: the list is long, and the candidates grow as its fillers'
// power.
func (s *Set) fillersFor(head, tail string) []string {
	last := ""
	if i := strings.LastIndex(tail, "/"); i >= 0 {
		last = tail[i+1:]
	}
	home := strings.TrimSuffix(s.home, "/")
	if s.fold {
		home = strings.ToLower(home)
	}
	norm := func(p string) string {
		if s.fold {
			p = strings.ToLower(p)
		}
		if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
			return home + p[1:]
		}
		return p
	}
	head, last = norm(head), strings.ToLower(last)
	if !s.fold {
		last = tail[len(tail)-len(last):]
	}
	var keep []string
	for _, p := range s.credList {
		if strings.HasPrefix(p, "!") {
			continue
		}
		q := norm(p)
		if last != "" {
			seg := q[strings.LastIndex(q, "/")+1:]
			if seg != "**" {
				if ok, err := path.Match(seg, last); err == nil && !ok {
					continue
				}
			}
		}
		if strings.HasPrefix(q, "/") && strings.HasPrefix(head, "/") {
			fixed := q
			if i := strings.IndexAny(q, "*?["); i >= 0 {
				fixed = q[:i]
			}
			if !strings.HasPrefix(fixed, head) && !strings.HasPrefix(head, fixed) {
				continue
			}
		}
		keep = append(keep, p)
	}
	return fillers(keep, s.home)
}
