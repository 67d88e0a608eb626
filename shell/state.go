package shell

// Shell state veto follows beyond plain assignments: what read, mapfile
// and printf -v assign, name references (declare -n), the positional
// parameters set -- gives, aliases, and the files the command writes that
// it then runs.

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// written is what the command wrote to a file, for a later command of
// its own that runs the file.
type written struct {
	vals    []string // the possible contents; nil when veto cannot know them
	fetched bool     // a download
}

// fileKey is the name a path is recorded under: relative to the working
// directory when veto knows it.
func (w *walker) fileKey(p string) string {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && w.cwd != "" {
		return path.Join(w.cwd, p)
	}
	return path.Clean(p)
}

// wrote records that the command writes content to each file x may name
// (content nil: veto cannot know it); with appendTo, after what is there.
func (w *walker) wrote(x word, content []string, appendTo, fetched bool) {
	if x.unknown || w.remote {
		return
	}
	for _, v := range x.vals {
		if v == "" || harmless[v] || strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/") {
			continue
		}
		if w.r.written == nil {
			w.r.written = map[string]*written{}
		}
		k := w.fileKey(v)
		nw := &written{vals: content, fetched: fetched}
		if old, ok := w.r.written[k]; ok && appendTo {
			nw.fetched = nw.fetched || old.fetched
			if old.vals != nil && content != nil {
				if nw.vals = product(old.vals, content); len(nw.vals) > maxValues {
					nw.vals = nil
				}
			} else {
				nw.vals = nil
			}
		}
		w.r.written[k] = nw
	}
}

// writtenAt is what the command wrote to the file x names, if it wrote
// one: nil when x names none of them.
func (w *walker) writtenAt(x word) *written {
	if w.r.written == nil || x.unknown {
		return nil
	}
	var out *written
	for _, v := range x.vals {
		f, ok := w.r.written[w.fileKey(v)]
		if !ok {
			continue
		}
		if out == nil {
			out = &written{vals: []string{}}
		}
		out.fetched = out.fetched || f.fetched
		if f.vals == nil || out.vals == nil {
			out.vals = nil
			continue
		}
		out.vals = append(out.vals, f.vals...)
	}
	return out
}

// stage is what printing the file gives a pipe: the text written, a
// download, or text veto cannot know.
func (f *written) stage() *stage {
	switch {
	case f.fetched:
		return &stage{fetch: true}
	case f.vals == nil:
		return &stage{}
	}
	return &stage{text: f.vals}
}

// printed is what cat gives a pipe of files among which the command
// wrote some: their text in turn when it wrote every one and knows what;
// nil when it wrote none.
func (w *walker) printed(files []word) *stage {
	if w.r.written == nil {
		return nil
	}
	out := &stage{text: []string{""}}
	any := false
	for _, f := range files {
		wr := w.writtenAt(f)
		if wr == nil {
			out.text = nil // a file as it was: veto does not read it here
			continue
		}
		any = true
		out.fetch = out.fetch || wr.fetched
		if wr.vals == nil || out.text == nil {
			out.text = nil
			continue
		}
		if out.text = product(out.text, wr.vals); len(out.text) > maxValues {
			out.text = nil
		}
	}
	if !any {
		return nil
	}
	return out
}

// forget drops what the command wrote to x: it is a file as it was before
// (moved away, or overwritten with a copy of a file veto judges as read).
func (w *walker) forget(x word) {
	if w.r.written == nil || x.unknown {
		return
	}
	for _, v := range x.vals {
		delete(w.r.written, w.fileKey(v))
	}
}

// runWritten judges a file the command wrote and then runs (source F,
// bash F, python3 F, ./F): by what was written, or refused when veto
// cannot know it. It reports whether f is such a file.
func (w *walker) runWritten(c *cmd, f word, args []word, code, inPlace bool) bool {
	wr := w.writtenAt(f)
	if wr == nil {
		return false
	}
	if !w.expand(c.seg) {
		return true
	}
	switch {
	case wr.fetched:
		w.finding(FetchToShell, c.seg, "The command runs a file it downloaded, which veto cannot see.")
		return true
	case wr.vals == nil:
		w.finding(CannotVouch, c.seg, "The command runs a file it wrote with content veto cannot see, so it cannot vouch for it.")
		return true
	}
	for _, text := range wr.vals {
		interp := c.name
		if !code {
			if name, ok := shebangInterp(text); ok {
				code, interp = true, name
			}
		}
		if code {
			w.readCode(&cmd{name: interp, depth: c.depth, seg: c.seg}, lit(text))
			continue
		}
		// Its positional parameters are the words after it ($0 the file).
		if inPlace {
			// source runs it in this shell: its assignments hold; it has
			// the caller's parameters unless it is given its own.
			saved := w.params
			if len(args) > 0 {
				w.params = newParams(w.params.dollar0(), args)
			}
			w.script(text, c.depth+1)
			if len(args) > 0 {
				w.params = saved
			}
			continue
		}
		sub := w.fork()
		sub.params = newParams(wordVals(f), args)
		sub.script(text, c.depth+1)
	}
	return true
}

