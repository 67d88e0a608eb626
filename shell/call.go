package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmd is one simple command being analysed, after its words were
// evaluated.
type cmd struct {
	name  string // lower-case base name of the program
	args  []word // the arguments after the name
	depth int
	up    []stage
	seg   int

	// How a wrapper feeds it: stdin items appended to its arguments (xargs,
	// parallel), and the placeholder those items replace.
	stdinArgs bool
	repl      string
}

func lit(s string) word { return word{vals: []string{s}, lit: s} }

// call walks a simple command: its assignments, its words, its program.
func (w *walker) call(c *syntax.CallExpr, depth int, up []stage) stage {
	type saved struct {
		vals []string
		had  bool
	}
	var restore map[string]saved
	for _, a := range c.Assigns {
		if a.Name == nil {
			continue
		}
		var x word
		switch {
		case a.Value != nil:
			n := len(w.r.secrets)
			x = w.word(a.Value, depth)
			w.taint(a.Name.Value, n)
		case a.Array != nil:
			if len(c.Args) == 0 {
				elems, known := w.arrayElems(a.Array, depth)
				w.r.Assigned = append(w.r.Assigned, a.Name.Value)
				w.setArray(a.Name.Value, elems, known, a.Append)
				continue
			}
			w.substsIn(a.Array, depth)
			x = word{unknown: true}
		default:
			x = lit("")
		}
		name := a.Name.Value
		w.r.Assigned = append(w.r.Assigned, name)
		w.envHosts(name, x)
		w.startupEnv(name, x, depth)
		if a.Index != nil {
			w.setElement(a, x, depth) // a[i]=x
			continue
		}
		if len(c.Args) == 0 {
			w.assign(name, x)
			continue
		}
		// A prefix assignment holds for the command's environment, not for
		// the expansion of its own words; analysis takes both readings.
		if restore == nil {
			restore = map[string]saved{}
		}
		old, had := w.vars[name]
		restore[name] = saved{old, had}
		prev, known := w.lookup(name)
		if x.unknown || !known {
			w.ownVars()
			w.vars[name] = nil
		} else {
			w.ownVars()
			w.vars[name] = append(append([]string(nil), prev...), x.vals...)
		}
	}
	if len(c.Args) == 0 {
		return stage{}
	}
	// NAME=value words later on the line (env's, make's) may set what the
	// command sees; the analysis takes their values as possible too.
	for _, a := range c.Args[1:] {
		name, val, ok := strings.Cut(a.Lit(), "=")
		if !ok || !syntax.ValidName(name) {
			continue
		}
		w.r.Assigned = append(w.r.Assigned, name)
		if restore == nil {
			restore = map[string]saved{}
		}
		if _, done := restore[name]; !done {
			old, had := w.vars[name]
			restore[name] = saved{old, had}
		}
		prev, known := w.lookup(name)
		if known {
			w.ownVars()
			w.vars[name] = append(append([]string(nil), prev...), val)
		}
	}
	argv := w.r.words(len(c.Args))
	var alts [][]word
	if spliced, ok := w.spliceParams(argv, c.Args[0]); ok {
		argv = spliced // "$@" as the program: its words
	} else if spliced, ok := w.spliceArray(argv, c.Args[0]); ok {
		argv = spliced // "${cmd[@]}" as the program
	} else {
		first := w.word(c.Args[0], depth)
		if alts = w.programAlternatives(c.Args[0], first); alts == nil {
			argv = w.split(argv, c.Args[0], first, true)
		}
	}
	for _, a := range c.Args[1:] {
		if spliced, ok := w.spliceParams(argv, a); ok {
			argv = spliced
			continue
		}
		if spliced, ok := w.spliceArray(argv, a); ok {
			argv = spliced
			continue
		}
		argv = w.split(argv, a, w.word(a, depth), false)
	}
	defer func() {
		for name, s := range restore {
			if s.had {
				w.ownVars()
				w.vars[name] = s.vals
			} else {
				w.ownVars()
				delete(w.vars, name)
			}
		}
	}()
	if alts == nil {
		return w.command(argv, depth, up, false, "")
	}
	// The program is one of several commands a variable may hold: each is
	// judged.
	var st stage
	for _, alt := range alts {
		st = w.command(append(alt, argv...), depth, up, false, "")
	}
	return st
}

