package files

import (
	"context"

	"github.com/vetohq/veto"
)

// credential denies reading or writing a file that holds secrets, and a
// search of a directory tree that holds a credential directory. It is the
// one rule every path-bearing argument meets, written or read.
type credential struct{ s *Set }

func (r *credential) Info() veto.RuleInfo { return Credential.RuleInfo() }

func (r *credential) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	for _, list := range [][]pathArg{a.written, a.read} {
		for _, p := range list {
			if p.unknown {
				continue
			}
			if p.err != nil {
				return pathUnresolvable.Deny(p.what()), nil
			}
			if matchAny(&r.s.credentials, p.path, "") {
				return credentialPath.Deny(p.what()), nil
			}
		}
	}
	// A search tool's directory, or a command's recursive read (tar, cp -r,
	// grep -r, …), reads the tree below it.
	searches := a.desc.Has(veto.CapSearchesTree)
	for _, p := range a.read {
		if p.command && p.tree || !p.command && searches {
			for _, anchor := range r.s.credAnchors {
				if p.path.Any(func(form string) bool { return form != anchor && r.s.within(pathOf(anchor), []string{form}) }) {
					return credentialSearch.Deny(p.what()), nil
				}
			}
		}
	}
	return veto.Allow(), nil
}
