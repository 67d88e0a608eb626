package shell

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// walker carries what a command knows as it runs: its directory, its
// variables, its functions.
type walker struct {
	env    Env
	r      *Report
	cwd    string              // "" when unknown
	vars   map[string][]string // a variable's possible values; present and nil: unknown
	funcs  map[string]*syntax.Stmt
	active map[string]bool // functions being expanded, against recursion
	dirs   []string        // pushd's stack
	seg    int             // the segment paths are recorded under
	params *params         // the positional parameters; nil at the top level
	// remotes are the URLs git remote add or set-url gave remotes earlier
	// in the command ("" when unknown), for a later push.
	remotes map[string]string
	// aliases are the aliases defined so far (a value nil: unknown); refs
	// the name references (declare -n), each to its target ("": unknown).
	aliases map[string][]string
	refs    map[string]string
	// arrays are the arrays whose elements veto knows (a=(…), read -a,
	// mapfile); an array missing here is not known element by element.
	arrays map[string][]word

	// keepsContent: the write being recorded changes a file's mode or
	// times, not what it holds (chmod +x x.sh).
	keepsContent bool

	strict bool // recovered or remote input: a recursive forced removal is refused whatever its target
	remote bool // the command runs on another machine: its paths are not ours
	guest  bool // and that machine is a container or VM the command runs (docker exec, vagrant ssh): its root is not this one's
	code   bool // interpreter code read as shell: only destructive findings count

	links     map[string]link // links made earlier in the command, by where they are (linkKey); shared with forks
	unlinking bool            // the accesses are rm's: a link itself is removed, not its target
	piped     bool            // a stage of a pipeline whose output goes to the next stage

	tainted map[string]bool // variables the command assigned a secret's value (T=$GITHUB_TOKEN)

	prog    string // the program of the last simple command walked, for secretUse
	progSeg int    // its segment
	// inPrint: that code is a string literal a print or log call is given,
	// text rather than a command; privilege and injection are not judged
	// in it.
	inPrint bool
	// sharedVars: vars is shared with a fork, and copied before a change
	// (ownVars).
	sharedVars bool
}

// ownVars makes w's variables its own before a change, when a fork
// shares them.
func (w *walker) ownVars() {
	if w.sharedVars {
		w.vars = maps.Clone(w.vars)
		w.sharedVars = false
	}
}

// link is a link a command made: what it points at, and the directory a
// relative target is relative to ("" when unknown).
type link struct {
	target, dir string
}

// linkKey is where a path lies, for matching a write against the links
// made: joined to the directory it is relative to when that is known.
func linkKey(cwd, p string) string {
	if cwd != "" && p != "" && p[0] != '/' && p[0] != '~' {
		p = path.Join(cwd, p)
	}
	return path.Clean(p)
}

// throughLinks is where a write to p lands when p is, or lies below, a
// link made earlier in the command: the link's target with the rest of p.
func (w *walker) throughLinks(p string) []link {
	if len(w.links) == 0 {
		return nil
	}
	k := linkKey(w.cwd, p)
	var out []link
	// In the order of the links' places, not the map's: a path below two
	// links is reported alike by every analysis of the command.
	for _, at := range slices.Sorted(maps.Keys(w.links)) {
		l := w.links[at]
		switch {
		case k == at && w.unlinking && !strings.HasSuffix(p, "/"):
		case k == at:
			out = append(out, l)
		case strings.HasPrefix(k, at+"/"):
			out = append(out, link{target: path.Join(l.target, k[len(at)+1:]), dir: l.dir})
		}
	}
	return out
}

// madeLink records a link made at name pointing at target.
func (w *walker) madeLink(name, target string) {
	if name == "" || target == "" || len(w.links) > 64 {
		return
	}
	dir := w.cwd
	if target[0] != '/' && target[0] != '~' {
		// Relative to the link's own directory.
		d := path.Dir(name)
		switch {
		case d == ".":
		case d[0] == '/' || d[0] == '~' || dir == "":
			dir = d
		default:
			dir = path.Join(dir, d)
		}
	}
	for _, l := range w.throughLinks(target) {
		target, dir = l.target, l.dir // a link to a link
	}
	w.links[linkKey(w.cwd, name)] = link{target: target, dir: dir}
}

func newWalker(env Env, r *Report) *walker {
	return &walker{env: env, r: r, cwd: env.Cwd, vars: map[string][]string{}, funcs: map[string]*syntax.Stmt{}, active: map[string]bool{},
		links: map[string]link{}}
}

// fork returns a walker for a subshell: changes to its directory and
// variables do not come back.
func (w *walker) fork() *walker {
	w.sharedVars = true // each makes its own copy at its first change (ownVars)
	c := &w.r.walkers.take(1)[0]
	*c = *w
	c.tainted = maps.Clone(w.tainted)
	c.dirs = append([]string(nil), w.dirs...)
	c.aliases = maps.Clone(w.aliases)
	c.refs = maps.Clone(w.refs)
	c.arrays = maps.Clone(w.arrays)
	return c
}

func (w *walker) finding(reason Reason, seg int, msg string) {
	if w.code && (reason == ParseFailed || reason == CannotVouch) {
		return
	}
	w.r.find(RuleAnalyzer, reason, seg, msg)
}

// script parses and walks src, nested depth levels deep.
func (w *walker) script(src string, depth int) {
	if depth > w.env.MaxDepth {
		w.finding(DepthExceeded, w.r.Segments, "The command nests shells, evals or wrappers deeper than veto follows, so it cannot vouch for it.")
		return
	}
	files, recovered, err := parse(src)
	if err != nil {
		w.finding(ParseFailed, w.r.Segments, "The command does not parse as a shell command, so veto cannot vouch for it.")
		return
	}
	if recovered {
		w.r.Recovered = true
	}
	for _, f := range files {
		if !w.code {
			w.r.Params = paramsOf(f, w.r.Params)
		}
		v := w
		if len(files) > 1 {
			v = w.fork()
		}
		if recovered {
			v.strict = true
		}
		for _, st := range f.Stmts {
			v.stmt(st, depth, nil)
		}
	}
}

