package shell

// Interpreters: shells with -c, -s or a script, eval, source, and the
// one-liners of python, node, perl, ruby, php, lua, awk, deno and bun,
// whose code is read for the commands it would run and the files it
// names (code.go).

import (
	"path"
	"strconv"
	"strings"
)

// runShell is a shell: -c runs a script, a file argument runs a file, -s
// or no file runs its input. The words after -c's script, or after the
// file, are its positional parameters ($0, $1, …).
func runShell(w *walker, c *cmd) stage {
	cflag, sflag := false, false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a.unknown {
			switch {
			case cflag:
				return w.scriptWith(c, a, c.args[i+1:])
			case sflag:
				return w.fromStdin(c, false)
			}
			w.finding(CannotVouch, c.seg, "The shell is given a script veto cannot see, so it cannot vouch for it.")
			return stage{}
		}
		s := a.lit
		switch {
		case s == "--" || s == "-":
			switch {
			case cflag:
				if i+1 < len(c.args) {
					return w.scriptWith(c, c.args[i+1], c.args[i+2:])
				}
				return stage{}
			case sflag || s == "-":
				return w.fromStdin(c, false)
			}
			return w.shellFile(c, c.args[i+1:])
		case s == "-o" || s == "+o" || s == "-O" || s == "+O" || s == "--rcfile" || s == "--init-file":
			i++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			if s[0] == '-' && strings.ContainsRune(s[1:], 'c') {
				cflag = true
			}
			if s[0] == '-' && strings.ContainsRune(s[1:], 's') {
				sflag = true
			}
		default:
			switch {
			case cflag:
				return w.scriptWith(c, a, c.args[i+1:])
			case sflag:
				return w.fromStdin(c, false) // the operands are arguments
			}
			return w.shellFile(c, c.args[i:])
		}
	}
	if cflag || c.stdinArgs {
		switch {
		case c.stdinArgs:
			w.finding(CannotVouch, c.seg, "The shell runs a script taken from input veto cannot see, so it cannot vouch for it.")
		case len(c.up) > 0:
			// -c without its script, with input: the shell refuses or, in a
			// spelling veto misreads, runs its input; either way veto does
			// not vouch for it.
			w.finding(CannotVouch, c.seg, "The shell is given -c without a script veto can see, so it cannot vouch for it.")
		}
		return stage{}
	}
	return w.fromStdin(c, false)
}

// scriptWith analyses a shell's -c script with its positional parameters
// bound to the words after it: the first is $0.
func (w *walker) scriptWith(c *cmd, script word, args []word) stage {
	if script.unknown {
		return w.scriptOf(c, script)
	}
	sub := w.fork()
	var zero []string // $0 of sh -c with no arguments: unknown
	if len(args) > 0 {
		zero, args = wordVals(args[0]), args[1:]
	}
	sub.params = newParams(zero, args)
	return sub.scriptOf(c, script)
}

// wordVals is a word's values for a variable: nil when unknown.
func wordVals(x word) []string {
	if x.unknown {
		return nil
	}
	return x.vals
}

// params are the positional parameters of a function's body or of an
// sh -c script: $0, then the arguments. At the top level there are none
// (nil): $1 is unknown there.
type params struct {
	zero []string // $0; nil when unknown
	args []word
}

func newParams(zero []string, args []word) *params { return &params{zero: zero, args: args} }

// dollar0 is $0 where p holds: a function keeps its caller's.
func (p *params) dollar0() []string {
	if p == nil {
		return nil
	}
	return p.zero
}

