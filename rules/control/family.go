package control

import (
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
)

// The reasons veto.control gives. Each message names what was refused and
// why; "%s" takes only words of veto's own (a subcommand from the table, a
// kind of file), never the call's text.
var (
	vetoCommand = &rule.Reason{Code: "veto_command", Risk: veto.RiskCritical,
		Message: "The call runs veto's own command %q, which changes what veto decides or records (policy, state, registration, tokens, approvals, pins, egress or its servers); only a person may run it, outside the agent."}
	vetoUnknown = &rule.Reason{Code: "veto_command_unknown", Risk: veto.RiskHigh,
		Message: "The call runs veto with a subcommand veto does not know to be read-only, or one it cannot read statically; only a person may run it, outside the agent."}
	vetoHook = &rule.Reason{Code: "veto_hook_forged", Risk: veto.RiskCritical,
		Message: "The call runs veto's hook itself (veto-hook, or veto hook), which only the agent's client may run: a hook event from the agent is a forged one."}
	vetoFiles = &rule.Reason{Code: "veto_files_write", Risk: veto.RiskCritical,
		Message: "%s writes or removes veto's own files (%s), which only a person may change, wherever they lie."}
	vetoState = &rule.Reason{Code: "veto_state_read", Risk: veto.RiskHigh,
		Message: "%s reads veto's %s, which holds what veto recorded and the questions waiting for a person; read it with veto log or veto state check."}
	vetoPreload = &rule.Reason{Code: "veto_preload", Risk: veto.RiskCritical,
		Message: "The call writes the dynamic loader's preload list, or gives veto a library to preload, which would run code inside veto."}
	vetoEndpoint = &rule.Reason{Code: "veto_endpoint", Risk: veto.RiskCritical,
		Message: "The call reaches %s, where veto answers for a person; the agent may not talk to veto's own servers."}
	vetoSecret = &rule.Reason{Code: "veto_secret", Risk: veto.RiskCritical,
		Message: "The call reads or expands one of veto's own variables (VETO_*), which may hold a person's token; setting one for a command is fine, reading one is not."}
	vetoSignal = &rule.Reason{Code: "veto_signal", Risk: veto.RiskHigh,
		Message: "The call sends a signal to processes chosen by a name or pattern that matches veto's own, which would stop veto's servers."}
	vetoTerminal = &rule.Reason{Code: "veto_terminal", Risk: veto.RiskCritical,
		Message: "The call types into, or reads the screen of, a terminal or desktop a person may be using (a multiplexer's send-keys or capture, a desktop typist), which could answer veto's prompt as the person."}
)

// Control is veto.control's declaration.
var Control = &rule.Info{ID: "veto.control",
	Doc:  "Refuses the guarded agent every call that would change what veto decides or records: veto's commands, its files, its servers, its variables, its processes.",
	Risk: veto.RiskCritical,
	Advice: veto.Advice{Instead: "Ask the user to run it themselves, outside the agent.",
		Policy: "none: only a person changes veto, from their own terminal"},
	Reasons: []*rule.Reason{vetoCommand, vetoUnknown, vetoHook, vetoFiles, vetoState, vetoPreload, vetoEndpoint, vetoSecret, vetoSignal, vetoTerminal}}

// Section is the control section of a policy file.
type Section struct {
	Addresses []string `yaml:"addresses" doc:"More addresses where veto answers (host:port, or the path of a Unix socket), besides those veto serve and veto ui record while they listen; a network tool may not reach them. Every file adds to the list."`
	Binaries  []string `yaml:"binaries" doc:"More veto binaries (absolute paths), besides this one, those beside it, those on PATH and those the clients' settings register. Every file adds to the list."`
}

// Settings are the control section's effective settings.
type Settings struct {
	Addresses []string
	Binaries  []string
}

// ControlSection is the control section.
var ControlSection = rule.NewSection("control", "What veto.control guards besides what veto finds itself: more of veto's addresses and binaries.",
	nil, mergeControl)

func init() {
	ControlSection.YAML = func() string {
		return `control:             # veto.control: veto's own commands, files, servers and variables are the person's
  addresses: []      # more addresses where veto answers, as 127.0.0.1:8181 or /run/veto.sock
  binaries: []       # more veto binaries, absolute
`
	}
	ControlSection.Show = func() []string {
		return []string{"control: veto's commands, files, servers, variables and processes are out of the agent's reach"}
	}
	rule.Register(&rule.Family{Name: "control", Order: 5, Rules: []*rule.Info{Control},
		Sections: []*rule.Section{ControlSection}, Build: build})
}

// mergeControl adds every file's entries: a longer list only refuses more,
// so any file may add to it.
func mergeControl(eff *Settings, f *Section, l *rule.Layer) {
	eff.Addresses = rule.Append(l, eff.Addresses, f.Addresses, "addresses", CheckAddress)
	eff.Binaries = rule.Append(l, eff.Binaries, f.Binaries, "binaries", checkBinary)
}

func checkBinary(p string) error {
	if len(p) == 0 || p[0] != '/' {
		return fmt.Errorf("binary %q must be an absolute path", p)
	}
	return nil
}

func build(b *rule.Build) error {
	st, err := rule.Settings[Settings](b, ControlSection.Key)
	if err != nil {
		return err
	}
	s, err := New(Config{Home: b.Home, Vars: b.Vars, FS: b.FS, LookupHome: b.LookupHome,
		Addresses: st.Addresses, Binaries: st.Binaries})
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, s)
	return nil
}