// shebangInterp is the interpreter a script's #! line names when it is
// not a shell (python3, node, …).
func shebangInterp(text string) (string, bool) {
	line, ok := strings.CutPrefix(text, "#!")
	if !ok {
		return "", false
	}
	line, _, _ = strings.Cut(line, "\n")
	fs := strings.Fields(line)
	if len(fs) == 0 {
		return "", false
	}
	name := path.Base(fs[0])
	if name == "env" {
		for _, f := range fs[1:] {
			if !strings.HasPrefix(f, "-") {
				name = path.Base(f)
				break
			}
		}
	}
	if _, ok := interpFamily(name); ok {
		return name, true
	}
	return "", false
}

// isOutput reports whether a redirection writes the file it names.
func isOutput(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut, syntax.RdrInOut:
		return true
	}
	return false
}

// ---- read, mapfile, printf -v

// readInput is the text a builtin reads from its input: nil when veto
// cannot know it.
func readInput(c *cmd) []string {
	if len(c.up) == 0 {
		return nil
	}
	return c.up[len(c.up)-1].text
}

// runRead is read: the names it assigns get the fields of the first line
// of its input, split on IFS (the last name the rest of the line), when
// veto knows the input; else they are unknown.
func runRead(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "adinNptu"}, false)
	var names []string
	for _, x := range o.operands {
		if x.unknown {
			continue // a name veto cannot read: nothing it can follow
		}
		names = append(names, x.lit)
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	input := readInput(c)
	if o.has("n", "N", "u") {
		input = nil
	}
	if o.has("a") {
		// read -a NAME: the fields of the line are the array's elements.
		var elems []word
		known := len(input) == 1
		if _, set := w.vars["IFS"]; set && (len(w.vars["IFS"]) != 1) {
			known = false
		}
		if known {
			ifs := " \t\n"
			if v, set := w.vars["IFS"]; set {
				ifs = v[0]
			}
			line := readLine(input[0], readDelim(&o), o.has("r"))
			for _, f := range ifsFields(line, ifs) {
				elems = append(elems, lit(f))
			}
		}
		for _, a := range o.all("a") {
			if !a.unknown && syntax.ValidName(a.lit) {
				w.r.Assigned = append(w.r.Assigned, a.lit)
				w.setArray(a.lit, elems, known, false)
			}
		}
		return stage{}
	}
	delim := readDelim(&o)
	ifs, ifsKnown := " \t\n", true
	if v, set := w.vars["IFS"]; set {
		if len(v) == 1 {
			ifs = v[0]
		} else {
			ifsKnown = false
		}
	}
	vals := make([][]string, len(names))
	for _, text := range input {
		line := readLine(text, delim, o.has("r"))
		var fields []string
		switch {
		case !ifsKnown && len(names) == 1:
			// IFS= read: untrimmed, or trimmed when IFS holds white space.
			vals[0] = appendNew(vals[0], line, strings.Trim(line, " \t\n"))
			continue
		case !ifsKnown:
			input = nil
		default:
			fields = readFields(line, ifs, len(names))
		}
		if input == nil {
			break
		}
		for i := range names {
			f := ""
			if i < len(fields) {
				f = fields[i]
			}
			vals[i] = appendNew(vals[i], f)
		}
	}
	for i, n := range names {
		if input == nil || len(vals[i]) > maxValues {
			vals[i] = nil
		}
		w.setVar(c, n, vals[i])
	}
	return stage{}
}

func appendNew(list []string, vals ...string) []string {
	for _, v := range vals {
		found := false
		for _, x := range list {
			if x == v {
				found = true
				break
			}
		}
		if !found {
			list = append(list, v)
		}
	}
	return list
}

