package command

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rules/network"
)

// egress judges every host a command reaches by the same parser and
// allow-list as net.egress: in open mode every host is allowed but
// link-local and cloud metadata addresses; in allowlist mode only listed
// ones. A host veto cannot determine statically (a variable, an
// expansion) is refused in both: it cannot vouch for it.
type egress struct{ s *Set }

func (r *egress) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "shell.egress", Risk: veto.RiskMapping{Default: veto.RiskHigh, ByReason: map[string]veto.Risk{
		"egress_metadata": veto.RiskCritical, "egress_unresolvable": veto.RiskMedium}}}
}

func (r *egress) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	dests := r.s.Hosts(in)
	if len(dests) == 0 {
		return veto.Allow(), nil
	}
	return network.Judge(ctx, in, r.s.egress, dests)
}

// Hosts returns the hosts the call's command reaches, "" for one that
// cannot be determined statically; nil when the call runs no command.
func (s *Set) Hosts(in *veto.Input) []string {
	a := s.analyze(in)
	if a.report == nil {
		return nil
	}
	out := make([]string, 0, len(a.report.Hosts))
	for _, h := range a.report.Hosts {
		if h.Unknown {
			out = append(out, "")
		} else {
			out = append(out, h.Host)
		}
	}
	return out
}
