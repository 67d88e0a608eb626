// Package command holds the rules for tools that run shell commands
// (Claude Code's Bash, Gemini CLI's run_shell_command, MCP shell tools):
// one analysis by package shell, judged in order — the analyzer's own
// verdict (destructive operations, what it cannot vouch for), network
// egress by command, environment dumps, the interpreters a command may
// start — and the paths it touches handed to the file rules.
package command

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/shell"
)

// Config sets the command rules' parameters. The zero value is the
// default.
type Config struct {
	// Vars are the variables the analyzer may expand; nil means HOME,
	// TMPDIR (default /tmp) and USER from this process's environment.
	Vars map[string]string
	// Interpreters, when not nil, are the only interpreters and shells a
	// command may start (exec.interpreter). Nil allows every one.
	Interpreters []string
	// MaxDepth bounds nesting (bash -c, eval, xargs, …); zero means
	// shell.DefaultMaxDepth.
	MaxDepth int
	// DefaultTimeout, when set, is added to an allowed command that names
	// no timeout, in TimeoutParam (default "timeout", in milliseconds as
	// Claude Code's Bash takes it).
	DefaultTimeout time.Duration
	TimeoutParam   string
	// Egress is the egress mode and allow-list shell.egress judges hosts
	// by; the zero value is open mode.
	Egress egress.Policy
	// Privileged are the privileged commands shell.privilege lets through
	// (CheckPrivileged); AskPrivilege makes it ask a person about the
	// others rather than refuse them.
	Privileged   []string
	AskPrivilege bool
	// Supervisor, when set, is the command line that runs a command under
	// veto exec (rule.Build's): a command the analyzer cannot vouch for
	// is then allowed rewritten to run under it, where the client runs
	// rewritten calls (veto.Call.Rewrites). Nil refuses it, as shell.exec:
	// refuse does.
	Supervisor []string
	// Supervising: the rules decide for veto exec, each program as it
	// starts; what the analysis cannot see is decided as it happens.
	Supervising bool
}

// Set is the command rules, compiled from a Config.
type Set struct {
	vars         map[string]string
	interpreters map[string]bool
	maxDepth     int
	varsID       string // shell.VarsID(vars): the analysis is shared with other families
	timeout      time.Duration
	timeoutParam string
	egress       egress.Policy
	privileged   [][]string // shell.privileged, each split into words
	askPrivilege bool
	supervisor   []string
	supervising  bool
}

// New compiles cfg.
func New(cfg Config) (*Set, error) {
	s := &Set{vars: cfg.Vars, maxDepth: cfg.MaxDepth, timeout: cfg.DefaultTimeout, timeoutParam: cfg.TimeoutParam, egress: cfg.Egress,
		askPrivilege: cfg.AskPrivilege,
		supervisor:   slices.Clone(cfg.Supervisor), supervising: cfg.Supervising}
	for _, p := range cfg.Privileged {
		if err := CheckPrivileged(p); err != nil {
			return nil, fmt.Errorf("command: %w", err)
		}
		s.privileged = append(s.privileged, strings.Fields(p))
	}
	if s.vars == nil {
		s.vars = map[string]string{"TMPDIR": "/tmp"}
		for _, k := range []string{"HOME", "TMPDIR", "USER"} {
			if v := os.Getenv(k); v != "" {
				s.vars[k] = v
			}
		}
	}
	s.varsID = shell.VarsID(s.vars)
	if cfg.Interpreters != nil {
		s.interpreters = map[string]bool{}
		for _, i := range cfg.Interpreters {
			if err := CheckInterpreter(i); err != nil {
				return nil, fmt.Errorf("command: %w", err)
			}
			s.interpreters[strings.ToLower(i)] = true
		}
	}
	if s.timeoutParam == "" {
		s.timeoutParam = "timeout"
	}
	if s.timeout < 0 {
		return nil, fmt.Errorf("command: negative default timeout")
	}
	return s, nil
}

// CheckInterpreter says what is wrong with an interpreter's name: it is a
// program name, as python3, without a directory.
func CheckInterpreter(name string) error {
	if name == "" || strings.ContainsAny(name, "/ ") {
		return fmt.Errorf("interpreter %q must be a program name, as python3", name)
	}
	return nil
}

// Rules returns the command rules in the order they run.
func (s *Set) Rules() []veto.Rule {
	return []veto.Rule{&analyzer{s}, &shellEgress{s}, &envDump{s}, &interpreter{s}, &privilege{s}, &injection{s}}
}

// UploadRules returns shell.upload and shell.install, which the upload
// family runs after the file and history rules.
func (s *Set) UploadRules() []veto.Rule { return []veto.Rule{&upload{s}, &install{s}} }

// Paths returns the extractor that hands a command's paths to the file
// rules.
func (s *Set) Paths() veto.PathExtractor { return paths{s} }

// Patcher returns the patcher of the command rules: the default timeout,
// and the rewrite of a command to run under veto exec; nil when neither
// is set.
func (s *Set) Patcher() veto.Patcher {
	if s.timeout == 0 && s.supervisor == nil {
		return nil
	}
	return patcher{s}
}

type analysis struct {
	report *shell.Report // nil: the call runs no command
	bad    bool          // the command argument is neither text nor an argument vector
}

