// Package shell finds what a shell command would do, statically: every
// command it would run, every file it would read or write, every host it
// would reach, and the destructive operations among them. It parses with
// mvdan.cc/sh/v3/syntax and never executes anything.
//
// The analyzer reports facts and findings; veto's rules decide. Paths are
// reported as written (after the variable expansion it can do), with the
// directory they are relative to, for the file rules to resolve.
package shell

import (
	"io"
	"strings"
	"sync"
	"unsafe"

	"mvdan.cc/sh/v3/syntax"
)

// Env is what a command is analysed in.
type Env struct {
	Cwd  string            // the working directory; "" when unknown
	Vars map[string]string // variables the analyzer may expand: HOME, TMPDIR, USER, …
	// MaxDepth bounds nested shells (bash -c, eval, xargs, find -exec,
	// interpreter one-liners, functions); past it, the command cannot be
	// vouched for. Zero means DefaultMaxDepth.
	MaxDepth int
}

// DefaultMaxDepth is how deeply commands may nest.
const DefaultMaxDepth = 5

// Access is one path a command reads or writes.
type Access struct {
	Path    string // as written, variables expanded; "" when Unknown
	Dir     string // the directory Path is relative to; "" when unknown
	Write   bool
	Unknown bool // the path cannot be known statically
	Removes bool // a recursive removal (forced or not): the path and all below it
	Tree    bool // a recursive read: the path and every file below it (tar, grep -r, cp -r, …)
	Segment int
	// Pattern, for an Unknown path, is the path as far as veto knows it,
	// each part it cannot know as "*", which may stand for several
	// segments ("/proc/*/environ", "*/.aws/credentials"); "" when no part
	// is known.
	Pattern string `json:",omitempty"`
}

// Host is one network destination a command reaches.
type Host struct {
	Host    string // host name or address as written (no scheme, user or port); "" when Unknown
	Unknown bool
	Command string // the program that reaches it
	Segment int
}

// Finding is something the analyzer refuses to vouch for, or knows to be
// destructive. Rule is the veto rule that reports it.
type Finding struct {
	Rule    Rule
	Reason  Reason
	Segment int
	Message string // why, in words; never the command's text
}

// Word is one word of a command as the analyzer evaluated it.
type Word struct {
	Values  []string // the values it may have (a brace expansion has several); nil when Unknown
	Unknown bool     // a part of it cannot be known statically
}

// Command is one simple command the analysis reached, wrappers (env,
// sudo, timeout, bash -c, xargs, ...) unwrapped: the wrapper and the
// command it runs are each a Command. Rules that judge a program by its
// arguments read these rather than parse the text again.
type Command struct {
	Argv    []Word // the program as written (variables expanded), then its arguments
	Dir     string // the directory it runs in; "" when unknown
	Segment int
	// InputArgs: items read from input are added to its arguments (xargs,
	// parallel), so it has arguments veto cannot see.
	InputArgs bool
	// Code: found in an interpreter's code read as shell, a guess.
	Code bool
}

// Report is what Analyze found.
type Report struct {
	Findings []Finding
	Files    []Access
	Hosts    []Host
	Programs []string // every program the command would start, lower-case base names, in order
	// Uploads are the destinations the command sends local data to: files
	// it names (curl -F k=@f, -T, scp, aws s3 cp, …), or a pipeline's or a
	// redirection's local data (tar … | nc host, ssh host < f). Pushes to
	// a remote by name are not among them; a push to a URL is.
	Uploads []Host `json:",omitempty"`
	// Installs are what a package manager installs from other than its
	// registry, the registries it is redirected to, and install-time
	// scripts added to package.json.
	Installs []Install `json:",omitempty"`
	// Commands, Params and Assigned are left out of the JSON form (the
	// golden reports), which they would triple; rules/control's tests pin
	// them.
	Commands []Command `json:"-"`
	// Params are the names of the variables the command expands ($X,
	// ${X:-y}, ${#X}, in any nested script veto analyses), in order, with
	// repeats; Assigned the names it assigns (prefix assignments, env's
	// and export's NAME=value words included).
	Params   []string `json:"-"`
	Assigned []string `json:"-"`
	Segments int      // simple commands seen

	secrets   []string // the secret-named variables expanded so far, in order (noteSecret)
	Recovered bool     // the command only parsed after closing an unterminated quote

	gitEnv *gitEnvState // git configuration given through the environment, paired
	// written is what the command wrote to each file, for a later command
	// of its own that runs one (walkers of every subshell share it: a file
	// outlives the subshell that wrote it).
	written map[string]*written
	// expansions counts the aliases expanded and the written files run,
	// against a command that multiplies them (each runs several others).
	expansions int
	// funcChanges remembers whether each function's body may change the
	// shell's state (changesState).
	funcChanges map[*syntax.Stmt]bool
	// The slabs hand out the small slices an analysis makes by the
	// hundred (a word's values, a command's words), each cut to its
	// length and capacity, so that an append to one never reaches the
	// next; dropped when the analysis ends.
	strSlab  slab[string]
	wordSlab slab[word]
	argSlab  slab[Word]
	cmdSlab  slab[cmd]
	walkers  slab[walker] // forks
	srcLen   int          // the length of the text analysed, for the first lists' capacity
}