// paramsOf appends the name of every parameter f expands, wherever it
// stands (words, tests, arithmetic, here-documents), in the order
// syntax.Walk would meet them.
func paramsOf(f *syntax.File, out []string) []string {
	return paramsIn(f, out)
}

// paramsIn is paramsOf for any node: the common nodes by a type switch,
// faster than syntax.Walk's callback, the rare ones by syntax.Walk.
func paramsIn(n syntax.Node, out []string) []string {
	switch n := n.(type) {
	case *syntax.File:
		return paramsInStmts(n.Stmts, out)
	case *syntax.Stmt:
		if n.Cmd != nil {
			out = paramsIn(n.Cmd, out)
		}
		for _, rd := range n.Redirs {
			out = paramsIn(rd, out)
		}
		return out
	case *syntax.Redirect:
		out = paramsInWord(n.Word, out)
		if n.Hdoc != nil {
			out = paramsInWord(n.Hdoc, out)
		}
		return out
	case *syntax.CallExpr:
		for _, a := range n.Assigns {
			out = paramsIn(a, out)
		}
		for _, a := range n.Args {
			out = paramsInWord(a, out)
		}
		return out
	case *syntax.Assign:
		if n.Value != nil {
			out = paramsInWord(n.Value, out)
		}
		if n.Index != nil {
			out = paramsIn(n.Index, out)
		}
		if n.Array != nil {
			out = paramsIn(n.Array, out)
		}
		return out
	case *syntax.Word:
		return paramsInWord(n, out)
	case *syntax.BinaryCmd:
		return paramsIn(n.Y, paramsIn(n.X, out))
	case *syntax.Block:
		return paramsInStmts(n.Stmts, out)
	case *syntax.Subshell:
		return paramsInStmts(n.Stmts, out)
	case *syntax.IfClause:
		for ; n != nil; n = n.Else {
			out = paramsInStmts(n.Cond, out)
			out = paramsInStmts(n.Then, out)
		}
		return out
	case *syntax.WhileClause:
		return paramsInStmts(n.Do, paramsInStmts(n.Cond, out))
	case *syntax.ForClause:
		if it, ok := n.Loop.(*syntax.WordIter); ok {
			for _, x := range it.Items {
				out = paramsInWord(x, out)
			}
		} else {
			out = paramsIn(n.Loop, out)
		}
		return paramsInStmts(n.Do, out)
	case *syntax.FuncDecl:
		return paramsIn(n.Body, out)
	case *syntax.CaseClause:
		out = paramsInWord(n.Word, out)
		for _, it := range n.Items {
			for _, p := range it.Patterns {
				out = paramsInWord(p, out)
			}
			out = paramsInStmts(it.Stmts, out)
		}
		return out
	case *syntax.DeclClause:
		for _, a := range n.Args {
			out = paramsIn(a, out)
		}
		return out
	case *syntax.TestClause:
		return paramsIn(n.X, out)
	case *syntax.BinaryTest:
		return paramsIn(n.Y, paramsIn(n.X, out))
	case *syntax.UnaryTest:
		return paramsIn(n.X, out)
	case *syntax.ParenTest:
		return paramsIn(n.X, out)
	case *syntax.ArithmCmd:
		return paramsIn(n.X, out)
	case *syntax.BinaryArithm:
		return paramsIn(n.Y, paramsIn(n.X, out))
	case *syntax.UnaryArithm:
		return paramsIn(n.X, out)
	case *syntax.ParenArithm:
		return paramsIn(n.X, out)
	case *syntax.ArrayExpr:
		for _, e := range n.Elems {
			if e.Index != nil {
				out = paramsIn(e.Index, out)
			}
			if e.Value != nil {
				out = paramsInWord(e.Value, out)
			}
		}
		return out
	case *syntax.TimeClause:
		if n.Stmt != nil {
			out = paramsIn(n.Stmt, out)
		}
		return out
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			out = paramsIn(x, out)
		}
		return out
	}
	return paramsWalk(n, out)
}

// paramsWalk is paramsIn by syntax.Walk, apart so that out stays on
// paramsIn's stack.
func paramsWalk(n syntax.Node, out []string) []string {
	syntax.Walk(n, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil {
			out = append(out, p.Param.Value)
		}
		return true
	})
	return out
}

func paramsInStmts(list []*syntax.Stmt, out []string) []string {
	for _, st := range list {
		out = paramsIn(st, out)
	}
	return out
}

func paramsInWord(x *syntax.Word, out []string) []string {
	for _, p := range x.Parts {
		out = paramsInPart(p, out)
	}
	return out
}

func paramsInPart(p syntax.WordPart, out []string) []string {
	switch p := p.(type) {
	case *syntax.Lit, *syntax.SglQuoted:
		return out
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			out = paramsInPart(q, out)
		}
		return out
	case *syntax.CmdSubst:
		return paramsInStmts(p.Stmts, out)
	case *syntax.ProcSubst:
		return paramsInStmts(p.Stmts, out)
	case *syntax.ArithmExp:
		return paramsIn(p.X, out)
	case *syntax.ParamExp:
		if p.Param != nil {
			out = append(out, p.Param.Value)
		}
		if p.NestedParam != nil {
			out = paramsIn(p.NestedParam, out)
		}
		if p.Index != nil {
			out = paramsIn(p.Index, out)
		}
		if p.Slice != nil {
			if p.Slice.Offset != nil {
				out = paramsIn(p.Slice.Offset, out)
			}
			if p.Slice.Length != nil {
				out = paramsIn(p.Slice.Length, out)
			}
		}
		if p.Repl != nil {
			if p.Repl.Orig != nil {
				out = paramsInWord(p.Repl.Orig, out)
			}
			if p.Repl.With != nil {
				out = paramsInWord(p.Repl.With, out)
			}
		}
		if p.Exp != nil && p.Exp.Word != nil {
			out = paramsInWord(p.Exp.Word, out)
		}
		return out
	}
	return paramsIn(p, out)
}

