package files

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// manifest denies a write to a file the write manifest does not list. It
// is on only when a manifest is configured.
type manifest struct{ s *Set }

func (r *manifest) Info() veto.RuleInfo { return Manifest.RuleInfo() }

func (r *manifest) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.unknown {
			continue // write roots refused it already
		}
		if r.s.manifest[w.path.Real] {
			continue
		}
		listed := false
		if a.wsErr == nil {
			for _, rel := range r.s.manifestRel {
				if p, err := toolpath.Resolve(rel, r.s.env(a.workspace)); err == nil && p.Real == w.path.Real {
					listed = true
					break
				}
			}
		}
		if !listed {
			return notInManifest.Deny(w.what()), nil
		}
	}
	return veto.Allow(), nil
}

// writeScope denies a write outside the declared write scope: patterns
// relative to the workspace, or absolute. It is on only when a scope is
// configured.
type writeScope struct{ s *Set }

func (r *writeScope) Info() veto.RuleInfo { return WriteScope.RuleInfo() }

func (r *writeScope) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, w := range a.written {
		if w.unknown {
			continue
		}
		for i := range r.s.scopes {
			if _, ok := r.s.scopes[i].match(w.path.Real, a.workspace); !ok {
				return outsideScope.Deny(w.what()), nil
			}
		}
	}
	return veto.Allow(), nil
}