// lookup is a positional or special parameter's value: $0 … $N (past the
// arguments, empty), $#, and $@ and $* when there is at most one argument.
func (p *params) lookup(name string) (vals []string, isParam, known bool) {
	switch {
	case name == "#":
		return []string{strconv.Itoa(len(p.args))}, true, true
	case name == "@" || name == "*":
		switch len(p.args) {
		case 0:
			return []string{""}, true, true
		case 1:
			v := wordVals(p.args[0])
			return v, true, v != nil
		}
		return nil, true, false
	case name == "0":
		return p.zero, true, p.zero != nil
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 {
		return nil, false, false
	}
	if n > len(p.args) {
		return []string{""}, true, true
	}
	v := wordVals(p.args[n-1])
	return v, true, v != nil
}

// shellFile is a shell running a script file (or, with no file, its input).
func (w *walker) shellFile(c *cmd, rest []word) stage {
	if len(rest) == 0 {
		return w.fromStdin(c, false)
	}
	return w.runFile(c, rest[0], rest[1:], false)
}

// runFile is a shell or interpreter running the file f: a file read, or,
// for a process substitution, what it prints; a file veto cannot name
// cannot be vouched for.
func (w *walker) runFile(c *cmd, f word, args []word, code bool) stage {
	if f.feed != nil {
		return w.runFeed(c, []stage{*f.feed}, code)
	}
	if f.unknown {
		w.finding(CannotVouch, c.seg, "The command runs a file veto cannot determine, so it cannot vouch for it.")
		return stage{}
	}
	for _, v := range f.vals {
		switch stdinPath(v) {
		case stdinIn:
			// The script is the command's input: a here-string, a
			// here-document or a pipe veto can read is analysed as the
			// script; input veto cannot see is not vouched for.
			if len(c.up) == 0 {
				w.finding(CannotVouch, c.seg, "The command runs a script it reads from input veto cannot see, so it cannot vouch for it.")
				return stage{}
			}
			return w.runFeed(c, c.up, code)
		case stdinOther:
			w.finding(CannotVouch, c.seg, "The command runs a script it reads from a file descriptor veto cannot see, so it cannot vouch for it.")
			return stage{}
		}
	}
	w.access(f, false, false)
	w.runWritten(c, f, args, code, c.name == "source" || c.name == ".")
	return stage{}
}

// What a path a script is read from names: a file, the command's input
// (/dev/stdin, /dev/fd/0, /proc/self/fd/0), or another descriptor.
const (
	stdinNone = iota
	stdinIn
	stdinOther
)

// stdinPath tells whether p names a file descriptor rather than a file:
// /dev/stdin, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N and
// /proc/PID/fd/N, in any spelling the kernel accepts (repeated slashes, "."
// segments). Descriptor 0 is the input.
func stdinPath(p string) int {
	if !strings.HasPrefix(p, "/") {
		return stdinNone
	}
	clean := path.Clean(p)
	switch clean {
	case "/dev/stdin":
		return stdinIn
	case "/dev/stdout", "/dev/stderr", "/dev/tty":
		return stdinOther
	}
	var fd string
	switch {
	case strings.HasPrefix(clean, "/dev/fd/"):
		fd = clean[len("/dev/fd/"):]
	case strings.HasPrefix(clean, "/proc/"):
		rest := clean[len("/proc/"):]
		proc, after, ok := strings.Cut(rest, "/fd/")
		if !ok || strings.Contains(proc, "/") {
			return stdinNone
		}
		if proc != "self" && proc != "thread-self" {
			return stdinOther // another process's descriptor
		}
		fd = after
	default:
		return stdinNone
	}
	if strings.Contains(fd, "/") || fd == "" {
		return stdinOther
	}
	if strings.TrimLeft(fd, "0") == "" {
		return stdinIn
	}
	return stdinOther
}

func runEval(w *walker, c *cmd) stage {
	if len(c.args) == 0 {
		return stage{}
	}
	// eval runs in this shell: what its script assigns or defines (an
	// alias, a function) holds after it.
	script := joinWords(c.args)
	if script.unknown || len(script.vals) > 1 {
		return w.scriptOf(c, script)
	}
	w.script(script.lit, c.depth+1)
	return stage{}
}

func runSource(w *walker, c *cmd) stage {
	if len(c.args) == 0 {
		return stage{}
	}
	return w.runFile(c, c.args[0], c.args[1:], false)
}

// interpSpec is how an interpreter's command line names its code.
type interpSpec struct {
	code     string          // short options whose value is code (python -c, perl -e, node -e and -p)
	longCode map[string]bool // long options whose value is code (--eval, --print)
	val      string          // short options that take a value, attached or the next word
	attached string          // short options that take the rest of their cluster only (perl -i.bak, -Mmod)
	digits   string          // short options followed by digits only, in the cluster (perl -l, -0)
	codeNext bool            // a code option's code is always the next word, and the cluster goes on (node -pe)
	longVal  map[string]bool // long options that take the next word unless given with =
	module   string          // short options that run a module or a named script veto does not read (python -m)
	file     string          // short options whose value is the script file (php -f)
	codeEnds bool            // the code ends the options: what follows are its arguments (python)
	inPlace  string          // the option that edits the operand files in place (perl -i, ruby -i)
	loop     string          // the options that read the operand files with the code (perl -n, -p)
}

var interpSpecs = map[string]interpSpec{
	"python": {code: "c", val: "WXQ", module: "m", codeEnds: true, longVal: map[string]bool{"check-hash-based-pycs": true}},
	"perl":   {code: "eE", val: "I", attached: "iMmFxdDC", digits: "l0", inPlace: "i", loop: "np"},
	"ruby":   {code: "e", val: "rICE", attached: "iFWTxKU", digits: "0", inPlace: "i", loop: "np", longVal: map[string]bool{"encoding": true}},
	"node": {code: "ep", val: "rC", codeNext: true, longCode: map[string]bool{"eval": true, "print": true},
		longVal: map[string]bool{"require": true, "import": true, "loader": true, "experimental-loader": true, "input-type": true, "conditions": true, "env-file": true, "title": true, "inspect-port": true}},
	"php": {code: "rBRE", val: "dcFz", file: "f", longVal: map[string]bool{"define": true}},
	"lua": {code: "e", val: "l"},
	// R and Rscript: -e's expression; R's other options are flags or
	// --name=value.
	"rscript": {code: "e"},
	"r":       {code: "e", val: "gd", file: "f"},
	"julia":   {code: "eE", val: "Jpt", longCode: map[string]bool{"eval": true, "print": true}, codeEnds: true},
	"elixir":  {code: "e", val: "r", longCode: map[string]bool{"eval": true}, longVal: map[string]bool{"erl": true, "cookie": true, "sname": true, "name": true}},
	"groovy":  {code: "e", val: "cD", longVal: map[string]bool{"encoding": true}},
	"octave":  {longCode: map[string]bool{"eval": true}, longVal: map[string]bool{"path": true, "exec-path": true, "image-path": true}},
}

// interpFamily is the spec an interpreter's name uses.
func interpFamily(name string) (interpSpec, bool) {
	switch {
	case pythonName(name):
		return interpSpecs["python"], true
	case name == "node" || name == "nodejs" || name == "bun":
		return interpSpecs["node"], true
	case name == "luajit" || strings.HasPrefix(name, "lua"):
		return interpSpecs["lua"], true
	case strings.HasPrefix(name, "php"):
		return interpSpecs["php"], true
	}
	s, ok := interpSpecs[name]
	return s, ok
}

// runInterp is an interpreter: the code its options give is read for the
// shell commands it would run, the files it names and the environment it
// reads; a script file is a file read; with neither it runs its input.
func runInterp(w *walker, c *cmd) stage {
	spec, _ := interpFamily(c.name)
	var codes, files []word
	var script *word
	inPlace, loop := false, false
	args := c.args
	done := false
	for i := 0; i < len(args) && !done && script == nil; i++ {
		a := args[i]
		if a.unknown {
			if len(codes) > 0 {
				files = append(files, args[i:]...)
				break
			}
			script = &args[i]
			break
		}
		s := a.lit
		switch {
		case s == "--":
			if len(codes) == 0 && i+1 < len(args) {
				script = &args[i+1]
			} else {
				files = append(files, args[i+1:]...)
			}
			done = true
		case s == "-":
			done = true
		case strings.HasPrefix(s, "--"):
			name, _, hasVal := strings.Cut(s[2:], "=")
			switch {
			case name == "help" || name == "version":
				return stage{}
			case spec.longCode[name] && hasVal:
				codes = append(codes, tails(a, "--"+name+"="))
			case spec.longCode[name] && i+1 < len(args):
				i++
				codes = append(codes, args[i])
			case spec.longVal[name] && !hasVal:
				i++
			}
		case len(s) > 1 && s[0] == '-':
			wantCode := false
		cluster:
			for j := 1; j < len(s); j++ {
				f := s[j : j+1]
				switch {
				case spec.codeNext && strings.Contains(spec.code, f):
					wantCode = true
				case strings.Contains(spec.digits, f):
					for j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9' {
						j++
					}
				case strings.Contains(spec.code, f):
					if j+1 < len(s) {
						codes = append(codes, tails(a, s[:j+1]))
					} else if i+1 < len(args) {
						i++
						codes = append(codes, args[i])
					}
					done = spec.codeEnds
					break cluster
				case strings.Contains(spec.module, f):
					// A module: nothing veto reads, but pip's install (python -m
					// pip install …) is judged as pip's.
					mod, rest := s[j+1:], args[i+1:]
					if mod == "" && i+1 < len(args) {
						mod, rest = args[i+1].lit, args[i+2:]
					}
					if mod == "pip" || mod == "pipx" || mod == "uv" || mod == "poetry" {
						c2 := *c
						c2.name, c2.args = mod, rest
						return runPipInstall(w, &c2)
					}
					return stage{}
				case strings.Contains(spec.file, f):
					if j+1 < len(s) {
						x := tails(a, s[:j+1])
						script = &x
					} else if i+1 < len(args) {
						i++
						script = &args[i]
					}
					break cluster
				case strings.Contains(spec.val, f):
					if j+1 == len(s) {
						i++
					}
					break cluster
				case strings.Contains(spec.attached, f):
					if strings.Contains(spec.inPlace, f) {
						inPlace = true
					}
					break cluster
				case strings.Contains(spec.inPlace, f):
					inPlace = true
				case strings.Contains(spec.loop, f):
					loop = true
				}
			}
			if wantCode && i+1 < len(args) {
				i++
				codes = append(codes, args[i])
			}
		default:
			if len(codes) > 0 {
				files = append(files, args[i:]...)
				done = true
				continue
			}
			script = &args[i]
		}
	}
	if len(codes) == 0 && script == nil && !done {
		return w.fromStdin(c, true)
	}
	if len(codes) == 0 {
		if script == nil {
			return w.fromStdin(c, true)
		}
		return w.runFile(c, *script, nil, true)
	}
	for _, code := range codes {
		w.readCode(c, code)
	}
	if inPlace || loop {
		for _, f := range files {
			w.access(f, false, false)
			if inPlace {
				w.access(f, true, false)
			}
		}
	}
	return stage{}
}