// stage is what a pipeline stage feeds the next one.
type stage struct {
	fetch  bool     // it downloads (curl, wget, …)
	decode bool     // it decodes (base64 -d, xxd -r, …)
	text   []string // the literal text it prints (echo, printf), when known
	file   bool     // it prints a file it was given, which is judged as read (cat f, < f)
	rel    bool     // it prints an archive whose members are relative names (rpm2cpio)
	secret bool     // it prints a secret-named variable's value (echo "$TOKEN")
}

// merge is what two streams read in turn give: a download or decoding in
// either, and text only when one of them is empty.
func merge(a, b *stage) *stage {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &stage{fetch: a.fetch || b.fetch, decode: a.decode || b.decode}
}

func (w *walker) stmts(list []*syntax.Stmt, depth int) {
	for _, st := range list {
		w.stmt(st, depth, nil)
	}
}

// stmt walks one statement. up is the pipeline stages before it.
func (w *walker) stmt(st *syntax.Stmt, depth int, up []stage) stage {
	if st == nil {
		return stage{}
	}
	n := len(w.r.secrets)
	var in *stage
	configs := 0 // writes of a package manager's config file, whose text is judged
	var outs []output
	for _, rd := range st.Redirs {
		if f := w.redirect(rd, depth, &outs); f != nil {
			in = f
		}
		switch rd.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			if rd.Word != nil && registryConfig(w.pattern(rd.Word)) {
				configs++
			}
		}
	}
	if outs != nil {
		// What the statement prints is what the files it writes hold,
		// for a later command that runs one of them.
		out := w.stmtCmd(st, in, depth, up, n, configs)
		for _, o := range outs {
			if out.file {
				w.forget(o.file) // a copy of a file, judged as that file when run
				continue
			}
			text := out.text
			if o.other {
				text = nil
			}
			w.wrote(o.file, text, o.append, out.fetch)
		}
		return out
	}
	return w.stmtCmd(st, in, depth, up, n, configs)
}

// output is a file a redirection writes.
type output struct {
	file   word
	append bool
	other  bool // a stream other than the output (2> f)
}

// stmtCmd walks a statement's command, in its redirection's input; n is
// how many secret uses the report held before the statement, configs how
// many of its redirections write a package manager's config file.
func (w *walker) stmtCmd(st *syntax.Stmt, in *stage, depth int, up []stage, n, configs int) stage {
	switch c := st.Cmd.(type) {
	case nil:
		return stage{}
	case *syntax.CallExpr:
		if in != nil {
			// The command's own redirection is its input, in place of the
			// pipe's.
			up = append(up[:len(up):len(up)], *in)
		}
		w.prog = ""
		seg := w.r.Segments
		out := w.call(c, depth, up)
		out = w.secretUse(out, n, up, w.prog, w.progSeg)
		if !w.piped {
			w.printsSecret(out, w.progSeg)
		}
		if configs > 0 {
			w.configRegistry("redirection", seg, out, w.echoPattern(c))
		}
		return out
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			var stages []stage
			for _, s := range flattenPipe(c) {
				f := w.fork()
				f.piped = true
				stages = append(stages, f.stmt(s, depth, stages))
			}
			last := stages[len(stages)-1]
			if !w.piped {
				w.printsSecret(last, w.r.Segments-1)
			}
			return last
		}
		if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
			w.stmt(c.X, depth, nil)
			return w.stmt(c.Y, depth, nil)
		}
		return w.andOr(c, depth)
	case *syntax.Subshell:
		return w.fork().printing(c.Stmts, depth)
	case *syntax.Block:
		return w.printing(c.Stmts, depth)
	case *syntax.IfClause:
		// Each branch may be the one taken: what they assign is merged.
		if !w.changesState(c) {
			for ic := c; ic != nil; ic = ic.Else {
				w.stmts(ic.Cond, depth)
				w.stmts(ic.Then, depth)
			}
			break
		}
		var branches []*walker
		last := c
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond, depth)
			b := w.fork()
			b.stmts(ic.Then, depth)
			branches = append(branches, b)
			last = ic
		}
		if len(last.Cond) > 0 {
			branches = append(branches, w.fork()) // no else: none may be taken
		}
		w.join(branches)
	case *syntax.WhileClause:
		w.stmts(c.Cond, depth)
		w.stmts(c.Do, depth)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			var vals []string
			unknown := len(l.Items) == 0
			for _, it := range l.Items {
				ws, ok := w.spliceParams(nil, it)
				if !ok {
					ws, ok = w.spliceArray(nil, it)
				}
				if !ok {
					ws = []word{w.word(it, depth)} // "$@" and "${a[@]}" are each of their words
				}
				for _, x := range ws {
					vals = append(vals, x.vals...)
					unknown = unknown || x.unknown
				}
			}
			if unknown {
				vals = nil
			}
			w.ownVars()
			w.vars[l.Name.Value] = vals
		case *syntax.CStyleLoop:
			w.substsIn(l, depth)
		}
		w.stmts(c.Do, depth)
	case *syntax.CaseClause:
		w.word(c.Word, depth)
		if !w.changesState(c) {
			for _, it := range c.Items {
				for _, p := range it.Patterns {
					w.word(p, depth)
				}
				w.stmts(it.Stmts, depth)
			}
			break
		}
		branches := []*walker{w.fork()} // no pattern may match
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.word(p, depth)
			}
			b := w.fork()
			b.stmts(it.Stmts, depth)
			branches = append(branches, b)
		}
		w.join(branches)
	case *syntax.FuncDecl:
		if c.Name != nil {
			w.funcs[c.Name.Value] = c.Body
		}
	case *syntax.DeclClause:
		w.decl(c, depth)
	case *syntax.LetClause, *syntax.ArithmCmd, *syntax.TestClause:
		w.substsIn(c, depth)
	case *syntax.TimeClause:
		return w.stmt(c.Stmt, depth, up)
	case *syntax.CoprocClause:
		w.fork().stmt(c.Stmt, depth, nil)
	case *syntax.TestDecl:
	default:
		w.finding(CannotVouch, w.r.Segments, "The command uses a construct veto does not analyse, so it cannot vouch for it.")
	}
	return stage{}
}