// readLine is the line read takes from text: up to delim, with
// backslashes escaping and joining lines unless raw.
func readLine(text string, delim byte, raw bool) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if ch == delim {
			break
		}
		if !raw && ch == '\\' && i+1 < len(text) {
			i++
			if text[i] != '\n' {
				b.WriteByte(text[i])
			}
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// readFields splits a line among n names as read does: fields on IFS,
// the last name taking the rest of the line.
func readFields(line, ifs string, n int) []string {
	if ifs == "" {
		return []string{line}
	}
	fields := ifsFields(line, ifs)
	if len(fields) <= n {
		return fields
	}
	// The last name takes the rest: find where its field starts.
	white := ""
	for _, c := range " \t\n" {
		if strings.ContainsRune(ifs, c) {
			white += string(c)
		}
	}
	rest := line
	for i := 0; i < n-1; i++ {
		rest = strings.TrimLeft(rest, white)
		j := strings.IndexAny(rest, ifs)
		if j < 0 {
			return fields
		}
		rest = rest[j:]
		rest = strings.TrimLeft(rest, " \t\n")
		if rest != "" && strings.IndexByte(ifs, rest[0]) >= 0 {
			rest = strings.TrimLeft(rest[1:], " \t\n")
		}
	}
	out := append(fields[:n-1:n-1], strings.TrimRight(strings.TrimLeft(rest, " \t\n"), " \t\n"))
	return out
}

// runMapfile is mapfile and readarray: the array's first element is the
// first line of the input when veto knows it; -C's callback is a script.
func runMapfile(w *walker, c *cmd) stage {
	o := parseOpts(c.args, optSpec{val: "dnOsuCc"}, false)
	for _, cb := range o.all("C") {
		w.scriptOf(c, cb)
	}
	name := "MAPFILE"
	if len(o.operands) > 0 {
		if o.operands[0].unknown {
			return stage{}
		}
		name = o.operands[0].lit
	}
	input := readInput(c)
	if o.has("u", "s", "O", "d", "n") {
		input = nil
	}
	if !syntax.ValidName(name) {
		return stage{}
	}
	w.r.Assigned = append(w.r.Assigned, name)
	if len(input) != 1 {
		w.setArray(name, nil, false, false)
		return stage{}
	}
	// Each line is an element; without -t it keeps its newline.
	var elems []word
	text := input[0]
	for text != "" {
		line, rest, found := strings.Cut(text, "\n")
		if found && !o.has("t") {
			line += "\n"
		}
		elems = append(elems, lit(line))
		text = rest
	}
	w.setArray(name, elems, true, false)
	return stage{}
}

// readDelim is the delimiter read -d gives, a newline by default.
func readDelim(o *opts) byte {
	if d, ok := o.get("d"); ok {
		if d == "" {
			return 0
		}
		return d[0]
	}
	return '\n'
}

// ---- arrays

// arrayElems evaluates an array's elements as a command's arguments are
// evaluated; known is false when one is given an index ([k]=v).
func (w *walker) arrayElems(arr *syntax.ArrayExpr, depth int) (elems []word, known bool) {
	known = true
	for _, e := range arr.Elems {
		if e.Index != nil {
			known = false
			w.substsIn(e.Index, depth)
		}
		if e.Value == nil {
			continue
		}
		elems = w.split(elems, e.Value, w.word(e.Value, depth), false)
	}
	return elems, known
}

// setArray assigns an array (appendTo: a+=(…)); $name is its first
// element.
func (w *walker) setArray(name string, elems []word, known, appendTo bool) {
	if w.arrays == nil {
		w.arrays = map[string][]word{}
	}
	if appendTo {
		old, had := w.arrays[name]
		if !had {
			known = false
		}
		elems = slices.Concat(old, elems)
	}
	if !known {
		delete(w.arrays, name)
		w.ownVars()
		w.vars[name] = nil
		return
	}
	if elems == nil {
		elems = []word{}
	}
	w.arrays[name] = elems
	if len(elems) == 0 {
		w.ownVars()
		w.vars[name] = []string{""}
	} else {
		w.ownVars()
		w.vars[name] = wordVals(elems[0])
	}
}

// arrayIndex is the subscript of ${a[…]} when it is a literal: "@", "*"
// or digits; "" otherwise.
func arrayIndex(p *syntax.ParamExp) string {
	idx, ok := p.Index.(*syntax.Word)
	if !ok {
		return ""
	}
	s := idx.Lit()
	if s == "@" || s == "*" || isDigits(s) {
		return s
	}
	return ""
}

// element is ${a[N]} or ${#a[@]} of an array veto knows.
func (w *walker) element(p *syntax.ParamExp) ([]string, bool) {
	elems, ok := w.arrays[p.Param.Value]
	idx := arrayIndex(p)
	if !ok || idx == "" {
		return nil, true
	}
	if p.Length {
		if idx != "@" && idx != "*" {
			return nil, true
		}
		return []string{strconv.Itoa(len(elems))}, false
	}
	switch idx {
	case "@", "*":
		if len(elems) == 1 {
			v := wordVals(elems[0])
			return v, v == nil
		}
		if len(elems) == 0 {
			return []string{""}, false
		}
		return nil, true // several words: spliceArray
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n >= len(elems) {
		return []string{""}, err != nil
	}
	v := wordVals(elems[n])
	return v, v == nil
}

// spliceArray appends the words "${a[@]}" (or ${a[@]}, ${a[*]}) expands
// to, when veto knows the array's elements.
func (w *walker) spliceArray(argv []word, src *syntax.Word) ([]word, bool) {
	if w.arrays == nil || src == nil || len(src.Parts) != 1 {
		return argv, false
	}
	part, quoted := src.Parts[0], false
	if dq, ok := part.(*syntax.DblQuoted); ok {
		if len(dq.Parts) != 1 {
			return argv, false
		}
		part, quoted = dq.Parts[0], true
	}
	pe, ok := part.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Index == nil || pe.Exp != nil || pe.Excl || pe.Length || pe.Slice != nil ||
		pe.Repl != nil || pe.Names != 0 || pe.NestedParam != nil {
		return argv, false
	}
	idx := arrayIndex(pe)
	elems, known := w.arrays[pe.Param.Value]
	if !known || (idx != "@" && idx != "*") || (quoted && idx == "*") {
		return argv, false
	}
	for _, a := range elems {
		if quoted || a.unknown || len(a.vals) != 1 {
			argv = append(argv, a)
			continue
		}
		for _, f := range ifsFields(a.lit, " \t\n") {
			argv = append(argv, lit(f))
		}
	}
	return argv, true
}

// joinArrays keeps the arrays every branch left alike; any other is no
// longer known element by element.
func (w *walker) joinArrays(branches []*walker) {
	names := map[string]bool{}
	for _, b := range branches {
		for k := range b.arrays {
			names[k] = true
		}
	}
	for k := range w.arrays {
		names[k] = true
	}
	for k := range names {
		first, ok := branches[0].arrays[k]
		same := ok
		for _, b := range branches[1:] {
			other, had := b.arrays[k]
			if !same || !had || !sameWords(first, other) {
				same = false
				break
			}
		}
		if same {
			if w.arrays == nil {
				w.arrays = map[string][]word{}
			}
			w.arrays[k] = first
		} else {
			delete(w.arrays, k)
		}
	}
}

func sameWords(a, b []word) bool {
	return slices.EqualFunc(a, b, func(x, y word) bool {
		return x.unknown == y.unknown && slices.Equal(x.vals, y.vals)
	})
}

// setVar assigns a builtin's result to name (through a name reference);
// vals nil: unknown.
func (w *walker) setVar(c *cmd, name string, vals []string) {
	if !syntax.ValidName(name) {
		return
	}
	w.r.Assigned = append(w.r.Assigned, name)
	x := word{vals: vals, unknown: vals == nil}
	if vals != nil {
		x.lit = vals[0]
	}
	w.assign(name, x)
}

// ---- set --, shift

// setArgs is set with operands: set -- a b, set a b (and set -e -- a)
// make them the positional parameters; it reports whether set had any.
func (w *walker) setArgs(c *cmd) bool {
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a.unknown:
			w.params = newParams(w.params.dollar0(), append([]word(nil), c.args[i:]...))
			return true
		case a.lit == "--" || a.lit == "-":
			w.params = newParams(w.params.dollar0(), append([]word(nil), c.args[i+1:]...))
			return true
		case strings.HasPrefix(a.lit, "-") || strings.HasPrefix(a.lit, "+"):
			if strings.Contains(a.lit[1:], "o") {
				i++ // set -euo pipefail: -o's option name
			}
		default:
			w.params = newParams(w.params.dollar0(), append([]word(nil), c.args[i:]...))
			return true
		}
	}
	return false
}

