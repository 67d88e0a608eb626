package files

import (
	"context"
	"errors"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// pathArg is one path a call names, resolved. param is the descriptor's
// parameter name; empty for a sniffed argument, whose key is argument text
// and never named in a message.
type pathArg struct {
	param   string
	path    toolpath.Path
	err     error
	command bool   // found by an extractor in a command, not named by a role
	unknown bool   // the command's path cannot be known statically
	removes bool   // a recursive removal, or a move away (the path leaves its place with everything below it)
	tree    bool   // a command reads it with everything below it
	tool    string // for a sniffed argument, the undescribed tool's name
}

// what returns how a message refers to the argument.
func (a pathArg) what() string {
	switch {
	case a.command:
		return "A path the command uses"
	case a.param == "" && a.tool != "":
		return "An argument of " + a.tool + " (a tool veto has no descriptor for; tools." + a.tool + ".params in veto.yaml describes it)"
	case a.param == "":
		return "An argument"
	}
	return "The " + a.param + " argument"
}

// analysis is a call's paths, resolved once per decision for every file
// rule.
type analysis struct {
	wsErr     error
	workspace string
	roots     []string
	written   []pathArg    // paths the call writes (or may: sniffed)
	read      []pathArg    // paths the call reads
	unseen    []unseenRead // reads a command makes of paths veto knows only in part
	desc      *veto.Descriptor
	failed    error // an extractor's error: the analysis is this alone
}

var errNoCwd = errors.New("the call has no working directory")

func (s *Set) analyze(ctx context.Context, in *veto.Input) (*analysis, error) {
	a := in.Memo(s, func() any {
		a := s.compute(in.Call, in.Descriptor)
		for _, x := range s.extractors {
			uses, err := x.Paths(ctx, in)
			if err != nil {
				return &analysis{failed: err}
			}
			s.addUses(a, in.Call, uses)
		}
		return a
	}).(*analysis)
	if a.failed != nil {
		return nil, a.failed
	}
	return a, nil
}

// maxGlob is how many files one pattern in a command may name before the
// directory they lie in is judged in their place.
const maxGlob = 1024

// addUses adds the paths an extractor found. A path relative to an
// unknown directory is unknown. A path with a pattern in it is the files
// the shell would expand it to, on a filesystem that can be listed (the
// live one; replay judges the pattern as written).
func (s *Set) addUses(a *analysis, c *veto.Call, uses []veto.PathUse) {
	before := len(a.written)
	// A path a command both writes and reads with everything below it
	// is a move's source (mv): it leaves its place whole, as a removal
	// does.
	var treeRead map[[2]string]bool // nil until a command reads a tree
	for _, u := range uses {
		if u.Tree && !u.Write && !u.Unknown {
			if treeRead == nil {
				treeRead = map[[2]string]bool{}
			}
			treeRead[[2]string{u.Dir, u.Path}] = true
		}
	}
	add := func(p pathArg, write bool) {
		if write {
			a.written = append(a.written, p)
		} else if !p.unknown {
			a.read = append(a.read, p)
		}
	}
	for _, u := range uses {
		p := pathArg{command: true, unknown: u.Unknown, removes: u.Removes, tree: u.Tree}
		if u.Write && !u.Unknown && treeRead[[2]string{u.Dir, u.Path}] {
			p.removes = true
		}
		if u.Dir == "" && !strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "~") && !strings.HasPrefix(u.Path, "file:") {
			p.unknown = true // relative to a directory veto lost track of
		}
		if p.unknown {
			if !u.Write && u.Pattern != "" {
				a.unseen = append(a.unseen, unseenRead{pattern: u.Pattern, dir: u.Dir})
			}
			add(p, u.Write)
			continue
		}
		env := s.env(u.Dir)
		raws := []string{u.Path}
		matches, expanded, err := toolpath.Glob(u.Path, env, maxGlob)
		switch {
		case errors.Is(err, toolpath.ErrTooMany):
			// More files than veto lists: the directory they all lie in,
			// with everything below it, stands for them.
			raws = []string{toolpath.GlobPrefix(u.Path)}
			p.tree = true
		case expanded:
			// The word as written too: a match can fail where bash passes the
			// word on (a later segment), and quoting, which veto cannot see
			// here, keeps it literal.
			raws = append(matches, u.Path)
		}
		for _, raw := range raws {
			q := p
			q.path, q.err = toolpath.Resolve(raw, env)
			if q.err != nil && !u.Write {
				continue // a read veto cannot place: nothing to check it against
			}
			add(q, u.Write)
		}
	}
	if before == 0 && len(a.written) > 0 {
		s.placeRoots(a, c)
	}
}