// printing walks a group's commands and returns what they print in turn
// ({ echo a; echo b; } > f): text when each prints known text, with a
// download or decoding in any of them.
func (w *walker) printing(list []*syntax.Stmt, depth int) stage {
	out := stage{text: []string{""}}
	for _, st := range list {
		s := w.stmt(st, depth, nil)
		out.fetch = out.fetch || s.fetch
		out.decode = out.decode || s.decode
		switch {
		case out.text == nil:
		case s.text == nil:
			out.text = nil
		default:
			if out.text = product(out.text, s.text); len(out.text) > maxValues {
				out.text = nil
			}
		}
	}
	return out
}

// changesState reports whether a node may change what later commands
// see: it assigns, loops over words, defines a function or an alias,
// changes directory, or calls a function or alias (which may do any of
// these). Branches that cannot are walked in place, without a fork.
func (w *walker) changesState(n syntax.Node) bool {
	if st, ok := n.(*syntax.Stmt); ok {
		// The common case, one simple command, without a walk.
		switch c := st.Cmd.(type) {
		case *syntax.CallExpr:
			if len(c.Assigns) == 0 && len(c.Args) > 0 {
				return w.changer(c.Args[0].Lit())
			}
		case *syntax.BinaryCmd:
			if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
				return false // each stage of a pipeline runs in a subshell
			}
		}
	}
	changes := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign, *syntax.FuncDecl, *syntax.WordIter:
			changes = true
		case *syntax.CallExpr:
			if len(n.Args) > 0 && w.changer(n.Args[0].Lit()) {
				changes = true
			}
		}
		return !changes
	})
	return changes
}

// changer reports whether a command named name may change the shell's
// state.
func (w *walker) changer(name string) bool {
	switch name {
	case "cd", "pushd", "popd", "read", "source", ".", "eval", "mapfile", "readarray", "getopts", "printf", "shift", "set", "unset",
		"alias", "unalias", "declare", "typeset", "local", "export", "readonly":
		return true
	}
	if body, ok := w.funcs[name]; ok {
		// A function changes state when its body may.
		if w.r.funcChanges == nil {
			w.r.funcChanges = map[*syntax.Stmt]bool{}
		}
		if c, done := w.r.funcChanges[body]; done {
			return c
		}
		w.r.funcChanges[body] = true // while it is read: a recursive call may
		c := w.changesState(body)
		w.r.funcChanges[body] = c
		return c
	}
	_, ok := w.aliases[name]
	return ok
}

// join takes the state of branches one of which ran (if, case): a variable
// may hold any value a branch left it, the directory is known when every
// branch agrees, and the functions any branch defined are defined.
func (w *walker) join(branches []*walker) {
	names := map[string]bool{}
	for _, b := range branches {
		for k := range b.vars {
			names[k] = true
		}
	}
	for k := range names {
		var vals []string
		unknown := false
		for _, b := range branches {
			v, set := b.vars[k]
			switch {
			case !set:
				if env, ok := w.env.Vars[k]; ok {
					v = []string{env}
				} else {
					v = []string{""}
				}
			case v == nil:
				unknown = true
			}
			for _, x := range v {
				if !slices.Contains(vals, x) {
					vals = append(vals, x)
				}
			}
		}
		if unknown || len(vals) > maxValues {
			vals = nil
		}
		w.ownVars()
		w.vars[k] = vals
	}
	w.cwd = branches[0].cwd
	for _, b := range branches[1:] {
		if b.cwd != w.cwd {
			w.cwd = ""
		}
	}
	w.joinArrays(branches)
	for _, b := range branches {
		maps.Copy(w.funcs, b.funcs)
		for k, v := range b.refs {
			if t, ok := w.refs[k]; ok && t != v {
				v = "" // references to different targets: unknown
			}
			if w.refs == nil {
				w.refs = map[string]string{}
			}
			w.refs[k] = v
		}
		for k, v := range b.aliases {
			if w.aliases == nil {
				w.aliases = map[string][]string{}
			}
			old, ok := w.aliases[k]
			switch {
			case !ok:
				w.aliases[k] = v
			case old == nil || v == nil:
				w.aliases[k] = nil
			default:
				w.aliases[k] = appendNew(slices.Clone(old), v...)
			}
		}
	}
	w.dirs = branches[len(branches)-1].dirs
}

func flattenPipe(c *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	if x, ok := c.X.Cmd.(*syntax.BinaryCmd); ok && (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) && len(c.X.Redirs) == 0 {
		out = flattenPipe(x)
	} else {
		out = append(out, c.X)
	}
	return append(out, c.Y)
}

// substsIn walks the command substitutions inside any node.
func (w *walker) substsIn(n syntax.Node, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch s := n.(type) {
		case *syntax.CmdSubst:
			w.fork().stmts(s.Stmts, depth)
			return false
		case *syntax.ProcSubst:
			w.fork().stmts(s.Stmts, depth)
			return false
		}
		return true
	})
}