// programAlternatives are the commands a program word may be when it is
// one unquoted expansion with several possible values, each split on IFS
// (if a; then c="git status"; else c="git log"; fi; $c); nil otherwise.
func (w *walker) programAlternatives(src *syntax.Word, x word) [][]word {
	if x.unknown || len(x.vals) < 2 || len(src.Parts) != 1 || !unquotedExpansion(src) {
		return nil
	}
	ifs := " \t\n"
	if v, set := w.vars["IFS"]; set {
		if len(v) != 1 {
			return nil
		}
		ifs = v[0]
	}
	alts := make([][]word, 0, len(x.vals))
	for _, v := range x.vals {
		var alt []word
		if ifs == "" {
			alt = []word{lit(v)}
		} else {
			for _, f := range ifsFields(v, ifs) {
				alt = append(alt, lit(f))
			}
		}
		alts = append(alts, alt)
	}
	return alts
}

// looksAssign reports whether a command word reads as an assignment,
// valid or not ("A=1", "1A=2", "A-B=2", "=2"): such words are skipped, so
// what follows them is judged as the command.
func looksAssign(s string) bool {
	i := strings.IndexByte(s, '=')
	return i >= 0 && !strings.ContainsAny(s[:i], "/ \t") && !strings.HasPrefix(s, "-")
}

// command analyses argv as a command: a function, a wrapper, or a program.
func (w *walker) command(argv []word, depth int, up []stage, stdinArgs bool, repl string) stage {
	for len(argv) > 0 && !argv[0].unknown && looksAssign(argv[0].lit) {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return stage{}
	}
	if w.aliases != nil && !argv[0].unknown {
		if vals, ok := w.aliases[argv[0].lit]; ok && !w.active["\x00alias "+argv[0].lit] {
			if vals == nil {
				seg := w.r.Segments
				w.r.Segments++
				w.finding(CannotVouch, seg, "The command runs an alias veto cannot read, so it cannot vouch for it.")
				return stage{}
			}
			return w.expandAlias(argv, vals, depth, up)
		}
	}
	seg := w.r.Segments
	w.r.Segments++
	defer func(prev int) { w.seg = prev }(w.seg)
	w.seg = seg
	if depth > w.env.MaxDepth {
		w.finding(DepthExceeded, seg, "The command nests shells, evals or wrappers deeper than veto follows, so it cannot vouch for it.")
		return stage{}
	}
	if argv[0].unknown || (repl != "" && strings.Contains(argv[0].lit, repl)) {
		w.finding(CannotVouch, seg, "The program to run is a variable or an expansion, so veto cannot vouch for the command.")
		return stage{}
	}
	if body, ok := w.funcs[argv[0].lit]; ok {
		if w.active[argv[0].lit] {
			return stage{}
		}
		w.active[argv[0].lit] = true
		defer delete(w.active, argv[0].lit)
		// The function's positional parameters are its arguments, for its
		// body only.
		saved := w.params
		w.params = newParams(w.params.dollar0(), argv[1:])
		st := w.stmt(body, depth+1, up)
		w.params = saved
		return st
	}
	c := w.r.newCmd()
	*c = cmd{name: strings.ToLower(path.Base(argv[0].lit)), args: argv[1:], depth: depth, up: up, seg: seg, stdinArgs: stdinArgs, repl: repl}
	if repl != "" {
		// The placeholder stands for items veto cannot see.
		for i, a := range c.args {
			if !a.unknown && strings.Contains(a.lit, repl) {
				c.args[i] = word{unknown: true}
			}
		}
	}
	w.prog, w.progSeg = c.name, seg
	w.secretProgram(c)
	if w.r.Commands == nil {
		// Room for about one command in 24 bytes of the text, against
		// growing a long script's lists step by step.
		n := max(w.r.srcLen/24, 1)
		w.r.Programs = make([]string, 0, n)
		w.r.Commands = make([]Command, 0, n)
	}
	w.r.Programs = append(w.r.Programs, c.name)
	w.r.Commands = append(w.r.Commands, w.record(argv[0], c))
	w.privilege(c)
	if w.r.written != nil && strings.Contains(argv[0].lit, "/") && w.runWritten(c, argv[0], c.args, false, false) {
		return stage{} // ./x.sh: a script this command wrote
	}
	var st stage
	if h := handler(c.name); h != nil {
		st = h(w, c)
	} else {
		w.unknownProgram(c)
	}
	if fetchers[c.name] {
		st.fetch = true
	}
	w.secretSend(c)
	return st
}

