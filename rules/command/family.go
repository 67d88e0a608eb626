package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/shell"
)

// The command rules, declared once.
var (
	notText = &rule.Reason{Code: "command_not_text", Message: "The command argument is neither text nor a list of words, so veto cannot read it.", Risk: veto.RiskMedium}

	Analyzer = &rule.Info{ID: string(shell.RuleAnalyzer), Doc: "Refuses a destructive command, and a command the static analyzer cannot vouch for.",
		Risk: veto.RiskHigh, Advice: rule.Off(string(shell.RuleAnalyzer)), Reasons: append(findings(shell.RuleAnalyzer), notText)}

	Egress = &rule.Info{ID: "shell.egress", Doc: "Judges every host a command reaches as net.egress judges URLs; a host it cannot determine is refused.",
		Risk: veto.RiskHigh, Advice: rule.Off("shell.egress"), Reasons: egressReasons()}

	EnvDump = &rule.Info{ID: string(shell.RuleEnvDump), Doc: "Refuses printing the environment, which holds secrets.",
		Risk: veto.RiskHigh, Advice: rule.Off(string(shell.RuleEnvDump)), Reasons: findings(shell.RuleEnvDump)}

	notAllowed  = &rule.Reason{Code: "interpreter_not_allowed", Message: "The command starts an interpreter or shell the policy does not allow."}
	Interpreter = &rule.Info{ID: "exec.interpreter", Doc: "Refuses an interpreter or shell that shell.interpreters does not list.",
		Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "shell.interpreters"}, Reasons: []*rule.Reason{notAllowed}}
)

// findingRisk weighs the analyzer's findings; a reason not here has the
// rule's risk.
var findingRisk = map[shell.Reason]veto.Risk{
	shell.GitDestructive: veto.RiskHigh, shell.RmRecursiveForce: veto.RiskCritical, shell.FindDelete: veto.RiskHigh,
	shell.DiskDestroy: veto.RiskCritical, shell.FetchToShell: veto.RiskCritical, shell.DecodeToShell: veto.RiskHigh,
	shell.RecursiveRootChange: veto.RiskCritical, shell.CrontabRemove: veto.RiskHigh, shell.CannotVouch: veto.RiskMedium,
	shell.ArchiveAnywhere: veto.RiskHigh,
	shell.ParseFailed:     veto.RiskMedium, shell.DepthExceeded: veto.RiskMedium,
	shell.PrivilegeEscalation: veto.RiskHigh, shell.SandboxEscape: veto.RiskCritical, shell.LoaderInjection: veto.RiskHigh,
	shell.GitConfigInjection: veto.RiskHigh, shell.StartupInjection: veto.RiskHigh,
}

// findings are the reasons of the shell analyzer's findings for a rule, as
// package shell declares them; a finding's own message says more.
func findings(r shell.Rule) []*rule.Reason {
	var out []*rule.Reason
	for _, f := range shell.Reasons() {
		if f.Rule == r {
			out = append(out, &rule.Reason{Code: string(f.Reason), Message: f.Meaning, Risk: findingRisk[f.Reason]})
		}
	}
	return out
}

func egressReasons() []*rule.Reason {
	var out []*rule.Reason
	for _, v := range egress.Refusals {
		code, msg := v.Reason()
		out = append(out, &rule.Reason{Code: code, Message: msg, Risk: v.Risk()})
	}
	return out
}

// Section is the shell section of a policy file.
type Section struct {
	Interpreters   []string      `yaml:"interpreters" doc:"The only interpreters and shells a command may start (default: any). Later files can only shorten the list."`
	MaxDepth       int           `yaml:"max_depth" doc:"How deeply commands may nest (bash -c, eval, xargs, ...); default 5. Later files can only lower it."`
	DefaultTimeout rule.Duration `yaml:"default_timeout" doc:"A timeout given to an allowed command that names none, as 90s or 2m."`
	Privileged     []string      `yaml:"privileged" doc:"The privileged commands shell.privilege lets through (sudo, su, setcap, a privileged container, mount ...), each written word for word after its wrappers, every word a glob of one word and a last word * standing for any number of words: [\"sudo apt-get update\"]. Only the user's file can add to the list; later files can only shorten it."`
	Privilege      string        `yaml:"privilege" doc:"What shell.privilege does with a privileged command shell.privileged does not list: deny (the default) or ask, a person decides (veto ui, veto serve). Only the user's file can set ask."`
	Exec           string        `yaml:"exec" doc:"What a command the analyzer cannot vouch for gets: supervise (run under veto exec, which decides each program, file and connection as it happens, where the client runs a rewritten call and the kernel can supervise; refused elsewhere) or refuse. Default supervise. Later files can only make it refuse."`
}

// Settings are the shell section's effective settings.
type Settings struct {
	Interpreters   []string // nil: any
	MaxDepth       int      // 0: shell.DefaultMaxDepth
	DefaultTimeout time.Duration
	Privileged     []string // nil: none
	AskPrivilege   bool
	Refuse         bool // shell.exec: refuse
}

// ShellSection is the shell section.
var ShellSection = rule.NewSection("shell", "Parameters of the command rules.", nil, mergeShell)