// analyze finds the call's command and analyses it once per decision.
// The command is every argument with the command role, in any letter case
// (veto.Descriptor.ArgsWith): when a call spells it twice ("command" and
// "COMMAND"), the tool runs one of them and veto cannot tell which, so the
// rules judge both, as one report of everything either would do.
func (s *Set) analyze(in *veto.Input) *analysis {
	return in.Memo(s, func() any {
		args := in.Descriptor.ArgsWith(in.Call.Args, veto.RoleCommand)
		cwd := in.Call.Cwd
		if cwd == "" {
			cwd = in.Call.Workspace
		}
		a := &analysis{}
		for _, arg := range args {
			// A command given as an argument vector (Codex's shell) is that
			// program with those words.
			src, isString := shell.CommandText(arg.Value)
			if !isString {
				return &analysis{bad: true}
			}
			env := shell.Env{Cwd: cwd, Vars: s.vars, MaxDepth: s.maxDepth}
			rep := in.Memo(shell.KeyOf(src, env, s.varsID), func() any { return shell.Analyze(src, env) }).(*shell.Report)
			if a.report == nil {
				a.report = rep
				continue
			}
			a.report = &shell.Report{
				Findings: append(slices.Clone(a.report.Findings), rep.Findings...),
				Files:    append(slices.Clone(a.report.Files), rep.Files...),
				Hosts:    append(slices.Clone(a.report.Hosts), rep.Hosts...),
				Uploads:  append(slices.Clone(a.report.Uploads), rep.Uploads...),
				Installs: append(slices.Clone(a.report.Installs), rep.Installs...),
				Programs: append(slices.Clone(a.report.Programs), rep.Programs...),
				Segments: a.report.Segments + rep.Segments,
			}
		}
		return a
	}).(*analysis)
}

func deny(f shell.Finding) veto.Decision { return veto.Deny(string(f.Reason), f.Message) }

// analyzer is the analyzer's own verdict: a destructive operation, or a
// command it cannot vouch for (unparsable, too deep, dynamic).
type analyzer struct{ s *Set }

func (r *analyzer) Info() veto.RuleInfo { return Analyzer.RuleInfo() }

func (r *analyzer) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	if a.bad {
		return notText.Deny(), nil
	}
	if a.report == nil {
		return veto.Allow(), nil
	}
	sup := r.s.canSupervise(in)
	for _, f := range a.report.Findings {
		if f.Rule == shell.RuleAnalyzer && !(sup && unseen(f.Reason)) {
			return deny(f), nil
		}
	}
	return veto.Allow(), nil
}

// envDump denies printing the environment, which holds secrets.
type envDump struct{ s *Set }

func (r *envDump) Info() veto.RuleInfo { return EnvDump.RuleInfo() }

func (r *envDump) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	if a := r.s.analyze(in); a.report != nil {
		for _, f := range a.report.Findings {
			if f.Rule == shell.RuleEnvDump {
				return deny(f), nil
			}
		}
	}
	return veto.Allow(), nil
}

// knownInterpreters are the programs exec.interpreter governs.
var knownInterpreters = []string{"bash", "sh", "zsh", "dash", "ksh", "fish", "ash", "mksh", "csh", "tcsh", "yash",
	"node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "luajit", "rscript", "tclsh", "osascript", "pwsh", "powershell"}

func isInterpreter(p string) bool {
	return slices.Contains(knownInterpreters, p) || strings.HasPrefix(p, "python") || strings.HasPrefix(p, "pypy")
}

// interpreter denies starting an interpreter or shell the policy does not
// list.
type interpreter struct{ s *Set }

func (r *interpreter) Info() veto.RuleInfo { return Interpreter.RuleInfo() }

func (r *interpreter) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	if r.s.interpreters == nil {
		return veto.Allow(), nil
	}
	a := r.s.analyze(in)
	if a.report == nil {
		return veto.Allow(), nil
	}
	for _, p := range a.report.Programs {
		if isInterpreter(p) && !r.s.interpreters[p] {
			return notAllowed.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

type paths struct{ s *Set }

func (p paths) Paths(_ context.Context, in *veto.Input) ([]veto.PathUse, error) {
	a := p.s.analyze(in)
	if a.report == nil {
		return nil, nil
	}
	out := make([]veto.PathUse, 0, len(a.report.Files))
	// Under veto exec each open is decided on the path the kernel
	// resolves: a path the analysis cannot know is decided then.
	sup := p.s.supervising || p.s.supervised(in)
	for _, f := range a.report.Files {
		if sup && f.Unknown {
			continue
		}
		out = append(out, veto.PathUse{Path: f.Path, Dir: f.Dir, Write: f.Write, Unknown: f.Unknown, Removes: f.Removes, Tree: f.Tree,
			Pattern: f.Pattern})
	}
	return out, nil
}

type patcher struct{ s *Set }

func (t patcher) Patch(_ context.Context, in *veto.Input, args map[string]any) (map[string]any, bool, error) {
	if len(in.Descriptor.ParamsWith(veto.RoleCommand)) == 0 {
		return args, false, nil
	}
	supervised := t.s.supervised(in)
	if supervised {
		for _, arg := range in.Descriptor.ArgsWith(args, veto.RoleCommand) {
			src, _ := arg.Value.(string)
			args[arg.Key] = t.s.underExec(in.Call.Run.Ref, src)
		}
	}
	if t.s.timeout == 0 {
		return args, supervised, nil
	}
	for k := range args {
		if strings.EqualFold(k, t.s.timeoutParam) {
			return args, supervised, nil // the call sets it, in whatever case the tool reads
		}
	}
	args[t.s.timeoutParam] = t.s.timeout.Milliseconds()
	return args, true, nil
}
