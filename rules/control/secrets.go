package control

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/vetohq/veto/shell"
)

// isVetoVar reports whether a variable is one of veto's own: VETO_*. All
// are refused to the agent, not only those named like secrets: veto's
// variables configure the gate (its state, socket, server, token), none
// is the agent's business.
func isVetoVar(name string) bool { return strings.HasPrefix(strings.ToUpper(name), "VETO_") }

// envReaders are programs whose arguments name variables they print, or
// hold code that may read the environment.
var envReaders = []string{"printenv", "env", "declare", "typeset", "export", "getent",
	"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit",
	"awk", "gawk", "mawk", "nawk", "jq", "osascript", "pwsh", "powershell", "tclsh", "rscript", "sed"}

// readsVetoEnv reports whether a command reads a VETO_* variable other
// than by expansion: printenv VETO_TOKEN, an interpreter's code naming
// one, or a dump of the environment filtered for veto's (env | grep VETO).
func readsVetoEnv(rep *shell.Report) bool {
	dump := false
	for _, f := range rep.Findings {
		if f.Rule == shell.RuleEnvDump {
			dump = true
		}
	}
	for _, c := range rep.Commands {
		prog := programName(c)
		reader := slices.Contains(envReaders, prog) || strings.HasPrefix(prog, "python")
		for _, a := range c.Argv[1:] {
			for _, v := range a.Values {
				up := strings.ToUpper(v)
				if reader && strings.Contains(up, "VETO_") && !assigns(prog, v) {
					return true
				}
				if dump && strings.Contains(up, "VETO") {
					return true
				}
			}
		}
	}
	return false
}

// assigns reports whether an argument of env, export or declare sets a
// variable (VETO_X=1) rather than reading one.
func assigns(prog, arg string) bool {
	switch prog {
	case "env", "export", "declare", "typeset":
		name, _, ok := strings.Cut(arg, "=")
		return ok && !strings.ContainsAny(name, " $")
	}
	return false
}

// programName is a command's program as a lower-case base name, "" when
// unknown.
func programName(c shell.Command) string {
	if len(c.Argv) == 0 || c.Argv[0].Unknown || len(c.Argv[0].Values) == 0 {
		return ""
	}
	return strings.ToLower(path.Base(c.Argv[0].Values[0]))
}

// preloads reports whether the command gives a program a library to load
// first (LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES).
func preloads(rep *shell.Report) bool {
	for _, n := range rep.Assigned {
		switch n {
		case "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH":
			return true
		}
	}
	return false
}

// vetoProcesses are command lines of veto's processes a name or pattern
// is tried on.
var vetoProcesses = []string{"veto", "veto-hook", "veto serve-hooks", "veto serve --listen 127.0.0.1:8181", "veto ui",
	"veto mcp", "veto hook claude-code", "/usr/local/bin/veto serve-hooks --idle 30m"}

// signalsVeto reports whether the command signals processes chosen by a
// name or pattern matching veto's (pkill veto, killall veto-hook, pkill -f
// serve-hooks), or kills processes it finds at run time while naming veto
// (kill $(pgrep veto), pgrep veto | xargs kill).
func signalsVeto(rep *shell.Report) bool {
	mentions, killsUnseen := false, false
	for _, c := range rep.Commands {
		prog := programName(c)
		switch prog {
		case "pkill", "killall", "skill", "snice", "pgrep", "pidof", "grep", "egrep", "fgrep", "rg":
			for _, a := range c.Argv[1:] {
				if a.Unknown {
					continue
				}
				for _, v := range a.Values {
					if !strings.HasPrefix(v, "-") && matchesVeto(v, prog) {
						if prog == "pkill" || prog == "killall" || prog == "skill" || prog == "snice" {
							return true
						}
						mentions = true
					}
				}
			}
		case "kill":
			for _, a := range c.Argv[1:] {
				if a.Unknown {
					killsUnseen = true
				}
			}
			killsUnseen = killsUnseen || c.InputArgs
		case "xargs", "parallel":
			for _, a := range c.Argv[1:] {
				if slices.Contains(a.Values, "kill") || slices.Contains(a.Values, "pkill") {
					killsUnseen = true
				}
			}
		}
	}
	return mentions && killsUnseen
}

// matchesVeto reports whether a process name or pattern may select one
// of veto's processes: it is a regular expression (as pkill and pgrep
// read it) that matches one of their command lines, or one that does not
// compile, which veto cannot judge.
func matchesVeto(pat, prog string) bool {
	if strings.Contains(strings.ToLower(pat), "veto") {
		return true
	}
	if prog == "killall" || prog == "pidof" {
		return false // exact names
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return true
	}
	for _, p := range vetoProcesses {
		if re.MatchString(p) {
			return true
		}
	}
	return false
}
