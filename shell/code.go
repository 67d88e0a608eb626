package shell

// Interpreter code (python -c, perl -e, node -e, ruby -e, php -r, lua -e,
// awk programs, and code fed on input) is scanned, not understood: its
// text and each of its string literals are read as shell commands, URLs
// in it are hosts reached, a literal that names a path is a file read or,
// in a call that writes or removes, written, and reading the whole
// environment is an environment dump.

import (
	"net/netip"
	"path"
	"strings"
)

// readCode reads interpreter code for what veto recognises.
func (w *walker) readCode(c *cmd, x word) stage {
	if x.unknown {
		w.finding(CannotVouch, c.seg, "The interpreter runs code veto cannot see, so it cannot vouch for it.")
		return stage{}
	}
	for _, src := range x.vals {
		if !strings.HasSuffix(c.name, "awk") {
			// awk is not shell: its commands are in its strings only.
			sub := w.fork()
			sub.code = true
			sub.script(src, c.depth+1)
		}
		if dumpsEnv(c.name, src) {
			w.r.find(RuleEnvDump, EnvDump, c.seg, "The interpreter's code reads the whole environment, which holds secrets.")
		}
		if !w.code && codePrintsSecret(c, src) {
			w.r.find(RuleEnvDump, SecretPrint, c.seg, "The interpreter's code prints the value of a variable named like a secret.")
		}
		t := &codeText{lits: literals(src)}
		t.clean = blankLiterals(src, t.lits)
		t.chdir = strings.Contains(strings.ToLower(t.clean), "chdir")
		home := mentionsHome(src)
		net := netCode(src)
		from := len(w.r.Hosts)
		for _, l := range t.lits {
			s := l.val
			if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
				w.host(c, s)
				continue
			}
			if commandLike(s) {
				sub := w.fork()
				sub.code = true
				sub.inPrint = printedLiteral(t.callsAround(l.start))
				sub.script(s, c.depth+1)
			}
			if net && addrLit(s) {
				w.host(c, s) // socket.connect(("169.254.169.254", 80))
				continue
			}
			w.codePath(t, l, home, false)
		}
		// The home directory named by an expression, not a literal:
		// shutil.rmtree(Path.home()), fs.rmSync(os.homedir(), …).
		for _, at := range homeExprs(src, t.lits) {
			w.codePath(t, codeLit{val: "~", start: at, end: at}, home, true)
		}
		if c.name == "r" || c.name == "rscript" {
			w.rSystem2(c, src, t)
		}
		if len(w.r.Hosts) > from && codeUploads(t.clean) {
			w.uploadFrom(c, from)
		}
		// An argument list of literals (["rm", "-rf", "/x"]) is a command too.
		for _, argv := range literalLists(t) {
			sub := w.fork()
			sub.code = true
			sub.script(argv, c.depth+1)
		}
	}
	return stage{}
}

// commandLike reports whether a literal is worth reading as a shell
// command: not an open mode (perl's ">file"), and either more than one
// word or the name of a program veto judges.
func commandLike(s string) bool {
	switch {
	case s == "", strings.HasPrefix(s, ">"), strings.HasPrefix(s, "<"), strings.HasPrefix(s, "+<"):
		return false
	case strings.ContainsAny(s, " \t\n;|&<>$`("):
		return true
	}
	return handler(strings.ToLower(path.Base(s))) != nil
}

// literalLists returns each run of two or more literals that are the
// whole of a bracketed list (["rm", "-rf", "/x"], ('git', 'reset')), as a
// shell command with each literal quoted.
func literalLists(t *codeText) []string {
	var out []string
	for i := 0; i < len(t.lits); {
		j := i
		for j+1 < len(t.lits) && strings.Trim(t.clean[t.lits[j].end:t.lits[j+1].start], " ,\t\n") == "" {
			j++
		}
		if j > i {
			open := strings.TrimRight(t.clean[:t.lits[i].start], " \t\n")
			shut := strings.TrimLeft(t.clean[t.lits[j].end:], " ,\t\n")
			if open != "" && strings.ContainsRune("[(", rune(open[len(open)-1])) && shut != "" && strings.ContainsRune("])", rune(shut[0])) {
				var b strings.Builder
				for k := i; k <= j; k++ {
					if k > i {
						b.WriteByte(' ')
					}
					b.WriteString("'" + strings.ReplaceAll(t.lits[k].val, "'", `'\''`) + "'")
				}
				out = append(out, b.String())
			}
		}
		i = j + 1
	}
	return out
}