// decl handles export, declare, local, readonly, typeset.
func (w *walker) decl(c *syntax.DeclClause, depth int) {
	variant := c.Variant.Value
	names, opts := 0, ""
	for _, a := range c.Args {
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			x := w.word(a.Value, depth)
			if strings.HasPrefix(x.lit, "-") {
				opts += x.lit[1:]
			} else {
				names++
			}
		case a.Name != nil:
			names++
			if a.Naked && a.Value == nil && a.Array == nil && strings.Contains(opts, "p") && !w.code {
				// declare -p NAME prints the variable's value.
				if _, assigned := w.vars[a.Name.Value]; !assigned && secretName(a.Name.Value) {
					w.r.find(RuleEnvDump, SecretPrint, w.r.Segments, "The command prints the value of a variable named like a secret.")
				}
			}
			w.r.Assigned = append(w.r.Assigned, a.Name.Value)
			if strings.Contains(opts, "n") {
				// declare -n NAME=TARGET: NAME stands for TARGET.
				if a.Value == nil {
					if w.refs == nil {
						w.refs = map[string]string{}
					}
					w.refs[a.Name.Value] = pendingRef
					continue
				}
				w.nameRef(a.Name.Value, w.word(a.Value, depth))
				continue
			}
			if a.Value != nil {
				n := len(w.r.secrets)
				x := w.word(a.Value, depth)
				w.taint(a.Name.Value, n)
				w.envHosts(a.Name.Value, x)
				w.startupEnv(a.Name.Value, x, depth)
				w.assign(a.Name.Value, x)
			} else if a.Array != nil {
				elems, known := w.arrayElems(a.Array, depth)
				w.setArray(a.Name.Value, elems, known, a.Append)
			}
		}
	}
	seg := w.r.Segments
	switch {
	case variant == "export" && names == 0,
		(variant == "declare" || variant == "typeset") && names == 0 && (strings.ContainsAny(opts, "xp") || opts == ""):
		w.r.find(RuleEnvDump, EnvDump, seg, "The command prints the environment, which holds secrets.")
	}
}

func (w *walker) assign(name string, x word) {
	if t, ok := w.refs[name]; ok && t == pendingRef {
		w.refs[name] = refTarget(x) // the first assignment names the target
		return
	}
	if w.refs != nil {
		n, ok := w.resolve(name)
		if !ok {
			w.finding(CannotVouch, w.r.Segments, "The command assigns through a name reference veto cannot resolve, so it cannot vouch for it.")
			return
		}
		if n != name {
			w.r.Assigned = append(w.r.Assigned, n) // the variable the reference names is what is assigned
		}
		name = n
	}
	delete(w.arrays, name) // a=x sets the first element only: the others are not known
	if x.unknown {
		w.ownVars()
		w.vars[name] = nil
		return
	}
	w.ownVars()
	w.vars[name] = x.vals
}

// redirect records the file a redirection reads or writes, and returns
// what it gives the command on its input, if it gives any: a here-document's
// or here-string's text, a file's, or a process substitution's output.
func (w *walker) redirect(rd *syntax.Redirect, depth int, outs *[]output) *stage {
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		return w.hereDoc(rd, depth)
	}
	if rd.Word == nil {
		return nil
	}
	x := w.word(rd.Word, depth)
	switch rd.Op {
	case syntax.WordHdoc:
		if x.unknown {
			return &stage{}
		}
		text := make([]string, len(x.vals))
		for i, v := range x.vals {
			text[i] = v + "\n" // a here-string ends in a newline
		}
		return &stage{text: text}
	case syntax.DplIn, syntax.DplOut:
		if x.lit == "-" || isDigits(x.lit) {
			if rd.Op == syntax.DplIn {
				return &stage{}
			}
			return nil
		}
		if rd.Op == syntax.DplIn {
			return &stage{}
		}
	}
	write := rd.Op != syntax.RdrIn
	w.seg = w.r.Segments             // a redirection belongs to the command it precedes
	w.keepsContent = isOutput(rd.Op) // it records what it writes itself, after the command
	w.access(x, write, false)
	w.keepsContent = false
	if write {
		if isOutput(rd.Op) {
			o := output{file: x, append: rd.Op == syntax.AppOut || rd.Op == syntax.AppAll}
			// 2> f holds what the command prints on another stream than
			// its output: veto does not know it.
			o.other = rd.N != nil && rd.N.Value != "1"
			*outs = append(*outs, o)
		}
		return nil
	}
	switch {
	case x.feed != nil:
		return x.feed
	case x.unknown:
		return &stage{}
	case len(x.vals) == 1 && harmless[x.lit]:
		return &stage{text: []string{""}}
	}
	if wr := w.writtenAt(x); wr != nil {
		return wr.stage() // bash < x.sh: what the command wrote there
	}
	return &stage{file: true}
}