func (s *Set) compute(c *veto.Call, d *veto.Descriptor) *analysis {
	a := &analysis{desc: d}
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	env := s.env(cwd)
	add := func(list *[]pathArg, param, raw string) {
		p, err := toolpath.Resolve(raw, env)
		*list = append(*list, pathArg{param: param, path: p, err: err})
	}
	defer func() {
		// Only writes are judged against the roots; a read pays nothing
		// for finding the workspace.
		if len(a.written) > 0 {
			s.placeRoots(a, c)
		}
	}()
	if d == nil {
		for _, raw := range toolpath.Sniff(c.Args) {
			p, err := toolpath.Resolve(raw, env)
			a.written = append(a.written, pathArg{path: p, err: err, tool: c.Tool})
		}
		return a
	}
	// Through the roles, in any letter case (veto.Descriptor.ArgsWith): a
	// tool may read "File_Path" as its file_path. A path is named by its
	// declared parameter, never by the key the call spelled.
	for _, role := range []veto.Role{veto.RolePath, veto.RoleMoved, veto.RoleSourcePath, veto.RoleURL} {
		for _, arg := range d.ArgsWith(c.Args, role) {
			for _, raw := range arg.Strings() {
				switch role {
				case veto.RolePath:
					add(&a.written, arg.Param, raw)
				case veto.RoleMoved:
					// Moved away: it leaves its place with everything below it.
					add(&a.written, arg.Param, raw)
					a.written[len(a.written)-1].removes = true
					add(&a.read, arg.Param, raw)
				case veto.RoleSourcePath:
					add(&a.read, arg.Param, raw)
				case veto.RoleURL:
					if strings.HasPrefix(raw, "file:") {
						add(&a.read, arg.Param, raw)
					}
				}
			}
		}
	}
	return a
}

// Reads returns the paths the call reads, each in every form it has
// (toolpath.Path.Forms): those its descriptor's roles name as read, those
// an extractor found it reading (a shell command's redirections and the
// files of commands veto knows, curl's -d @file among them), and, for a
// tool without a descriptor or one that declares it reads, every path it
// names, which it may read as well as write. A path that cannot be
// resolved, or that a command names only at run time, is not among them.
// It shares the decision's analysis with the file rules.
func (s *Set) Reads(ctx context.Context, in *veto.Input) ([]string, error) {
	a, err := s.analyze(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(p pathArg) {
		if p.err == nil && !p.unknown {
			out = append(out, p.path.Forms()...)
		}
	}
	for _, p := range a.read {
		add(p)
	}
	// A tool without a descriptor may read what it names; so may a tool
	// that declares it reads, whichever role names the path.
	if a.desc == nil || a.desc.Has(veto.CapReads) || a.desc.Has(veto.CapSearchesTree) {
		for _, p := range a.written {
			if !p.command {
				add(p)
			}
		}
	}
	return out, nil
}

// placeRoots finds the workspace and the write roots of a call.
func (s *Set) placeRoots(a *analysis, c *veto.Call) {
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	if cwd == "" {
		a.wsErr = errNoCwd
	} else {
		a.workspace, a.wsErr = s.workspace(c.Workspace, s.env(cwd))
	}
	a.roots = nil
	if a.wsErr == nil {
		a.roots = append(a.roots, a.workspace)
	}
	a.roots = append(a.roots, s.tempRoots...)
	a.roots = append(a.roots, s.extraRoots...)
}

// within reports whether every real form of p is below one of roots.
func (s *Set) within(p toolpath.Path, roots []string) bool {
	for _, form := range []string{p.Real, p.Cleaned} {
		in := false
		for _, r := range roots {
			if toolpath.Within(form, r, s.fold) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// matchAny reports whether any form of p matches ps.
func matchAny(ps *patterns, p toolpath.Path, anchor string) bool {
	return p.Any(func(form string) bool {
		_, ok := ps.match(form, anchor)
		return ok
	})
}
