package files

import (
	"context"

	"github.com/vetohq/veto"
)

// protected denies a write to a protected location inside the write
// roots: git's internals, veto's own state, the client settings that could
// switch veto off.
type protected struct{ s *Set }

func (r *protected) Info() veto.RuleInfo { return Protected.RuleInfo() }

func (r *protected) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.err == nil && !w.unknown && matchAny(&r.s.protected, w.path, "") {
			return protectedPath.Deny(w.what()), nil
		}
	}
	return veto.Allow(), nil
}
