package shell

// Loader and start-up injection: variables that make the dynamic loader
// load a library, make git run a program or read configuration, or make a
// shell or an interpreter load code when it starts. They are findings of
// RuleInjection; a program git is told to run through the environment is
// judged as the command it is, as git -c's is (gitConfigValue).

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// gitEnvState pairs GIT_CONFIG_KEY_n with GIT_CONFIG_VALUE_n across the
// assignments of one analysis.
type gitEnvState struct {
	keys map[string]word
	vals map[string]word
}

// gitProgramVars are the variables whose value git runs as a command (or,
// GIT_SSH, as a program): each is the -c key it stands for.
var gitProgramVars = map[string]bool{"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_PAGER": true, "GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "BROWSER": true, "RSYNC_RSH": true,
	"PROMPT_COMMAND": true}

// generalProgramVars are the program variables every program reads, which
// dotfiles set from one another: one veto cannot see is the user's own.
var generalProgramVars = map[string]bool{"EDITOR": true, "VISUAL": true, "PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true,
	"BROWSER": true, "RSYNC_RSH": true, "PROMPT_COMMAND": true}

// startupEnv judges an assignment of name to x, whether for one command,
// exported or through env: it holds for what the command starts.
func (w *walker) startupEnv(name string, x word, depth int) {
	if w.code && w.inPrint {
		return
	}
	switch {
	case name == "LD_PRELOAD" || name == "LD_AUDIT" || name == "DYLD_INSERT_LIBRARIES":
		x = ownValue(name, x)
		if x.unknown {
			w.r.find(RuleInjection, LoaderInjection, w.r.Segments, "The command makes the dynamic loader load libraries veto cannot see.")
			return
		}
		for _, v := range x.vals {
			for _, lib := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' }) {
				if !systemLibrary(lib) {
					w.r.find(RuleInjection, LoaderInjection, w.r.Segments, "The command makes the dynamic loader load a library from outside the system's library directories.")
					return
				}
			}
		}
	case gitProgramVars[name]:
		x = ownValue(name, x)
		if x.unknown && generalProgramVars[name] {
			return
		}
		if x.unknown {
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git or a program it starts is told to run a command veto cannot see.")
			return
		}
		for _, v := range x.vals {
			if strings.TrimSpace(v) != "" {
				w.fork().script(v, depth+1)
			}
		}
	case name == "LESSOPEN" || name == "LESSCLOSE" || name == "PS4":
		// less runs its input preprocessor ("|cmd %s"); bash -x expands
		// PS4, command substitutions included, before every command.
		x = ownValue(name, x)
		if x.unknown {
			w.r.find(RuleInjection, StartupInjection, w.r.Segments, "A program is told to run a command veto cannot see.")
			return
		}
		for _, v := range x.vals {
			switch name {
			case "PS4":
				w.fork().script(": "+v, depth+1)
			default:
				if v = strings.TrimLeft(v, "|-"); strings.TrimSpace(v) != "" {
					w.fork().script(strings.ReplaceAll(v, "%s", "file"), depth+1)
				}
			}
		}
	case strings.HasPrefix(name, "BASH_FUNC_"):
		// A function bash imports from the environment: its body runs when
		// the function is called.
		if x.unknown {
			w.r.find(RuleInjection, StartupInjection, w.r.Segments, "A shell is given a function veto cannot see.")
			return
		}
		for _, v := range x.vals {
			w.fork().script(strings.TrimPrefix(strings.TrimSpace(v), "()"), depth+1)
		}
	case name == "GIT_CONFIG_PARAMETERS":
		x = ownValue(name, x)
		if x.unknown {
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is given configuration through the environment that veto cannot see.")
			return
		}
		for _, v := range x.vals {
			for _, kv := range sqWords(v) {
				key, val, _ := strings.Cut(kv, "=")
				w.gitEnvConfig(key, lit(val), depth)
			}
		}
	case name == "GIT_CONFIG_COUNT":
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"), strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		n, isKey := strings.CutPrefix(name, "GIT_CONFIG_KEY_")
		if !isKey {
			n = strings.TrimPrefix(name, "GIT_CONFIG_VALUE_")
		}
		if _, err := strconv.Atoi(n); err != nil {
			return
		}
		g := w.gitEnv()
		if isKey {
			g.keys[n] = x
		} else {
			g.vals[n] = x
		}
		// Judged at each change, with the other half's latest value.
		key, hasKey := g.keys[n]
		val, hasVal := g.vals[n]
		if hasKey && hasVal {
			if key.unknown {
				w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is given configuration through the environment that veto cannot see.")
				return
			}
			for _, k := range key.vals {
				w.gitEnvConfig(k, val, depth)
			}
		}
	case name == "GIT_CONFIG_GLOBAL" || name == "GIT_CONFIG_SYSTEM" || name == "GIT_CONFIG":
		if x.unknown || !allValues(x, func(v string) bool { return v == "" || v == "/dev/null" }) {
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is told to read its configuration from a file veto does not vouch for.")
		}
	case name == "GIT_EXEC_PATH" || name == "GIT_TEMPLATE_DIR":
		if x.unknown || !allValues(x, func(v string) bool {
			return v == "" || strings.HasPrefix(path.Clean(v), "/usr/lib/git-core") || strings.HasPrefix(path.Clean(v), "/usr/libexec/git-core") ||
				strings.HasPrefix(path.Clean(v), "/usr/share/git-core")
		}) {
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is told to run its programs or copy hooks from a place veto does not vouch for.")
		}
	case name == "BASH_ENV" || name == "ENV":
		x = ownValue(name, x)
		if x.unknown || !allValues(x, func(v string) bool {
			return v == "" || v == "/dev/null" || name == "ENV" && !strings.ContainsAny(v, "/~")
		}) {
			w.r.find(RuleInjection, StartupInjection, w.r.Segments, "A shell is told to read a file of commands when it starts.")
		}
	case name == "NODE_OPTIONS" || name == "PERL5OPT" || name == "RUBYOPT" || name == "JAVA_TOOL_OPTIONS" || name == "_JAVA_OPTIONS" || name == "JDK_JAVA_OPTIONS":
		x = ownValue(name, x)
		if x.unknown || !allValues(x, func(v string) bool { return !loadsCode(name, v) }) {
			w.r.find(RuleInjection, StartupInjection, w.r.Segments, "An interpreter is told to load code when it starts.")
		}
	}
}

