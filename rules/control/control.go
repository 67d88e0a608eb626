package control

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/shell"
	"github.com/vetohq/veto/toolpath"
)

// Config is where veto.control finds veto. The zero value finds it from
// this process: its home, its environment, its executable.
type Config struct {
	Home string            // "" : $HOME
	Vars map[string]string // the shell analyzer's variables; nil: HOME, TMPDIR, USER from the environment
	// Getenv reads the environment veto's own locations come from
	// (XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR, VETO_STATE,
	// VETO_SOCKET, VETO_MANAGED_POLICY, CODEX_HOME, PATH); nil: os.Getenv.
	Getenv     func(string) string
	Executable string // this veto; "" : os.Executable
	FS         toolpath.FS
	LookupHome func(name string) (string, error)
	// Addresses and Binaries are the policy's additions (control section).
	Addresses []string
	Binaries  []string
	// RecordDir is where listeners are recorded (Listening); "" : the
	// socket directory.
	RecordDir string
}

// Set is veto.control, built from a Config. It is the rule itself.
type Set struct {
	home     string
	vars     map[string]string
	varsID   string // shell.VarsID(vars): the analysis is shared with the command rules
	getenv   func(string) string
	fs       toolpath.FS
	lookup   func(string) (string, error)
	places   places
	path     []string // PATH's directories, for programs named without a directory
	records  string
	extra    []address
	self     string   // this veto, resolved ("" when unknown)
	binaries []string // veto binaries, resolved: this one, its siblings, the policy's, PATH's

	registered     sync.Once // the binaries the clients' settings register, read on first need
	registeredBins []string

	// What the socket directory's records name (recorded), as last read.
	recMu                sync.Mutex
	recKey               string
	recAt                time.Time
	recPolicy, recSecret []string
}

// New builds veto.control from cfg.
func New(cfg Config) (*Set, error) {
	s := &Set{home: cfg.Home, vars: cfg.Vars, getenv: cfg.Getenv, fs: cfg.FS, lookup: cfg.LookupHome, records: cfg.RecordDir}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if s.home == "" {
		s.home, _ = os.UserHomeDir()
	}
	if s.vars == nil {
		s.vars = map[string]string{"TMPDIR": "/tmp"}
		for _, k := range []string{"HOME", "TMPDIR", "USER"} {
			if v := s.getenv(k); v != "" {
				s.vars[k] = v
			}
		}
	}
	s.varsID = shell.VarsID(s.vars)
	if s.records == "" {
		s.records = SocketDir(s.getenv)
	}
	for _, a := range cfg.Addresses {
		ad, err := parseAddress(a)
		if err != nil {
			return nil, fmt.Errorf("control: %w", err)
		}
		s.extra = append(s.extra, ad)
	}
	s.path = splitPath(s.getenv("PATH"))
	exe := cfg.Executable
	if exe == "" {
		exe, _ = os.Executable()
	}
	s.findBinaries(exe, cfg.Binaries)
	s.places = s.locate()
	return s, nil
}

// Info implements veto.Rule.
func (s *Set) Info() veto.RuleInfo { return Control.RuleInfo() }

// Check implements veto.Rule: the call's commands, then its files, then
// where it connects.
func (s *Set) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	reps := s.analyze(in)
	if len(reps) == 0 {
		reps = []*shell.Report{nil} // no command: the files and endpoints of the arguments
	}
	for _, rep := range reps {
		if d, deny := s.check(in, rep); deny {
			return d, nil
		}
	}
	return veto.Allow(), nil
}

// check judges the call with one of its commands (rep; nil for none).
func (s *Set) check(in *veto.Input, rep *shell.Report) (veto.Decision, bool) {
	if rep != nil {
		if d, deny := s.checkCommands(in, rep); deny {
			return d, true
		}
	}
	if d, deny := s.checkFiles(in, rep); deny {
		return d, true
	}
	return s.checkEndpoints(in, rep)
}

type memoKey struct{ s *Set }

// analyze is the shell analysis of the call's commands, once per
// decision: one report for each argument with the command role, in any
// letter case (veto.Descriptor.ArgsWith; a call spelling it twice runs one
// of them, veto cannot tell which). None when the call runs none (or its
// command is not text, which the command rules refuse).
func (s *Set) analyze(in *veto.Input) []*shell.Report {
	v := in.Memo(memoKey{s}, func() any {
		var reps []*shell.Report
		for _, arg := range in.Descriptor.ArgsWith(in.Call.Args, veto.RoleCommand) {
			if src, ok := shell.CommandText(arg.Value); ok {
				env := shell.Env{Cwd: callDir(in.Call), Vars: s.vars}
				reps = append(reps, in.Memo(shell.KeyOf(src, env, s.varsID), func() any { return shell.Analyze(src, env) }).(*shell.Report))
			}
		}
		return reps
	})
	return v.([]*shell.Report)
}

func callDir(c *veto.Call) string {
	if c.Cwd != "" {
		return c.Cwd
	}
	return c.Workspace
}

// checkCommands judges each command the analysis found: veto itself, a
// secret read, a signal to veto.
func (s *Set) checkCommands(in *veto.Input, rep *shell.Report) (veto.Decision, bool) {
	for _, name := range rep.Params {
		if isVetoVar(name) {
			return vetoSecret.Deny(), true
		}
	}
	var lk look
	for _, c := range rep.Commands {
		if d, deny := s.checkVeto(in, rep, c, &lk); deny {
			return d, true
		}
	}
	if readsVetoEnv(rep) {
		return vetoSecret.Deny(), true
	}
	if signalsVeto(rep) {
		return vetoSignal.Deny(), true
	}
	if drivesTerminal(rep) {
		return vetoTerminal.Deny(), true
	}
	return veto.Decision{}, false
}

// env is the path environment of a directory.
func (s *Set) env(dir string) toolpath.Env {
	return toolpath.Env{Cwd: dir, Home: s.home, LookupHome: s.lookup, FS: s.fs}
}
