package sequence

import (
	"context"
	"fmt"
	"slices"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/glob"
	"github.com/vetohq/veto/rule"
)

// The sequence rules and their reasons, declared once.
var (
	readWithEgress = &rule.Reason{Code: "private_read_with_egress",
		Message: "This call reads private material and reaches the network; read it in a call that sends nothing, or ask the user."}
	readBeforeEgress = &rule.Reason{Code: "private_read_before_egress",
		Message: "The run read private material (call %s, event #%d, %s), so no call may reach the network for the rest of it."}
	tooManyCalls  = &rule.Reason{Code: "max_calls", Message: "The run has made %d calls matching %q, its limit."}
	tooManyFailed = &rule.Reason{Code: "max_failed_writes", Message: "Writes to this target have failed %d times in this run, its limit."}

	NoEgressAfterPrivate = &rule.Info{ID: "sequence.no_egress_after_private_read",
		Doc:   "Once the run has read private material (sequence.private), refuses every call that reaches the network.",
		Needs: veto.Needs{CompleteHistory: true}, Risk: veto.RiskHigh, Advice: veto.Advice{Policy: "sequence.private"},
		Reasons: []*rule.Reason{readWithEgress, readBeforeEgress}}
	MaxCalls = &rule.Info{ID: "sequence.max_calls", Doc: "Refuses a call past the run's limit of calls to its tool (sequence.max_calls).",
		Needs: veto.Needs{CompleteHistory: true}, Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "sequence.max_calls"},
		Reasons: []*rule.Reason{tooManyCalls}}
	MaxFailedWrites = &rule.Info{ID: "sequence.max_failed_writes", Doc: "Refuses a write to a target whose writes failed too often in the run (sequence.max_failed_writes).",
		Needs: veto.Needs{CompleteHistory: true}, Risk: veto.RiskMedium, Advice: veto.Advice{Policy: "sequence.max_failed_writes"},
		Reasons: []*rule.Reason{tooManyFailed}}
)

// Section is the sequence section of a policy file.
type Section struct {
	Private         []string       `yaml:"private" doc:"Patterns (as files.protected) for private material: once the run has read one (or tried: a failed or pending read counts), no call may reach the network."`
	MaxCalls        map[string]int `yaml:"max_calls" doc:"Most calls a run may make, by tool name or glob (mcp__github__*). Later files can only lower a limit."`
	MaxFailedWrites int            `yaml:"max_failed_writes" doc:"Most failed writes to one target per run (a failed write may have touched it). Later files can only lower it."`
}

// Settings are the sequence section's effective settings.
type Settings struct {
	Private         []string
	MaxCalls        map[string]int
	MaxFailedWrites int
}

// SequenceSection is the sequence section.
var SequenceSection = rule.NewSection("sequence",
	"Rules over what the run already executed; each denies history_incomplete when the record cannot prove what ran.",
	nil, mergeSequence)

func init() {
	SequenceSection.YAML = func() string {
		return `# sequence:          # rules over what the run already executed (off until set)
#   private: ["secrets/**"]          # once read, no call may reach the network
#   max_calls: {"mcp__github__*": 20}
#   max_failed_writes: 3
`
	}
	rule.Register(&rule.Family{Name: "sequence", Order: 40, Rules: []*rule.Info{NoEgressAfterPrivate, MaxCalls, MaxFailedWrites},
		Sections: []*rule.Section{SequenceSection}, Build: build})
}

func checkToolGlob(g string) error {
	if glob.CheckName(g) != nil {
		return fmt.Errorf("%q is not a tool name or glob", g)
	}
	return nil
}

func mergeSequence(eff *Settings, f *Section, l *rule.Layer) {
	eff.Private = rule.Append(l, eff.Private, f.Private, "private", glob.Check)
	globs := make([]string, 0, len(f.MaxCalls))
	for g := range f.MaxCalls {
		globs = append(globs, g)
	}
	slices.Sort(globs)
	for _, g := range globs {
		n := f.MaxCalls[g]
		if err := checkToolGlob(g); err != nil {
			l.Bad("sequence.max_calls: "+err.Error(), "max_calls", g)
			continue
		}
		if n < 0 {
			l.Bad(fmt.Sprintf("sequence.max_calls: %q: want a limit of 0 or more", g), "max_calls", g)
			continue
		}
		if eff.MaxCalls == nil {
			eff.MaxCalls = map[string]int{}
		}
		// A limit of 0 is a limit: only a lower one, or the user's, replaces it.
		if cur, ok := eff.MaxCalls[g]; !ok || n < cur || l.Trusted {
			eff.MaxCalls[g] = n
			l.Note("max_calls", fmt.Sprintf("%s: %d", g, n), "max_calls", g)
		}
	}
	if f.MaxFailedWrites < 0 {
		l.Bad("sequence.max_failed_writes: want a positive number", "max_failed_writes")
	} else if n, ok := rule.Lower(l, eff.MaxFailedWrites, f.MaxFailedWrites); ok {
		eff.MaxFailedWrites = n
		l.Note("max_failed_writes", fmt.Sprint(n), "max_failed_writes")
	}
}

func build(b *rule.Build) error {
	st, err := rule.Settings[Settings](b, SequenceSection.Key)
	if err != nil {
		return err
	}
	hosts, reads := slices.Clone(b.Hosts), slices.Clone(b.Reads)
	cfg := Config{Private: st.Private, Home: b.Home, MaxCalls: st.MaxCalls, MaxFailedWrites: st.MaxFailedWrites, Tool: b.Tool}
	if len(hosts) > 0 {
		cfg.ShellHosts = func(in *veto.Input) []string {
			var out []string
			for _, h := range hosts {
				out = append(out, h(in)...)
			}
			return out
		}
	}
	if len(reads) > 0 {
		cfg.Reads = func(ctx context.Context, in *veto.Input) ([]string, error) {
			var out []string
			for _, r := range reads {
				p, err := r(ctx, in)
				if err != nil {
					return nil, err
				}
				out = append(out, p...)
			}
			return out, nil
		}
	}
	rules, err := Rules(cfg)
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, rules...)
	return nil
}