// codeLit is a string literal in code: its text, unescaped, and where its
// quotes are.
type codeLit struct {
	val        string
	start, end int // the opening quote, and one past the closing one
}

// literals returns the quoted strings in code, with backslash escapes
// taken as the character they escape.
func literals(code string) []codeLit {
	var out []codeLit
	for i := 0; i < len(code); i++ {
		q := code[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		raw := q != '`' && i > 0 && (code[i-1] == 'r' || code[i-1] == 'R') && (i < 2 || !isIdent(code[i-2]) || strings.ContainsRune("bBfFuU", rune(code[i-2])))
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) {
				if raw {
					// A raw string (r"…") keeps its backslashes; one before
					// the quote still does not end it.
					b.WriteByte('\\')
					j++
				} else {
					j = codeEscape(&b, code, j+1, q)
					continue
				}
			}
			b.WriteByte(code[j])
		}
		if j < len(code) {
			out = append(out, codeLit{val: b.String(), start: i, end: j + 1})
		}
		i = j
	}
	return out
}

// codeEscape writes the character the escape at code[j] (the letter after
// the backslash) stands for, as Python, JavaScript, Perl and Ruby read
// it: \xHH, \x{H…}, \uHHHH, \u{H…}, \UHHHHHHHH, octal \NNN, \n, \t, \r,
// \0, and any other character as itself. It returns the index of the
// escape's last byte.
func codeEscape(b *strings.Builder, code string, j int, q byte) int {
	hex := func(from, max int) (rune, int, bool) {
		var v rune
		n := 0
		for n < max && from+n < len(code) && code[from+n] != q {
			d := hexVal(code[from+n])
			if d < 0 {
				break
			}
			v = v*16 + rune(d)
			n++
		}
		return v, n, n > 0
	}
	c := code[j]
	switch c {
	case 'x', 'u', 'U':
		if j+1 < len(code) && code[j+1] == '{' {
			if v, n, ok := hex(j+2, 8); ok && j+2+n < len(code) && code[j+2+n] == '}' {
				b.WriteRune(v)
				return j + 2 + n
			}
			break
		}
		max := 2
		switch c {
		case 'u':
			max = 4
		case 'U':
			max = 8
		}
		if v, n, ok := hex(j+1, max); ok {
			b.WriteRune(v)
			return j + n
		}
	case 'n':
		b.WriteByte('\n')
		return j
	case 't':
		b.WriteByte('\t')
		return j
	case 'r':
		b.WriteByte('\r')
		return j
	case '0', '1', '2', '3', '4', '5', '6', '7':
		var v rune
		n := 0
		for n < 3 && j+n < len(code) && code[j+n] >= '0' && code[j+n] <= '7' {
			v = v*8 + rune(code[j+n]-'0')
			n++
		}
		b.WriteRune(v)
		return j + n - 1
	}
	b.WriteByte(c)
	return j
}