// split is word splitting of an evaluated word x: an unquoted expansion
// whose value holds a character of IFS becomes several words, as in bash
// (c="rm -rf x"; $c). veto splits a word that is one expansion with one
// value; any other word that would split is left whole, except the
// program's, which veto cannot then name: it is unknown.
func (w *walker) split(argv []word, src *syntax.Word, x word, program bool) []word {
	if x.unknown || !unquotedExpansion(src) {
		return append(argv, x)
	}
	ifs := " \t\n"
	if v, set := w.vars["IFS"]; set {
		if len(v) != 1 {
			if program {
				return append(argv, word{unknown: true, src: src})
			}
			return append(argv, x)
		}
		ifs = v[0]
	}
	splits := false
	for _, v := range x.vals {
		if strings.ContainsAny(v, ifs) {
			splits = true
		}
	}
	if len(src.Parts) == 1 && len(x.vals) == 1 && x.lit == "" {
		return argv // an empty unquoted expansion is no word at all
	}
	if !splits || ifs == "" {
		return append(argv, x)
	}
	if len(src.Parts) != 1 || len(x.vals) != 1 {
		if program {
			return append(argv, word{unknown: true, src: src})
		}
		return append(argv, x)
	}
	for _, f := range ifsFields(x.lit, ifs) {
		argv = append(argv, lit(f))
	}
	return argv
}

// unquotedExpansion reports whether a word has an expansion outside
// quotes, which the shell splits.
func unquotedExpansion(x *syntax.Word) bool {
	if x == nil {
		return false
	}
	for _, p := range x.Parts {
		switch p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			return true
		}
	}
	return false
}

// ifsFields splits s as bash splits an expansion: runs of IFS white space
// separate fields and are trimmed at the ends; each other IFS character
// ends a field, so two in a row make an empty one.
func ifsFields(s, ifs string) []string {
	white := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.IndexByte(ifs, c) >= 0 }
	var out []string
	i := 0
	for i < len(s) && white(s[i]) {
		i++
	}
	for i < len(s) {
		j := i
		for j < len(s) && strings.IndexByte(ifs, s[j]) < 0 {
			j++
		}
		out = append(out, s[i:j])
		if j == len(s) {
			break
		}
		// One delimiter: white space around at most one other IFS character.
		for j < len(s) && white(s[j]) {
			j++
		}
		if j < len(s) && strings.IndexByte(ifs, s[j]) >= 0 && !white(s[j]) {
			j++
			for j < len(s) && white(s[j]) {
				j++
			}
			if j == len(s) {
				break
			}
		}
		i = j
	}
	return out
}

// record is the Command a rule sees of c, whose program word is prog.
func (w *walker) record(prog word, c *cmd) Command {
	// One array holds every word's values: two allocations a command.
	n := len(prog.vals)
	for _, x := range c.args {
		n += len(x.vals)
	}
	vals := w.r.strs(n)[:0]
	out := Command{Argv: w.r.argWords(len(c.args) + 1), Dir: w.cwd, Segment: c.seg, InputArgs: c.stdinArgs, Code: w.code}
	add := func(x word) {
		if x.unknown {
			out.Argv = append(out.Argv, Word{Unknown: true})
			return
		}
		if x.vals == nil {
			out.Argv = append(out.Argv, Word{}) // as slices.Clone keeps nil
			return
		}
		at := len(vals)
		vals = append(vals, x.vals...)
		out.Argv = append(out.Argv, Word{Values: vals[at:len(vals):len(vals)]})
	}
	add(prog)
	for _, x := range c.args {
		add(x)
	}
	return out
}