// loadsCode reports whether an interpreter's options variable loads code.
func loadsCode(name, v string) bool {
	for _, f := range strings.Fields(v) {
		switch name {
		case "NODE_OPTIONS":
			for _, o := range []string{"-r", "--require", "--import", "--loader", "--experimental-loader"} {
				if f == o || strings.HasPrefix(f, o+"=") || (o == "-r" && len(f) > 2 && strings.HasPrefix(f, "-r")) {
					return true
				}
			}
		case "PERL5OPT":
			f = strings.TrimLeft(f, "-")
			if strings.HasPrefix(f, "M") || strings.HasPrefix(f, "m") || strings.HasPrefix(f, "d") {
				return true
			}
		case "RUBYOPT":
			if strings.HasPrefix(f, "-r") || strings.HasPrefix(f, "--require") {
				return true
			}
		default:
			if strings.HasPrefix(f, "-javaagent") || strings.HasPrefix(f, "-agentpath") || strings.HasPrefix(f, "-agentlib") {
				return true
			}
		}
	}
	return false
}

// gitEnvConfig judges key=val given to git through the environment as
// git -c judges it: a value git runs is analysed as a script, an alias as
// the git command or script it is; hooks, includes and helpers veto cannot
// read are git_config_injection.
func (w *walker) gitEnvConfig(key string, val word, depth int) {
	lkey := strings.ToLower(key)
	if !gitCodeKey(lkey) {
		return
	}
	if val.unknown {
		w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is given configuration through the environment that veto cannot see.")
		return
	}
	for _, v := range val.vals {
		switch {
		case strings.HasPrefix(lkey, "alias."):
			if script, ok := strings.CutPrefix(v, "!"); ok {
				w.fork().script(script, depth+1)
			} else {
				w.fork().script("git "+v, depth+1)
			}
		case lkey == "core.hookspath" && (v == "/dev/null" || v == ""):
		case gitShellKey(lkey):
			w.fork().script(v, depth+1)
		case strings.HasPrefix(v, "!"):
			w.fork().script(v[1:], depth+1)
		case (lkey == "credential.helper" || strings.HasPrefix(lkey, "credential.") && strings.HasSuffix(lkey, ".helper")) &&
			!strings.ContainsAny(v, "/ \t"):
		default:
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is told through the environment to run hooks, helpers or configuration from a place veto does not vouch for.")
		}
	}
}