// blankLiterals is code with the inside of every literal blanked, so that
// brackets and commas in strings do not count.
func blankLiterals(code string, lits []codeLit) string {
	b := []byte(code)
	for _, l := range lits {
		for i := l.start + 1; i < l.end-1; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// mentionsHome reports whether code builds paths from the home directory,
// so that a relative literal in it may name a file there.
func mentionsHome(code string) bool {
	lc := strings.ToLower(code)
	for _, s := range []string{"expanduser", "home()", "homedir", "dir.home", "env.home", "expand_path", "{home}",
		`["home"]`, `['home']`, `("home")`, `('home')`, "$home", "{'home'}", `{"home"}`, "getpwuid"} {
		if strings.Contains(lc, s) {
			return true
		}
	}
	return false
}

// homeSpellings are expressions whose value is the home directory.
var homeSpellings = []string{"Path.home()", "homedir()", "Dir.home", "process.env.HOME", "$ENV{HOME}", "$ENV{'HOME'}", `$ENV{"HOME"}`,
	`os.environ["HOME"]`, `os.environ['HOME']`, `getenv("HOME")`, `getenv('HOME')`, `ENV["HOME"]`, `ENV['HOME']`, `env.get("HOME")`,
	"Deno.env.get(\"HOME\")", "File::HomeDir"}

// homeExprs returns where code names the home directory by an expression
// outside its literals.
func homeExprs(src string, lits []codeLit) []int {
	var out []int
	for _, h := range homeSpellings {
		for i := 0; ; {
			j := strings.Index(src[i:], h)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(h)
			if at > 0 && isIdent(src[at-1]) && h[0] != '$' && !strings.HasPrefix(h, "homedir") {
				continue
			}
			if i < len(src) && isIdent(src[i]) {
				continue
			}
			if rest := strings.TrimLeft(src[i:], " "); rest != "" && (rest[0] == '+' || rest[0] == '/' ||
				rest[0] == '.' && len(rest) > 1 && strings.ContainsRune(" \"'$", rune(rest[1]))) {
				continue // homedir() + "/.bashrc", $ENV{HOME} . "/.bashrc": the literal joined names the path
			}
			inLit := false
			for _, l := range lits {
				if at > l.start && at < l.end {
					inLit = true
					break
				}
			}
			if !inLit {
				out = append(out, at)
			}
		}
	}
	return out
}

// netCode reports whether code opens connections, so that an address
// among its literals is a host it reaches.
func netCode(src string) bool {
	lc := strings.ToLower(src)
	for _, s := range []string{"socket", "connect", "http", "request", "fetch", "urlopen", "net.", "open_uri", "axios", "telnet",
		"ftplib", "smtplib", "curl", "dial"} {
		if strings.Contains(lc, s) {
			return true
		}
	}
	return false
}

// addrLit reports whether a literal is an IP address, bare, bracketed or
// with a port.
func addrLit(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	h := s
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j > 0 {
			h = h[1:j]
		}
	} else if i := strings.LastIndexByte(h, ':'); i > 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	a, err := netip.ParseAddr(h)
	// 0.0.0.0 and :: are what a server binds to, not where code connects.
	return err == nil && !a.IsUnspecified()
}

// homeRefs are the ways code spells the home directory inside a string.
var homeRefs = strings.NewReplacer("$ENV{HOME}", "~", "$ENV{'HOME'}", "~", `$ENV{"HOME"}`, "~", "#{Dir.home}", "~",
	"${process.env.HOME}", "~", "${os.homedir()}", "~", "${HOME}", "~", "$HOME", "~", "#{ENV['HOME']}", "~", `#{ENV["HOME"]}`, "~")

// pathLike reports whether a literal names a path: absolute, under the
// home directory, relative with a directory, or a dot file.
func pathLike(s string) bool {
	if s == "" || len(s) > 1024 || strings.Contains(s, "://") || strings.ContainsAny(s, " \t\r\n%*?<>|;&$`\"'(){}[]=,") {
		return false
	}
	switch {
	case s[0] == '/' || s[0] == '~':
		return true
	case s[0] == '.' && len(s) > 1 && s[1] != '.' && s[1] != ' ':
		return true
	}
	return strings.Contains(s, "/") && !strings.HasPrefix(s, "-")
}

// What a call does with a path it is given.
type pathUse int

const (
	useNone   pathUse = iota // a call that says nothing: look further out
	useRead                  // it reads the file
	useWrite                 // it writes the file
	useRemove                // it removes the file
	useTree                  // it removes the tree
	useDest                  // its first argument is read and the others written (copy, move)
)

// codeCalls are the calls that do something with the path they are given,
// by the last part of their name, lower-case.
var codeCalls = map[string]pathUse{
	"rmtree": useTree, "rm_rf": useTree, "rm_r": useTree, "rmsync": useTree, "rimraf": useTree, "remove_dir_all": useTree,
	"remove_entry": useTree, "remove_entry_secure": useTree, "removedirs": useTree, "rmdirsync": useTree, "rmrf": useTree,
	"deltree": useTree, "emptydirsync": useTree, "removesync": useTree,
	"remove": useRemove, "unlink": useRemove, "unlinksync": useRemove, "rmdir": useRemove, "delete": useRemove, "rm": useRemove,
	"writefile": useWrite, "writefilesync": useWrite, "appendfile": useWrite, "appendfilesync": useWrite,
	"createwritestream": useWrite, "write_text": useWrite, "write_bytes": useWrite, "binwrite": useWrite,
	"file_put_contents": useWrite, "truncate": useWrite, "mkdir": useWrite, "makedirs": useWrite, "mkdirsync": useWrite,
	"mkdir_p": useWrite, "mkpath": useWrite, "touch": useWrite, "chmod": useWrite, "chmodsync": useWrite, "chown": useWrite,
	"copy": useDest, "copy2": useDest, "copyfile": useDest, "copytree": useDest, "move": useDest, "rename": useDest,
	"renamesync": useDest, "copyfilesync": useDest, "cpsync": useDest, "cp": useDest, "mv": useDest, "cp_r": useDest,
	"link": useDest, "symlink": useDest, "symlinksync": useDest, "linksync": useDest, "replace": useDest,
	"open": useRead, "fopen": useRead, "opensync": useRead, "readfile": useRead, "readfilesync": useRead,
	"read_text": useRead, "read_bytes": useRead, "symlink_to": useWrite, "hardlink_to": useWrite,
}

// qualified are calls whose last name alone says nothing (f.write(…)
// writes text, not a path): only these spellings count.
var qualified = map[string]pathUse{"file.write": useWrite, "io.write": useWrite, "fs.write": useWrite, "file.delete": useRemove,
	"path.write": useWrite}

// codeText is code with its literals found and blanked.
type codeText struct {
	clean string
	lits  []codeLit
	chdir bool // the code changes its directory: a relative path may lie anywhere, the home directory included
}

// joined reports whether the literal at pos is joined to another path:
// given to a path builder (os.path.join(home, ".bashrc"),
// Path.home().joinpath(".profile")) or after +, / or perl's . (home +
// "/.bashrc", Path.home() / ".bashrc").
func (t *codeText) joined(pos int, before string) bool {
	if strings.HasSuffix(before, "+") || strings.HasSuffix(before, "/") || strings.HasSuffix(before, ".") {
		return true
	}
	for _, call := range t.callsAround(pos) {
		if call.builder && call.use == useNone {
			return true
		}
	}
	return false
}

// codePath judges a literal that names a path by the calls it is given to.
// An expression (expr) is only judged where it is written or removed.
func (w *walker) codePath(t *codeText, l codeLit, home, expr bool) {
	s := homeRefs.Replace(l.val)
	mode := useNone
	switch {
	case strings.HasPrefix(s, ">>"), strings.HasPrefix(s, "+>"), strings.HasPrefix(s, "+<"):
		s, mode = strings.TrimSpace(s[2:]), useWrite
	case strings.HasPrefix(s, ">"):
		s, mode = strings.TrimSpace(s[1:]), useWrite
	case strings.HasPrefix(s, "<"):
		s, mode = strings.TrimSpace(s[1:]), useRead
	}
	named := mode != useNone
	if mode == useNone {
		mode = useRead
	calls:
		for _, call := range t.callsAround(l.start) {
			u := call.use
			switch {
			case u == useNone && call.builder && call.chain != useNone:
				// Path(…).write_text(…), Path(…).expanduser().unlink(): the
				// method called on the path built.
				u = call.chain
				if u == useDest {
					u = useWrite // Path(a).rename(b): a is removed
				}
				mode, named = u, true
				break calls
			case u == useNone && call.builder:
				continue // os.path.join(…), expanduser(…): the path goes on outward
			case u == useNone:
				break calls
			case u == useDest:
				u = useRead
				if call.arg > 0 || call.onResult {
					u = useWrite // Path(a).rename(b): b is the destination
				}
			case call.open && call.arg > 0 && modeLit(s):
				return
			case call.open && call.onResult && modeLit(s):
				return // Path(p).open("a"): the mode, p is the path
			case call.content:
				return // Path(p).write_text("…"): what is written, not a path
			case call.arg > 0 && !call.open:
				break calls // what is written: not the path
			}
			if call.opensForWrite {
				u = useWrite
			}
			mode, named = u, true
			break
		}
	}
	// A literal a file call is given is a path if it could be one; any
	// other only if it looks like one.
	if !pathLike(s) && !(named && s != "" && !strings.ContainsAny(s, " \t\r\n") && !strings.Contains(s, "://")) {
		return
	}
	if expr && mode == useRead {
		return
	}
	paths := []string{s}
	before := strings.TrimRight(t.clean[:l.start], " ")
	switch {
	case !home:
	case s[0] != '/' && s[0] != '~' && !strings.HasPrefix(s, "./") && (t.chdir || t.joined(l.start, before)):
		paths = append(paths, "~/"+s)
	case s[0] == '/' && (strings.HasSuffix(before, "+") || strings.HasSuffix(before, ".")):
		paths = append(paths, "~"+s) // homedir() + "/.bashrc", $ENV{HOME} . "/.bashrc"
	}
	for _, p := range paths {
		switch mode {
		case useRead:
			w.access(lit(p), false, false)
		case useWrite, useRemove:
			w.access(lit(p), true, false)
		case useTree:
			w.access(lit(p), true, true)
		}
	}
}

// codeCall is a call a literal is an argument of.
type codeCall struct {
	name          string // the called name as written (os.system, print)
	use           pathUse
	arg           int     // which argument the literal is in
	opensForWrite bool    // an open whose mode writes ("w", "a", "x", "+", ">", O_WRONLY …)
	open          bool    // an open call: the path is any argument but the mode
	builder       bool    // a call that builds a path from its arguments (os.path.join, expanduser, Path)
	chain         pathUse // for a builder, what the method called on its result does with the path
	onResult      bool    // a method called on an expression's result: Path(p).open(…)
	content       bool    // a method whose arguments are content, not paths (write_text, write_bytes)
}

// contentCalls are the methods of a path whose arguments are what they
// write, not paths.
var contentCalls = map[string]bool{"write_text": true, "write_bytes": true, "read_text": true, "read_bytes": true}

// chainAfter is what the methods called on the result of the call whose
// parenthesis is at i do with it: Path(p).write_text(…) writes p,
// Path(p).expanduser().unlink() removes it, Path(p).open("w") writes it,
// Path(p) / "x" goes on to what is done with the joined path.
func (t *codeText) chainAfter(i int) pathUse {
	clean := t.clean
	j := closing(clean, i)
	for n := 0; j > 0 && j < len(clean) && n < 8; n++ {
		k := j + 1
		for k < len(clean) && clean[k] == ' ' {
			k++
		}
		if k >= len(clean) {
			return useNone
		}
		switch clean[k] {
		case '.':
			e := k + 1
			for e < len(clean) && isIdent(clean[e]) {
				e++
			}
			name := strings.ToLower(clean[k+1 : e])
			if e >= len(clean) || clean[e] != '(' {
				j = e - 1 // an attribute: .parent
				continue
			}
			if u := callUse(name); u != useNone {
				if u == useRead && isOpen(name) && t.writeMode(e) {
					return useWrite
				}
				return u
			}
			if !pathBuilders[name] && !pathMethods[name] {
				return useNone
			}
			j = closing(clean, e)
		case '/':
			e := k + 1
			for e < len(clean) && clean[e] == ' ' {
				e++
			}
			if e < len(clean) && (clean[e] == '"' || clean[e] == '\'') {
				q := clean[e]
				e++
				for e < len(clean) && clean[e] != q {
					e++
				}
				j = e
				continue
			}
			for e < len(clean) && (isIdent(clean[e]) || clean[e] == '.') {
				e++
			}
			j = e - 1
		default:
			return useNone
		}
	}
	return useNone
}

// pathMethods are the methods of a path that give a path again.
var pathMethods = map[string]bool{"absolute": true, "with_name": true, "with_suffix": true, "with_stem": true, "relative_to": true,
	"expanduser": true, "resolve": true, "joinpath": true}

// closing is the index of the parenthesis that closes the one at i, -1
// when there is none.
func closing(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// pathBuilders are the calls whose result is a path made of their
// arguments, by the last part of their name, lower-case.
var pathBuilders = map[string]bool{"join": true, "expanduser": true, "expandvars": true, "abspath": true, "realpath": true,
	"normpath": true, "path": true, "resolve": true, "str": true, "fspath": true, "expand_path": true, "absolute_path": true,
	"pathname": true, "joinpath": true, "catfile": true, "catdir": true, "purepath": true, "posixpath": true}

// callsAround returns the calls the position pos of clean lies in,
// innermost first, at most three.
func (t *codeText) callsAround(pos int) []codeCall {
	clean := t.clean
	var out []codeCall
	depth, arg := 0, 0
	for i := pos - 1; i >= 0 && len(out) < 3; i-- {
		switch clean[i] {
		case ')', ']', '}':
			depth++
		case '[', '{':
			if depth > 0 {
				depth--
				continue
			}
			arg = 0
		case '(':
			if depth > 0 {
				depth--
				continue
			}
			name := identBefore(clean, i)
			call := codeCall{arg: arg, name: name}
			call.use = callUse(name)
			last := name
			if k := strings.LastIndexAny(name, ".:"); k >= 0 {
				last = name[k+1:]
			}
			call.builder = pathBuilders[last] || name == "" // a bare group, (Path.home() / ".bashrc"), passes the path on
			call.content = contentCalls[last]
			if k := strings.LastIndex(strings.TrimRight(clean[:i], " "), last); k > 0 {
				pre := strings.TrimRight(clean[:k], ".")
				call.onResult = len(pre) < k && pre != "" && pre[len(pre)-1] == ')'
			}
			if call.builder {
				call.chain = t.chainAfter(i)
			}
			if call.use == useRead && isOpen(name) {
				call.open = true
				call.opensForWrite = t.writeMode(i)
			}
			out = append(out, call)
			arg = 0
		case ',':
			if depth == 0 {
				arg++
			}
		case ';', '\n':
			if depth == 0 {
				return out
			}
		}
	}
	return out
}

func isOpen(name string) bool {
	last := name
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		last = name[i+1:]
	}
	return last == "open" || last == "fopen" || last == "opensync"
}

// callUse is what a call named name does with a path.
func callUse(name string) pathUse {
	if u, ok := qualified[name]; ok {
		return u
	}
	last := name
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		last = name[i+1:]
	}
	if u, ok := codeCalls[last]; ok {
		return u
	}
	return useNone
}

