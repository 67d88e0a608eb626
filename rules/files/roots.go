package files

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// writeRoots denies a write outside the write roots: the workspace, the
// temporary directories and any configured extra roots. A path through a
// symlink that leaves them is outside. A written path veto cannot resolve
// is denied here too.
type writeRoots struct{ s *Set }

func (r *writeRoots) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "file.write_roots", Risk: veto.RiskMapping{Default: veto.RiskHigh}}
}

func (r *writeRoots) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.unknown {
			return veto.Deny("path_unknown", "The command writes to a path veto cannot determine (a variable, an expansion or an unknown directory), so it is refused."), nil
		}
		if w.err != nil {
			return veto.Deny("path_unresolvable", w.what()+" names a path veto cannot resolve, so the call is refused."), nil
		}
		if w.removes && r.s.coversRoot(w.path, a.roots) {
			return veto.Deny("root_removal", "The command removes a write root itself, or a directory holding one."), nil
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

// coversRoot reports whether removing p, recursively, would remove a root.
func (s *Set) coversRoot(p toolpath.Path, roots []string) bool {
	for _, form := range []string{p.Real, p.Cleaned} {
		for _, r := range roots {
			if toolpath.Within(r, form, s.fold) {
				return true
			}
		}
	}
	return false
}
