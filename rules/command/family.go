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
	notText = &rule.Reason{Code: "command_not_text", Message: "The command argument is not a string, so veto cannot read it.", Risk: veto.RiskMedium}

	Analyzer = &rule.Info{ID: shell.RuleAnalyzer, Doc: "Refuses a destructive command, and a command the static analyzer cannot vouch for.",
		Risk: veto.RiskHigh, Advice: rule.Off(shell.RuleAnalyzer), Reasons: []*rule.Reason{
			{Code: "git_destructive", Message: "The command discards work git cannot give back (a forced push, a hard reset, a forced clean, ...).", Risk: veto.RiskHigh},
			{Code: "rm_recursive_force", Message: "The command removes a tree recursively outside the places veto knows are scratch.", Risk: veto.RiskCritical},
			{Code: "find_delete", Message: "The command deletes what a find matches.", Risk: veto.RiskHigh},
			{Code: "disk_destroy", Message: "The command writes over a disk or a filesystem.", Risk: veto.RiskCritical},
			{Code: "fetch_to_shell", Message: "The command runs what it downloads.", Risk: veto.RiskCritical},
			{Code: "decode_to_shell", Message: "The command runs what it decodes.", Risk: veto.RiskHigh},
			{Code: "recursive_root_change", Message: "The command changes owners or modes recursively from the root.", Risk: veto.RiskCritical},
			{Code: "crontab_remove", Message: "The command removes the user's crontab.", Risk: veto.RiskHigh},
			{Code: "cannot_vouch", Message: "The command runs code veto cannot see statically.", Risk: veto.RiskMedium},
			{Code: "parse_failed", Message: "The command does not parse as a shell script.", Risk: veto.RiskMedium},
			{Code: "depth_exceeded", Message: "The command nests deeper than shell.max_depth.", Risk: veto.RiskMedium},
			notText,
		}}

	Egress = &rule.Info{ID: "shell.egress", Doc: "Judges every host a command reaches as net.egress judges URLs; a host it cannot determine is refused.",
		Risk: veto.RiskHigh, Advice: rule.Off("shell.egress"), Reasons: egressReasons()}

	EnvDump = &rule.Info{ID: shell.RuleEnvDump, Doc: "Refuses printing the environment, which holds secrets.",
		Risk: veto.RiskHigh, Advice: rule.Off(shell.RuleEnvDump), Reasons: []*rule.Reason{
			{Code: "env_dump", Message: "The command prints the environment, which holds secrets."}}}

	notAllowed  = &rule.Reason{Code: "interpreter_not_allowed", Message: "The command starts an interpreter or shell the policy does not allow."}
	Interpreter = &rule.Info{ID: "exec.interpreter", Doc: "Refuses an interpreter or shell that shell.interpreters does not list.",
		Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "shell.interpreters"}, Reasons: []*rule.Reason{notAllowed}}
)

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
}

// Settings are the shell section's effective settings.
type Settings struct {
	Interpreters   []string // nil: any
	MaxDepth       int      // 0: shell.DefaultMaxDepth
	DefaultTimeout time.Duration
}

// ShellSection is the shell section.
var ShellSection = rule.NewSection("shell", "Parameters of the command rules.", nil, mergeShell)

func init() {
	ShellSection.YAML = func() string {
		return `shell:
  # interpreters: [bash, sh, python3]   # default: any interpreter or shell
  max_depth: 5       # how deeply bash -c, eval, xargs ... may nest
  # default_timeout: 2m               # given to an allowed command that names none
`
	}
	rule.Register(&rule.Family{Name: "command", Order: 10, Rules: []*rule.Info{Analyzer, Egress, EnvDump, Interpreter},
		Sections: []*rule.Section{ShellSection}, Build: build})
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
	if d, ok := rule.Lower(l, eff.DefaultTimeout, time.Duration(f.DefaultTimeout)); ok {
		eff.DefaultTimeout = d
		l.Note("default_timeout", d.String(), "default_timeout")
	}
}

func build(b *rule.Build) error {
	st, err := rule.Settings[Settings](b, ShellSection.Key)
	if err != nil {
		return err
	}
	eg, err := rule.Settings[egress.Settings](b, egress.SectionKey)
	if err != nil {
		return err
	}
	p, err := eg.Compile()
	if err != nil {
		return err
	}
	cmds, err := New(Config{Vars: b.Vars, Interpreters: st.Interpreters, MaxDepth: st.MaxDepth, DefaultTimeout: st.DefaultTimeout, Egress: p})
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