// identBefore is the lower-case dotted name just before position i: the
// name of the call whose parenthesis is at i, with its last qualifier
// ("shutil.rmtree" → "shutil.rmtree", "x.y.write" → "y.write").
func identBefore(s string, i int) string {
	j := i
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	k := j
	for k > 0 && (isIdent(s[k-1]) || s[k-1] == '.' || s[k-1] == ':') {
		k--
	}
	name := strings.ToLower(strings.Trim(s[k:j], ".:"))
	name = strings.ReplaceAll(name, "::", ".")
	if parts := strings.Split(name, "."); len(parts) > 2 {
		name = strings.Join(parts[len(parts)-2:], ".")
	}
	return name
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// writeMode reports whether the open call whose parenthesis is at i names
// a mode that writes: a literal of mode letters with w, a, x or +, perl's
// '>' modes, or O_WRONLY, O_RDWR, O_CREAT, O_APPEND, O_TRUNC.
func (t *codeText) writeMode(i int) bool {
	clean := t.clean
	depth, end := 0, len(clean)
	for j := i; j < len(clean) && end == len(clean); j++ {
		switch clean[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				end = j
			}
		}
	}
	for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC", "File::WRITE"} {
		if strings.Contains(clean[i:end], f) {
			return true
		}
	}
	for _, l := range t.lits {
		if l.start <= i || l.start >= end {
			continue
		}
		if v := l.val; modeLit(v) && (strings.ContainsAny(v, "wax+>")) {
			return true
		}
	}
	return false
}