func runShift(w *walker, c *cmd) stage {
	if w.params == nil {
		return stage{}
	}
	n := 1
	if len(c.args) > 0 {
		if c.args[0].unknown || !isDigits(c.args[0].lit) {
			w.params = newParams(w.params.zero, []word{{unknown: true}, {unknown: true}})
			return stage{}
		}
		n = 0
		for _, d := range c.args[0].lit {
			n = n*10 + int(d-'0')
			if n > 1000 {
				break
			}
		}
	}
	args := w.params.args
	if n > len(args) {
		return stage{} // shift fails: nothing changes
	}
	w.params = newParams(w.params.zero, args[n:])
	return stage{}
}

// allParams reports whether a word is "$@", $@ or $* alone (and
// ${@}), which expand to each positional parameter: quoted, one word each.
func allParams(x *syntax.Word) (ok, quoted bool) {
	if x == nil || len(x.Parts) != 1 {
		return false, false
	}
	p := x.Parts[0]
	if dq, isDq := p.(*syntax.DblQuoted); isDq {
		if len(dq.Parts) != 1 {
			return false, false
		}
		p, quoted = dq.Parts[0], true
	}
	pe, isPe := p.(*syntax.ParamExp)
	if !isPe || pe.Param == nil || pe.Exp != nil || pe.Excl || pe.Length || pe.Index != nil || pe.Slice != nil ||
		pe.Repl != nil || pe.Names != 0 || pe.NestedParam != nil {
		return false, false
	}
	switch pe.Param.Value {
	case "@":
		return true, quoted
	case "*":
		return !quoted, false
	}
	return false, false
}