// hereDoc is the text of a here-document: as written when its delimiter is
// quoted, expanded (and its substitutions walked) when not.
func (w *walker) hereDoc(rd *syntax.Redirect, depth int) *stage {
	if rd.Hdoc == nil {
		return &stage{text: []string{""}}
	}
	quoted := rd.Word != nil && (rd.Word.Lit() == "" || strings.Contains(rd.Word.Lit(), `\`))
	// The text is built in one piece while every part has one value; the
	// parts' substitutions are walked whatever it turns out to be.
	var b strings.Builder
	var vals []string // nil while single-valued: the text is b
	unknown := false
	for _, p := range rd.Hdoc.Parts {
		var v []string
		if l, ok := p.(*syntax.Lit); ok && quoted {
			v = []string{l.Value}
		} else {
			var u bool
			if v, u, _ = w.part(p, depth, true); u {
				unknown = true
			}
		}
		switch {
		case unknown:
		case vals == nil && len(v) == 1:
			b.WriteString(v[0])
		default:
			if vals == nil {
				vals = []string{b.String()}
			}
			if vals = product(vals, v); len(vals) > maxValues {
				unknown = true
			}
		}
	}
	switch {
	case unknown:
		return &stage{}
	case vals == nil:
		return &stage{text: []string{b.String()}}
	}
	return &stage{text: vals}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// harmless are paths reading or writing which touches no file.
var harmless = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/stdin": true, "/dev/tty": true,
	"/dev/zero": true, "/dev/random": true, "/dev/urandom": true, "-": true,
}

// access records a path argument.
func (w *walker) access(x word, write, removes bool) {
	if w.remote {
		return
	}
	seg := w.seg
	if x.unknown {
		pat := w.pattern(x.src)
		if !write && strings.HasPrefix(pat, "/proc/") && strings.HasSuffix(pat, "/environ") {
			w.r.find(RuleEnvDump, EnvDump, seg, "The command reads a process's environment, which holds secrets.")
		}
		w.r.Files = append(w.r.Files, Access{Dir: w.cwd, Write: write, Unknown: true, Removes: removes, Segment: seg,
			Pattern: strings.ReplaceAll(pat, unknownMark, "*")})
		if !write {
			// The file rules drop an unknown read; what it could be is judged
			// in its place.
			for _, p := range candidates(pat) {
				w.r.Files = append(w.r.Files, Access{Path: p, Dir: w.cwd, Segment: seg})
			}
		}
		return
	}
	for _, v := range x.vals {
		if v == "" || harmless[v] || strings.HasPrefix(v, "/dev/fd/") || strings.HasPrefix(v, "/proc/self/fd/") {
			continue
		}
		if !write && strings.HasPrefix(v, "/proc/") && strings.HasSuffix(v, "/environ") {
			w.r.find(RuleEnvDump, EnvDump, seg, "The command reads a process's environment, which holds secrets.")
		}
		w.r.Files = append(w.r.Files, Access{Path: v, Dir: w.cwd, Write: write, Removes: removes, Segment: seg})
		if write {
			// Written through a link made earlier: the link's target is.
			for _, l := range w.throughLinks(v) {
				w.r.Files = append(w.r.Files, Access{Path: l.target, Dir: l.dir, Write: true, Removes: removes, Segment: seg})
			}
		}
		if write && !w.keepsContent && !w.remote {
			// A program writes the file: veto does not know what it holds
			// now (sed -i, dd of=, an editor), should the command run it
			// later. The writers it follows (redirections, tee, cp, ln,
			// downloads) record the content after this.
			if w.r.written == nil {
				w.r.written = map[string]*written{}
			}
			if f, ok := w.r.written[w.fileKey(v)]; ok {
				f.vals = nil
			} else {
				w.r.written[w.fileKey(v)] = &written{}
			}
		}
	}
}

// pattern is a word as far as it is known without running anything, each
// part veto cannot know as "*" (which may stand for several path
// segments): "/proc/*/environ" for /proc/$$/environ. "" when nothing is
// known.
func (w *walker) pattern(x *syntax.Word) string {
	if x == nil {
		return ""
	}
	var b strings.Builder
	w.patternParts(&b, x.Parts, false)
	p := b.String()
	if strings.Trim(p, unknownMark) == "" {
		return ""
	}
	return p
}

// unknownMark stands for a part of a word veto cannot know, in pattern's
// result; Access.Pattern spells it "*".
const unknownMark = "\x00"

// candidates are known paths an unknown read could be, for the file
// rules to judge: the directory its known beginning names (~/.aws/$F
// reads in ~/.aws), and its known end below the home directory
// ($X/.aws/credentials and /home/$U/.aws/credentials could be
// ~/.aws/credentials).
func candidates(pat string) []string {
	var out []string
	first, last := strings.Index(pat, unknownMark), strings.LastIndex(pat, unknownMark)
	if first < 0 {
		return nil
	}
	if i := strings.LastIndexByte(pat[:first], '/'); i >= 0 {
		dir := pat[:i]
		if dir == "" {
			dir = "/"
		}
		if dir != "/" && dir != "~" && dir != "." {
			out = append(out, dir)
		}
	}
	if tail := pat[last+len(unknownMark):]; strings.HasPrefix(tail, "/") && len(tail) > 1 {
		out = append(out, "~"+tail)
	}
	return out
}

func (w *walker) patternParts(b *strings.Builder, parts []syntax.WordPart, quoted bool) {
	star := func() {
		if !strings.HasSuffix(b.String(), unknownMark) {
			b.WriteString(unknownMark)
		}
	}
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if quoted {
				b.WriteString(unescapeQuoted(p.Value))
			} else {
				b.WriteString(unescape(p.Value))
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(decodeANSIC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			w.patternParts(b, p.Parts, true)
		case *syntax.ParamExp:
			if p.Param != nil && p.Exp == nil && !p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.NestedParam == nil {
				if v, ok := w.lookup(p.Param.Value); ok && len(v) == 1 {
					b.WriteString(v[0])
					continue
				}
			}
			star()
		default:
			star()
		}
	}
}

// readTree is access for a read of x and everything below it: a
// recursive copy, archive or search.
func (w *walker) readTree(x word) {
	n := len(w.r.Files)
	w.access(x, false, false)
	for i := n; i < len(w.r.Files); i++ {
		w.r.Files[i].Tree = true
	}
}

// readTreeUnder is readTree of each relative value of x below each of
// bases: an operand relative to a directory other than the working one
// (tar -C, a link's directory).
func (w *walker) readTreeUnder(x word, bases []string) {
	if x.unknown {
		return
	}
	for _, v := range x.vals {
		if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") {
			continue
		}
		for _, b := range bases {
			w.readTree(lit(b + "/" + v))
		}
	}
}

// chdir follows cd: a directory it cannot resolve makes the cwd unknown.
func (w *walker) chdir(x word) {
	if x.unknown || len(x.vals) != 1 || x.lit == "-" {
		w.cwd = ""
		return
	}
	d := x.lit
	switch {
	case d == "~" || strings.HasPrefix(d, "~/"):
		home := w.env.Vars["HOME"]
		if home == "" {
			w.cwd = ""
			return
		}
		d = home + d[1:]
	case strings.HasPrefix(d, "~"):
		w.cwd = ""
		return
	case !strings.HasPrefix(d, "/"):
		if w.cwd == "" {
			return
		}
		d = w.cwd + "/" + d
	}
	w.cwd = path.Clean(d)
}

// word is a shell word, evaluated as far as the analyzer can.
type word struct {
	vals    []string // the values it may have
	unknown bool     // a part could not be known statically
	lit     string   // the first value
	feed    *stage   // what a process substitution in it prints; nil when it has none
	src     *syntax.Word
}

const maxValues = 16

func (w *walker) word(x *syntax.Word, depth int) word {
	out := word{src: x}
	if x == nil {
		out.vals = []string{""}
		return out
	}
	syntax.SplitBraces(x) // {a,b} and {1..3} in unquoted parts become BraceExp, which part expands
	out.vals, out.unknown, out.feed = w.concat(x.Parts, depth, false)
	if out.unknown {
		out.vals = nil
	} else {
		out.lit = out.vals[0]
	}
	return out
}

// concat evaluates parts in turn and joins their values: every value of
// one part followed by every value of the next. More than maxValues is
// unknown; when unknown, the values are of no use. The parts' values are
// kept as one string while each part has one value, so a plain word costs
// one slice.
func (w *walker) concat(parts []syntax.WordPart, depth int, quoted bool) (vals []string, unknown bool, feed *stage) {
	one := "" // the value while vals is nil
	for _, p := range parts {
		var s string
		switch p := p.(type) {
		case *syntax.Lit:
			if unknown {
				continue
			}
			if quoted {
				s = unescapeQuoted(p.Value)
			} else {
				s = unescape(p.Value)
			}
		case *syntax.SglQuoted:
			if unknown {
				continue
			}
			if p.Dollar {
				s = decodeANSIC(p.Value)
			} else {
				s = p.Value
			}
		default:
			v, u, f := w.part(p, depth, quoted)
			feed = merge(feed, f)
			if u {
				unknown = true
			}
			if unknown {
				continue
			}
			if vals == nil && len(v) == 1 {
				one += v[0]
				continue
			}
			if vals == nil {
				vals = []string{one}
			}
			if vals = product(vals, v); len(vals) > maxValues {
				unknown = true
			}
			continue
		}
		if vals == nil {
			one += s
			continue
		}
		for i := range vals {
			vals[i] += s // vals is product's, this call's own
		}
	}
	if vals == nil {
		vals = w.r.strs(1)
		vals[0] = one
	}
	return vals, unknown, feed
}

// braces expands a brace expansion as bash does: each element of
// {a,b,c}, or each step of {1..5}, {a..e}, {01..10..2}. More than
// maxValues is unknown.
func (w *walker) braces(b *syntax.BraceExp, depth int) (vals []string, unknown bool, feed *stage) {
	if !b.Sequence {
		for _, e := range b.Elems {
			x := w.word(e, depth)
			feed = merge(feed, x.feed)
			if x.unknown {
				return nil, true, feed
			}
			vals = append(vals, x.vals...)
			if len(vals) > maxValues {
				return nil, true, feed
			}
		}
		return vals, false, feed
	}
	var ends []string
	for _, e := range b.Elems {
		x := w.word(e, depth)
		if x.unknown || len(x.vals) != 1 {
			return nil, true, nil
		}
		ends = append(ends, x.lit)
	}
	if len(ends) < 2 {
		return nil, true, nil
	}
	step := 1
	if len(ends) == 3 {
		n, err := strconv.Atoi(ends[2])
		if err != nil || n == 0 {
			return nil, true, nil
		}
		step = max(n, -n)
	}
	from, errA := strconv.Atoi(ends[0])
	to, errB := strconv.Atoi(ends[1])
	letters := false
	if errA != nil || errB != nil {
		if len(ends[0]) != 1 || len(ends[1]) != 1 {
			return nil, true, nil
		}
		from, to, letters = int(ends[0][0]), int(ends[1][0]), true
	}
	width := 0
	if !letters && (len(ends[0]) > 1 && ends[0][0] == '0' || len(ends[1]) > 1 && ends[1][0] == '0') {
		width = max(len(ends[0]), len(ends[1])) // {01..10}: zero-padded
	}
	if from > to {
		step = -step
	}
	for i := from; step > 0 && i <= to || step < 0 && i >= to; i += step {
		if len(vals) >= maxValues {
			return nil, true, nil
		}
		if letters {
			vals = append(vals, string(rune(i)))
		} else {
			vals = append(vals, fmt.Sprintf("%0*d", width, i))
		}
	}
	return vals, false, nil
}

func product(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

func (w *walker) part(p syntax.WordPart, depth int, quoted bool) (vals []string, unknown bool, feed *stage) {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			return []string{unescapeQuoted(p.Value)}, false, nil
		}
		return []string{unescape(p.Value)}, false, nil
	case *syntax.SglQuoted:
		if p.Dollar {
			return []string{decodeANSIC(p.Value)}, false, nil
		}
		return []string{p.Value}, false, nil
	case *syntax.BraceExp:
		return w.braces(p, depth)
	case *syntax.DblQuoted:
		return w.concat(p.Parts, depth, true)
	case *syntax.ParamExp:
		vals, unknown = w.param(p, depth)
		return vals, unknown, nil
	case *syntax.CmdSubst:
		w.fork().stmts(p.Stmts, depth)
		return nil, true, nil
	case *syntax.ProcSubst:
		return []string{"/dev/fd/63"}, false, w.procSubst(p, depth)
	case *syntax.ArithmExp:
		w.substsIn(p, depth)
		return nil, true, nil
	case *syntax.ExtGlob:
		return []string{p.Op.String() + p.Pattern.Value + ")"}, false, nil
	}
	w.substsIn(p, depth)
	return nil, true, nil
}

// procSubst walks a process substitution and returns what it prints: the
// last command's output, with a download or decoding anywhere in it.
func (w *walker) procSubst(p *syntax.ProcSubst, depth int) *stage {
	sub := w.fork()
	out := &stage{}
	for i, st := range p.Stmts {
		s := sub.stmt(st, depth, nil)
		out.fetch = out.fetch || s.fetch
		out.decode = out.decode || s.decode
		if i == len(p.Stmts)-1 {
			out.text, out.file = s.text, s.file
		}
	}
	if len(p.Stmts) != 1 {
		out.text = nil
	}
	return out
}

// param evaluates a parameter expansion.
func (w *walker) param(p *syntax.ParamExp, depth int) ([]string, bool) {
	w.noteSecret(p)
	if p.Exp != nil && p.Exp.Word != nil {
		defer w.word(p.Exp.Word, depth) // its substitutions run either way
	}
	if p.Repl != nil {
		w.word(p.Repl.Orig, depth)
		w.word(p.Repl.With, depth)
	}
	if p.Index != nil && p.Param != nil && !p.Excl && p.Slice == nil && p.Repl == nil && p.Names == 0 && p.NestedParam == nil && p.Exp == nil {
		return w.element(p)
	}
	if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.NestedParam != nil {
		return nil, true
	}
	own, known := w.lookup(p.Param.Value)
	if p.Exp == nil {
		return own, !known
	}
	alt := w.word(p.Exp.Word, depth)
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if !known || alt.unknown {
			return nil, true
		}
		return append(append([]string(nil), own...), alt.vals...), false
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if alt.unknown {
			return nil, true
		}
		return append([]string{""}, alt.vals...), false
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return own, !known
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if !known || alt.unknown {
			return nil, true
		}
		var out []string
		for _, v := range own {
			for _, pat := range alt.vals {
				out = append(out, trimPattern(v, pat, p.Exp.Op))
			}
		}
		return out, len(out) > maxValues
	case syntax.UpperAll, syntax.LowerAll:
		if !known {
			return nil, true
		}
		var out []string
		for _, v := range own {
			if p.Exp.Op == syntax.UpperAll {
				out = append(out, strings.ToUpper(v))
			} else {
				out = append(out, strings.ToLower(v))
			}
		}
		return out, false
	}
	return nil, true
}

func (w *walker) lookup(name string) ([]string, bool) {
	if w.params != nil && name != "" && (name[0] >= '0' && name[0] <= '9' || name == "#" || name == "@" || name == "*") {
		if v, isParam, known := w.params.lookup(name); isParam {
			return v, known
		}
	}
	if w.refs != nil {
		n, ok := w.resolve(name)
		if !ok {
			return nil, false
		}
		name = n
	}
	if v, ok := w.vars[name]; ok {
		return v, v != nil
	}
	if v, ok := w.env.Vars[name]; ok {
		return []string{v}, true
	}
	if name == "PWD" && w.cwd != "" {
		return []string{w.cwd}, true
	}
	return nil, false
}

// trimPattern is ${v%pat}, ${v%%pat}, ${v#pat} or ${v##pat}: the shortest
// or longest suffix or prefix of v that the shell pattern pat matches,
// removed.
func trimPattern(v, pat string, op syntax.ParExpOperator) string {
	switch op {
	case syntax.RemSmallSuffix:
		for i := len(v); i >= 0; i-- {
			if shellMatch(pat, v[i:]) {
				return v[:i]
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(v); i++ {
			if shellMatch(pat, v[i:]) {
				return v[:i]
			}
		}
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(v); i++ {
			if shellMatch(pat, v[:i]) {
				return v[i:]
			}
		}
	case syntax.RemLargePrefix:
		for i := len(v); i >= 0; i-- {
			if shellMatch(pat, v[:i]) {
				return v[i:]
			}
		}
	}
	return v
}

// shellMatch matches s against a shell pattern: * (any string, / too),
// ?, […] classes with ! or ^ and ranges, and \ escapes.
func shellMatch(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if shellMatch(pat, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			end := strings.IndexByte(pat[1:], ']')
			if end < 0 || s == "" {
				if s == "" || s[0] != '[' {
					return false
				}
				pat, s = pat[1:], s[1:]
				continue
			}
			class := pat[1 : end+1]
			neg := class != "" && (class[0] == '!' || class[0] == '^')
			if neg {
				class = class[1:]
			}
			in := false
			for k := 0; k < len(class); k++ {
				if k+2 < len(class) && class[k+1] == '-' {
					if class[k] <= s[0] && s[0] <= class[k+2] {
						in = true
					}
					k += 2
					continue
				}
				if class[k] == s[0] {
					in = true
				}
			}
			if in == neg {
				return false
			}
			pat, s = pat[end+2:], s[1:]
		case '\\':
			if len(pat) > 1 {
				pat = pat[1:]
			}
			fallthrough
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeQuoted removes the backslashes that escape inside double quotes.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// andOr walks a chain of && (or of ||): each command after the first may
// or may not run, so what the chain assigns may hold as it is after any
// of them. In a && chain a command runs only when every one before it
// did, so it sees what they all assigned; a || chain likewise. The
// directory is the one the whole chain leaves, as veto assumes a cd
// succeeds.
func (w *walker) andOr(c *syntax.BinaryCmd, depth int) stage {
	var buf [8]*syntax.Stmt
	chain := andOrChain(c, c.Op, buf[:0])
	w.stmt(chain[0], depth, nil)
	rest := chain[1:]
	changes := false
	for _, s := range rest {
		if w.changesState(s) {
			changes = true
			break
		}
	}
	if !changes {
		var st stage
		for _, s := range rest {
			st = w.stmt(s, depth, nil)
		}
		return st
	}
	ran := w.fork()
	ends := []*walker{w.fork()} // none of the rest ran
	var st stage
	for i, s := range rest {
		st = ran.stmt(s, depth, nil)
		if i < len(rest)-1 && w.changesState(s) {
			ends = append(ends, ran.fork()) // the chain stopped after s
		}
	}
	ends = append(ends, ran)
	w.join(ends)
	w.cwd, w.dirs, w.params = ran.cwd, ran.dirs, ran.params
	return st
}

// andOrChain flattens a left-nested chain of one operator: a && b && c.
func andOrChain(c *syntax.BinaryCmd, op syntax.BinCmdOperator, out []*syntax.Stmt) []*syntax.Stmt {
	if x, ok := c.X.Cmd.(*syntax.BinaryCmd); ok && x.Op == op && len(c.X.Redirs) == 0 && !c.X.Negated && !c.X.Background {
		out = andOrChain(x, op, out)
	} else {
		out = append(out, c.X)
	}
	return append(out, c.Y)
}