// envUse is how code may use a whole-environment object without printing
// it: an element read or set, or the environment handed to a child.
type envUse struct {
	token  string   // the object, as spelled
	fine   []string // what may follow it: one element
	before []string // what may precede it: handing it on
}

var (
	pyEnv   = envUse{"environ", []string{"[", ".get(", ".setdefault(", ".pop(", ".update(", ".__setitem__(", ".__getitem__("}, []string{"env=", "env ="}}
	nodeEnv = envUse{"process.env", []string{".", "[", "?."}, []string{"env:", "env =", "env="}}
	denoEnv = envUse{"Deno.env", []string{".get(", ".set(", ".has(", ".delete("}, nil}
	rubyEnv = envUse{"ENV", []string{"[", ".fetch(", ".fetch ", ".key?", ".include?", ".has_key?", ".delete(", ".store("}, nil}
	phpEnv  = envUse{"$_ENV", []string{"["}, nil}
	phpSrv  = envUse{"$_SERVER", []string{"["}, nil}
	awkEnv  = envUse{"ENVIRON", []string{"["}, nil}
)

// dumpsEnv reports whether code, for the interpreter named, reads the
// whole environment: os.environ, process.env, %ENV, ENV, $_ENV, ENVIRON
// used other than for one element, getenv() of nothing, phpinfo().
func dumpsEnv(name, src string) bool {
	var uses []envUse
	switch f := name; {
	case pythonName(f):
		uses = []envUse{pyEnv}
	case f == "node" || f == "nodejs" || f == "bun" || f == "deno":
		uses = []envUse{nodeEnv, denoEnv}
	case f == "perl":
		return strings.Contains(src, "%ENV")
	case f == "ruby":
		uses = []envUse{rubyEnv}
	case strings.HasPrefix(f, "php"):
		if strings.Contains(src, "getenv()") || strings.Contains(src, "phpinfo(") {
			return true
		}
		uses = []envUse{phpEnv, phpSrv}
	case strings.HasSuffix(f, "awk"):
		uses = []envUse{awkEnv}
	}
	for _, u := range uses {
		if wholeUse(src, u) {
			return true
		}
	}
	return false
}