func runDeno(w *walker, c *cmd) stage {
	if len(c.args) >= 2 && c.args[0].lit == "eval" {
		return w.readCode(c, c.args[len(c.args)-1])
	}
	return stage{}
}

// runAwk is awk: its program (the first operand, or -e's) is code; -f's
// file is read; the other operands are files read, but var=value.
func runAwk(w *walker, c *cmd) stage {
	// Options come before the program: the first operand ends them.
	o := parseOpts(c.args, optSpec{val: "fvFeiEW", long: map[string]bool{"file": true, "assign": true, "field-separator": true,
		"source": true, "include": true, "exec": true}}, true)
	ops := o.operands
	for _, f := range o.all("f", "file", "i", "include", "E", "exec") {
		w.runFile(c, f, nil, true) // a program file: read, or cannot_vouch when veto cannot name it
	}
	progs := o.all("e", "source")
	if !o.has("f", "file", "E", "exec", "e", "source") {
		if len(ops) == 0 {
			return stage{}
		}
		progs, ops = ops[:1], ops[1:]
	}
	for _, p := range progs {
		w.readCode(c, p)
	}
	for _, f := range ops {
		if !f.unknown && looksAssign(f.lit) {
			continue
		}
		w.access(f, false, false)
	}
	return stage{}
}