// spliceParams appends the words "$@" (or $@, $*) expands to, when the
// positional parameters are known; ok is false when they are not.
func (w *walker) spliceParams(argv []word, src *syntax.Word) ([]word, bool) {
	if w.params == nil {
		return argv, false
	}
	ok, quoted := allParams(src)
	if !ok {
		return argv, false
	}
	for _, a := range w.params.args {
		if quoted || a.unknown || len(a.vals) != 1 {
			argv = append(argv, a)
			continue
		}
		for _, f := range ifsFields(a.lit, " \t\n") {
			argv = append(argv, lit(f))
		}
	}
	return argv, true
}

// ---- aliases

// runAlias is alias NAME=VALUE …: later commands named NAME run VALUE.
// veto expands aliases whether or not expand_aliases is set (an
// interactive shell always does), and on the line that defines them.
func runAlias(w *walker, c *cmd) stage {
	for _, a := range c.args {
		if a.unknown {
			// alias $X: any name may now run anything.
			w.finding(CannotVouch, c.seg, "The command defines an alias veto cannot read, so it cannot vouch for it.")
			continue
		}
		name, _, ok := strings.Cut(a.lit, "=")
		if !ok || name == "" || strings.HasPrefix(name, "-") {
			continue
		}
		var vals []string
		for _, v := range a.vals {
			_, value, _ := strings.Cut(v, "=")
			vals = append(vals, value)
		}
		if w.aliases == nil {
			w.aliases = map[string][]string{}
		}
		w.aliases[name] = vals
	}
	return stage{}
}

func runUnalias(w *walker, c *cmd) stage {
	for _, a := range c.args {
		switch {
		case a.unknown:
		case a.lit == "-a":
			w.aliases = nil
		default:
			delete(w.aliases, a.lit)
		}
	}
	return stage{}
}

// expandAlias runs the alias argv[0] names with the rest of argv after
// its text, as the shell does: the text is parsed again, so an alias may
// hold several commands, and one ending in a space expands the next word
// too.
func (w *walker) expandAlias(argv []word, vals []string, depth int, up []stage) stage {
	if !w.expand(w.r.Segments) {
		return stage{}
	}
	name := argv[0].lit
	w.active["\x00alias "+name] = true
	defer delete(w.active, "\x00alias "+name)
	var rest strings.Builder
	for _, a := range argv[1:] {
		rest.WriteByte(' ')
		if a.unknown || len(a.vals) != 1 {
			rest.WriteString("$" + unknownVar)
			continue
		}
		rest.WriteString(shellQuote(a.lit))
	}
	w.ownVars()
	w.vars[unknownVar] = nil
	var st stage
	for _, v := range vals {
		src := v + rest.String()
		if depth+1 > w.env.MaxDepth {
			w.finding(DepthExceeded, w.r.Segments, "The command nests shells, evals or wrappers deeper than veto follows, so it cannot vouch for it.")
			return stage{}
		}
		files, _, err := parse(src)
		if err != nil || len(files) != 1 {
			w.finding(ParseFailed, w.r.Segments, "The command's alias does not parse as a shell command, so veto cannot vouch for it.")
			continue
		}
		for i, s := range files[0].Stmts {
			if i == 0 {
				st = w.stmt(s, depth+1, up)
			} else {
				st = w.stmt(s, depth+1, nil)
			}
		}
	}
	return st
}