func init() {
	ShellSection.YAML = func() string {
		return `shell:
  # interpreters: [bash, sh, python3]   # default: any interpreter or shell
  max_depth: 5       # how deeply bash -c, eval, xargs ... may nest
  # default_timeout: 2m               # given to an allowed command that names none
  # privileged: ["sudo apt-get update"] # privileged commands that may run (default: none)
  # privilege: ask                      # a person decides the others (default: deny)
  exec: supervise    # what the analyzer cannot vouch for runs under veto exec, or: refuse
`
	}
	rule.Register(&rule.Family{Name: "command", Order: 10, Rules: []*rule.Info{Analyzer, Egress, EnvDump, Interpreter, Privilege, Injection},
		Sections: []*rule.Section{ShellSection}, Build: build})
}

// The upload and install rules are a family of their own, judged after
// the file rules and the history rules: a command that sends a
// credential, or private material, is refused for that first, by the more
// specific rule.
func init() {
	rule.Register(&rule.Family{Name: "upload", Order: 45, Rules: []*rule.Info{Upload, Install}, Build: buildUpload})
}

// settings are the shell section's effective settings and the compiled
// egress policy, which both command families build from.
func settings(b *rule.Build) (Settings, egress.Policy, error) {
	st, err := rule.Settings[Settings](b, ShellSection.Key)
	if err != nil {
		return Settings{}, egress.Policy{}, err
	}
	eg, err := rule.Settings[egress.Settings](b, egress.SectionKey)
	if err != nil {
		return Settings{}, egress.Policy{}, err
	}
	p, err := eg.Compile()
	if err != nil {
		return Settings{}, egress.Policy{}, err
	}
	return st, p, nil
}

func buildUpload(b *rule.Build) error {
	st, p, err := settings(b)
	if err != nil {
		return err
	}
	cmds, err := New(Config{Vars: b.Vars, MaxDepth: st.MaxDepth, Egress: p})
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, cmds.UploadRules()...)
	return nil
}

func mergeShell(eff *Settings, f *Section, l *rule.Layer) {
	if f.Interpreters != nil {
		rule.Each(l, f.Interpreters, "interpreters", CheckInterpreter)
		eff.Interpreters = rule.Shorten(l, eff.Interpreters, f.Interpreters, nil)
		l.Note("interpreters", strings.Join(f.Interpreters, ", "), "interpreters")
	}
	if f.MaxDepth < 0 {
		l.Bad("shell.max_depth: want a positive number", "max_depth")
	} else if d, ok := rule.Lower(l, eff.MaxDepth, f.MaxDepth); ok {
		eff.MaxDepth = d
		l.Note("max_depth", fmt.Sprint(d), "max_depth")
	}
	switch f.Exec {
	case "":
	case "refuse":
		eff.Refuse = true
		l.Note("exec", "refuse", "exec")
	case "supervise":
		if eff.Refuse {
			l.Bad("shell.exec: an earlier file refuses what the analyzer cannot vouch for; a later one cannot supervise it instead", "exec")
		}
	default:
		l.Bad("shell.exec: want supervise or refuse", "exec")
	}
	if d, ok := rule.Lower(l, eff.DefaultTimeout, time.Duration(f.DefaultTimeout)); ok {
		eff.DefaultTimeout = d
		l.Note("default_timeout", d.String(), "default_timeout")
	}
	if f.Privileged != nil && rule.Each(l, f.Privileged, "privileged", CheckPrivileged) {
		eff.Privileged = rule.Shorten(l, eff.Privileged, f.Privileged, func() []string { return []string{} })
		l.Note("privileged", strings.Join(f.Privileged, ", "), "privileged")
	}
	switch f.Privilege {
	case "":
	case "deny":
		eff.AskPrivilege = false
		l.Note("privilege", f.Privilege, "privilege")
	case "ask":
		if !l.Trusted {
			l.Bad(fmt.Sprintf("shell.privilege: only the user's policy may ask a person about privileged commands, not the %s policy", l.Kind), "privilege")
			break
		}
		eff.AskPrivilege = true
		l.Note("privilege", f.Privilege, "privilege")
	default:
		l.Bad(fmt.Sprintf("shell.privilege: %q is not deny or ask", f.Privilege), "privilege")
	}
}

func build(b *rule.Build) error {
	st, p, err := settings(b)
	if err != nil {
		return err
	}
	cfg := Config{Vars: b.Vars, Interpreters: st.Interpreters, MaxDepth: st.MaxDepth, DefaultTimeout: st.DefaultTimeout, Egress: p,
		Privileged: st.Privileged, AskPrivilege: st.AskPrivilege, Supervising: b.Supervising}
	if !st.Refuse {
		cfg.Supervisor = b.Supervisor
	}
	cmds, err := New(cfg)
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, cmds.Rules()...)
	b.Extractors = append(b.Extractors, cmds.Paths())
	b.Hosts = append(b.Hosts, cmds.Hosts)
	if pt := cmds.Patcher(); pt != nil {
		b.Patchers = append(b.Patchers, pt)
	}
	return nil
}
