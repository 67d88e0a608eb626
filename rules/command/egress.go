package command

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
)

// egress judges every host a command reaches by the same parser and
// allow-list as net.egress: in open mode every host is allowed but
// link-local and cloud metadata addresses; in allowlist mode only listed
// ones. A host veto cannot determine statically (a variable, an
// expansion) is refused in both: it cannot vouch for it.
type shellEgress struct{ s *Set }

func (r *shellEgress) Info() veto.RuleInfo { return Egress.RuleInfo() }

func (r *shellEgress) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	dests := r.s.Hosts(in)
	if len(dests) == 0 {
		return veto.Allow(), nil
	}
	v, err := r.s.egress.Check(ctx, in, dests)
	if err != nil || v == egress.Allowed {
		return veto.Allow(), err
	}
	code, msg := v.Reason()
	return veto.Deny(code, msg), nil
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
