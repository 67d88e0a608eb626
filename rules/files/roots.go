package files

import (
	"context"

	"github.com/vetohq/veto"
)

// writeRoots denies a write outside the write roots: the workspace, the
// temporary directories and any configured extra roots. A path through a
// symlink that leaves them is outside. A written path veto cannot resolve
// is denied here too.
type writeRoots struct{ s *Set }

func (r *writeRoots) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "file.write_roots", Risk: veto.RiskMapping{Default: veto.RiskHigh}}
}

func (r *writeRoots) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	for _, w := range a.written {
		if w.err != nil {
			return veto.Deny("path_unresolvable", w.what()+" names a path veto cannot resolve, so the call is refused."), nil
		}
		if !r.s.within(w.path, a.roots) {
			if a.wsErr != nil {
				return veto.Deny("workspace_unknown", "The call has no working directory, so veto cannot tell where it writes."), nil
			}
			return veto.Deny("outside_write_roots", w.what()+" points outside the write roots (the project and the temporary directories)."), nil
		}
	}
	return veto.Allow(), nil
}