// unknownVar stands for an argument veto cannot know in an alias's
// expansion: a variable no command can assign.
const unknownVar = "_veto_unknown_"

// shellQuote quotes s for a shell, in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^~", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ---- name references

// resolve is the variable name stands for through name references
// (declare -n): itself when it is none; ok false when a reference's
// target is not known.
func (w *walker) resolve(name string) (string, bool) {
	for i := 0; i < 8 && w.refs != nil; i++ {
		t, isRef := w.refs[name]
		if !isRef {
			return name, true
		}
		switch t {
		case "":
			return "", false
		case pendingRef:
			return name, true
		}
		name = t
	}
	if _, isRef := w.refs[name]; isRef {
		return "", false // a cycle
	}
	return name, true
}

// nameRef records declare -n name=target (target "": unknown).
func (w *walker) nameRef(name string, target word) {
	if w.refs == nil {
		w.refs = map[string]string{}
	}
	w.refs[name] = refTarget(target)
}

// pendingRef is the target of declare -n NAME without one: the first
// assignment to NAME names it.
const pendingRef = "\x00"

// refTarget is the variable a word names, "" when veto cannot know it.
func refTarget(x word) string {
	if !x.unknown && len(x.vals) == 1 && syntax.ValidName(x.lit) {
		return x.lit
	}
	return ""
}

// maxExpansions bounds the aliases expanded and written files run in one
// analysis: each may run several others, nested.
const maxExpansions = 256

// expand counts one expansion; past the bound it refuses the command.
func (w *walker) expand(seg int) bool {
	w.r.expansions++
	if w.r.expansions > maxExpansions {
		w.finding(DepthExceeded, seg, "The command expands aliases or runs scripts it wrote more often than veto follows, so it cannot vouch for it.")
		return false
	}
	return true
}

// wroteDownloads records the files wget, or curl -O, saves each URL to:
// the last segment of its path (index.html for none), a download.
func (w *walker) wroteDownloads(urls []word) {
	for _, u := range urls {
		if u.unknown {
			continue
		}
		for _, v := range u.vals {
			_, rest, ok := strings.Cut(v, "://")
			if !ok {
				continue
			}
			rest, _, _ = strings.Cut(rest, "?")
			rest, _, _ = strings.Cut(rest, "#")
			name := "index.html"
			if _, p, ok := strings.Cut(rest, "/"); ok && path.Base("/"+p) != "/" {
				name = path.Base("/" + p)
			}
			w.wrote(lit(name), nil, false, true)
		}
	}
}

// setElement is a[i]=x: the element, when veto knows the array and the
// subscript; else the array is no longer known element by element, and
// $a is unknown unless the subscript is 0.
func (w *walker) setElement(a *syntax.Assign, x word, depth int) {
	name := a.Name.Value
	idx := ""
	if iw, ok := a.Index.(*syntax.Word); ok && isDigits(iw.Lit()) {
		idx = iw.Lit()
	} else {
		w.substsIn(a.Index, depth)
	}
	n, err := strconv.Atoi(idx)
	elems, known := w.arrays[name]
	if idx == "" || err != nil || !known || n > len(elems) || x.unknown && n == len(elems) {
		delete(w.arrays, name)
		if idx != "0" {
			w.ownVars()
			w.vars[name] = nil
			return
		}
	} else {
		elems = slices.Clone(elems)
		if n == len(elems) {
			elems = append(elems, x)
		} else {
			elems[n] = x
		}
		w.arrays[name] = elems
	}
	if n == 0 && idx == "0" {
		if x.unknown {
			w.ownVars()
			w.vars[name] = nil
		} else {
			w.ownVars()
			w.vars[name] = x.vals
		}
	}
}
