package files

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// writeRoots denies a write outside the write roots: the workspace, the
// temporary directories and any configured extra roots. A path through a
// symlink that leaves them is outside. A written path veto cannot resolve
// is denied here too, and so is removing or moving away a root, the home
// directory, or a directory that holds one of them, wherever the roots
// are: the home directory may lie inside a root (HOME under /tmp, as on
// CI runners and in containers), and removing it is not a write inside
// that root like another.
type writeRoots struct{ s *Set }

func (r *writeRoots) Info() veto.RuleInfo { return WriteRoots.RuleInfo() }

func (r *writeRoots) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.unknown {
			return pathUnknown.Deny(), nil
		}
		if w.err != nil {
			return pathUnresolvable.Deny(w.what()), nil
		}
		if w.removes && r.s.coversRoot(w.path, a.roots) {
			return rootRemoval.Deny(), nil
		}
		if !r.s.within(w.path, a.roots) {
			switch {
			case a.wsErr != nil:
				return workspaceUnknown.Deny(), nil
			case w.param == "" && w.tool != "":
				return sniffedOutside.Deny(w.tool), nil
			}
			return outsideRoots.Deny(w.what()), nil
		}
		if w.removes && r.s.coversRoot(w.path, r.s.homes) {
			return rootRemoval.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

// coversRoot reports whether removing p, with everything below it, would
// remove one of roots: p is a root or a directory above one.
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