// wholeUse reports whether src uses u's object other than as u allows.
func wholeUse(src string, u envUse) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], u.token)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(u.token)
		i = end
		if at > 0 && u.token[0] != '$' && u.token[0] != '.' && (isIdent(src[at-1]) && src[at-1] != '$') {
			continue // part of a longer name
		}
		if u.token == "environ" && end < len(src) && src[end] == 'b' {
			end++ // os.environb, the same in bytes
		}
		if end < len(src) && isIdent(src[end]) {
			continue
		}
		rest, head := src[end:], strings.TrimRight(src[:at], " ")
		if u.token == "environ" {
			head = strings.TrimSuffix(head, "os.")
			head = strings.TrimRight(head, " ")
			if strings.HasSuffix(src[:at], "import ") || strings.HasSuffix(src[:at], "import") {
				continue // from os import environ
			}
		}
		ok := false
		for _, f := range u.fine {
			if strings.HasPrefix(strings.TrimLeft(rest, " "), f) {
				ok = true
			}
		}
		// Handed on whole to a child (env=os.environ), or copied into the
		// environment handed on (env={**os.environ, …}, env: {...process.env},
		// env=dict(os.environ, …)); a copy anywhere else is the whole of it.
		for _, p := range []string{"**", "...", "dict(", "Object.assign({},"} {
			if h, cut := strings.CutSuffix(head, p); cut {
				head = strings.TrimRight(strings.TrimSuffix(strings.TrimRight(h, " "), "{"), " ")
				break
			}
		}
		for _, b := range u.before {
			if strings.HasSuffix(head, strings.TrimRight(b, " ")) {
				ok = true
			}
		}
		if !ok {
			return true
		}
	}
}