func (w *walker) gitEnv() *gitEnvState {
	if w.r.gitEnv == nil {
		w.r.gitEnv = &gitEnvState{keys: map[string]word{}, vals: map[string]word{}}
	}
	return w.r.gitEnv
}

// gitEnvDone judges, at the end of an analysis, each GIT_CONFIG_KEY_n
// whose GIT_CONFIG_VALUE_n the command never set: its value comes from an
// environment veto cannot see.
func (w *walker) gitEnvDone() {
	g := w.r.gitEnv
	if g == nil {
		return
	}
	for n, key := range g.keys {
		if _, ok := g.vals[n]; ok {
			continue
		}
		if key.unknown || !allValues(key, func(k string) bool { return !gitCodeKey(k) }) {
			w.r.find(RuleInjection, GitConfigInjection, w.r.Segments, "git is given configuration through the environment that veto cannot see.")
			return
		}
	}
}

// systemLibrary reports whether a library to preload is in the system's
// library directories, which only root writes.
func systemLibrary(lib string) bool {
	if !strings.HasPrefix(lib, "/") {
		return false
	}
	lib = path.Clean(lib)
	for _, d := range []string{"/usr/lib/", "/usr/lib64/", "/usr/lib32/", "/lib/", "/lib64/", "/lib32/"} {
		if strings.HasPrefix(lib, d) {
			return true
		}
	}
	return false
}

func allValues(x word, ok func(string) bool) bool {
	for _, v := range x.vals {
		if !ok(v) {
			return false
		}
	}
	return true
}

// ownValue is x with each plain expansion of the variable itself
// ($NODE_OPTIONS, ${NODE_OPTIONS}) read as empty: a command that adds to
// the value it inherits is judged by what it adds. Any other part veto
// cannot see leaves x unknown.
func ownValue(name string, x word) word {
	if !x.unknown || x.src == nil {
		return x
	}
	var b strings.Builder
	var walk func(parts []syntax.WordPart) bool
	walk = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch q := p.(type) {
			case *syntax.Lit:
				b.WriteString(q.Value)
			case *syntax.SglQuoted:
				b.WriteString(q.Value)
			case *syntax.DblQuoted:
				if !walk(q.Parts) {
					return false
				}
			case *syntax.ParamExp:
				if q.Param == nil || q.Param.Value != name || q.Exp != nil || q.Repl != nil || q.Slice != nil || q.Index != nil ||
					q.Length || q.Width || q.Excl || q.Names != 0 {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	if !walk(x.src.Parts) {
		return x
	}
	return lit(b.String())
}

// sqWords splits GIT_CONFIG_PARAMETERS, git's list of single-quoted
// key=value entries ('core.pager=less' or 'core.pager'='less').
func sqWords(s string) []string {
	var out []string
	var b strings.Builder
	in, any := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\'':
			in = false
		case in:
			b.WriteByte(c)
		case c == '\'':
			in, any = true, true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			any = true
		case c == ' ' || c == '\t' || c == '\n':
			if any {
				out = append(out, b.String())
				b.Reset()
				any = false
			}
		default:
			b.WriteByte(c)
			any = true
		}
	}
	if any {
		out = append(out, b.String())
	}
	return out
}
