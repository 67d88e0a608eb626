package files

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// manifest denies a write to a file the write manifest does not list. It
// is on only when a manifest is configured.
type manifest struct{ s *Set }

func (r *manifest) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "file.manifest", Risk: veto.RiskMapping{Default: veto.RiskMedium}}
}

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
			return veto.Deny("not_in_manifest", w.what()+" names a file the write manifest does not list."), nil
		}
	}
	return veto.Allow(), nil
}

// writeScope denies a write outside the declared write scope: patterns
// relative to the workspace, or absolute. It is on only when a scope is
// configured.
type writeScope struct{ s *Set }

func (r *writeScope) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "file.write_scope", Risk: veto.RiskMapping{Default: veto.RiskMedium}}
}

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
				return veto.Deny("outside_write_scope", w.what()+" names a file outside the declared write scope."), nil
			}
		}
	}
	return veto.Allow(), nil
}