// modeLit reports whether a literal is an open mode: letters of r, w, a,
// b, x, t, U and +, or perl's <, >, >>, +<, +>.
func modeLit(v string) bool {
	switch v {
	case "<", ">", ">>", "+<", "+>", "+>>", "<:raw", ">:raw", "<:utf8", ">:utf8", "<:encoding(UTF-8)", ">:encoding(UTF-8)":
		return true
	}
	return v != "" && len(v) <= 4 && strings.Trim(v, "rwabxtU+") == ""
}

// codeUploads reports whether interpreter code (its literals blanked)
// both reads local data (a file, standard input, the environment, a
// directory listing) and sends a request body or socket data: the hosts
// its URLs name then receive local data.
func codeUploads(clean string) bool {
	c := strings.ToLower(clean)
	sends := false
	for _, k := range []string{".post(", ".put(", ".patch(", "method=", "method:", "data=", "files=", "body:", "body=", "sendall(",
		".send(", "upload", "post_form(", "postform(", "curl_setopt(", "http.request(", "https.request("} {
		if strings.Contains(c, k) {
			sends = true
			break
		}
	}
	if !sends {
		return false
	}
	for _, k := range []string{"open(", "read_bytes(", "read_text(", "readfilesync(", "readfile(", "createreadstream(", "file.read(",
		"io.read(", "sys.stdin", "process.stdin", "$stdin", "stdin.read", "os.environ", "process.env", "env[", "fopen(", "file_get_contents(",
		"glob(", "listdir(", "walk(", "readdir", "slurp", "<stdin>", "read()"} {
		if strings.Contains(c, k) {
			return true
		}
	}
	return false
}