// slab is one array cut into small slices. Each new array is as long as
// all handed out before it, from 4 elements to about 4 KB, so a short
// command makes little.
type slab[T any] struct {
	free []T
	made int
}

// take is a fresh slice of length and capacity n.
func (s *slab[T]) take(n int) []T {
	if n > 32 {
		return make([]T, n)
	}
	if len(s.free) < n {
		var zero T
		size := min(max(s.made, 4, n), max(4096/int(unsafe.Sizeof(zero)), 32))
		s.free = make([]T, size)
		s.made += size
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// strs is a fresh []string of length n.
func (r *Report) strs(n int) []string { return r.strSlab.take(n) }

// words is a fresh []word of length 0 and capacity n.
func (r *Report) words(n int) []word { return r.wordSlab.take(n)[:0] }

// argWords is a fresh []Word of length 0 and capacity n.
func (r *Report) argWords(n int) []Word { return r.argSlab.take(n)[:0] }

// newCmd is a fresh cmd.
func (r *Report) newCmd() *cmd { return &r.cmdSlab.take(1)[0] }

func (r *Report) find(rule Rule, reason Reason, seg int, msg string) {
	for _, f := range r.Findings {
		if f.Rule == rule && f.Reason == reason && f.Segment == seg {
			return
		}
	}
	r.Findings = append(r.Findings, Finding{Rule: rule, Reason: reason, Segment: seg, Message: msg})
}

// Analyze analyses src. It never fails: input it cannot parse is a
// finding. An unterminated quote is recovered two ways (closed at the end,
// and dropped) and both readings are judged, strictly.
func Analyze(src string, env Env) *Report {
	if env.MaxDepth == 0 {
		env.MaxDepth = DefaultMaxDepth
	}
	r := &Report{srcLen: len(src)}
	w := newWalker(env, r)
	w.script(src, 0)
	w.gitEnvDone()
	w.procRoots()
	r.gitEnv = nil
	r.funcChanges = nil // keyed by this parse's nodes: of no use past it
	r.strSlab, r.wordSlab, r.argSlab, r.cmdSlab = slab[string]{}, slab[word]{}, slab[Word]{}, slab[cmd]{}
	r.walkers = slab[walker]{}
	return r
}

// parsers keeps bash parsers for reuse: a Parser resets itself at each
// Parse, and the trees it returns share none of its state.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func parseBash(r io.Reader, name string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(r, name)
	parsers.Put(p)
	return f, err
}

// parse parses src; on an unterminated quote it returns the two recovered
// readings.
func parse(src string) (files []*syntax.File, recovered bool, err error) {
	f, err := parseBash(strings.NewReader(src), "")
	if err == nil {
		return []*syntax.File{f}, false, nil
	}
	q, ok := unterminatedQuote(src)
	if !ok {
		return nil, false, err
	}
	for _, alt := range []string{src + string(q.char), src[:q.pos] + src[q.pos+1:]} {
		g, err2 := parseBash(strings.NewReader(alt), "")
		if err2 != nil {
			// Dropping a quote can leave another one open (echo "it's): that
			// one is closed at the end.
			q2, ok := unterminatedQuote(alt)
			if !ok {
				return nil, false, err
			}
			if g, err2 = parseBash(strings.NewReader(alt+string(q2.char)), ""); err2 != nil {
				return nil, false, err
			}
		}
		files = append(files, g)
	}
	return files, true, nil
}

type quotePos struct {
	char byte
	pos  int
}

// unterminatedQuote finds a quote that is opened and never closed, as a
// shell reads quotes (backslashes escape outside single quotes).
func unterminatedQuote(src string) (quotePos, bool) {
	var open byte
	at := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case open == 0 && c == '\\':
			i++
		case open == 0 && (c == '\'' || c == '"'):
			open, at = c, i
		case open == '"' && c == '\\':
			i++
		case open != 0 && c == open:
			open = 0
		}
	}
	return quotePos{open, at}, open != 0
}
