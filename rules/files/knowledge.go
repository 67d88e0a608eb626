package files

import (
	"context"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

func pathOf(real string) toolpath.Path {
	return toolpath.Path{Lexical: real, Real: real, Cleaned: real}
}

// stale denies a write to a file that changed on disk since this run last
// read or wrote it: the model would write over changes it has not seen.
type stale struct{ s *Set }

func (r *stale) Info() veto.RuleInfo { return Stale.RuleInfo() }

func (r *stale) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	if a.desc == nil {
		return veto.Allow(), nil
	}
	for _, w := range a.written {
		if w.command {
			continue // the knowledge gates stay with the file tools
		}
		known, ok, err := in.Knowledge.File(ctx, w.path.Real)
		if err != nil {
			return veto.Decision{}, err
		}
		if !ok {
			continue
		}
		// Again, not afresh: a file whose stamp has not moved since the run
		// learned it is not read and hashed a second time.
		now, err := veto.ProbeAgain(ctx, in.Probe, w.path.Real, known)
		if err != nil {
			return veto.Decision{}, err
		}
		if !now.Same(known) {
			return changedSinceRead.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

// readBeforeWrite denies overwriting an existing file the run has not read:
// the model has not seen what it would replace. Tools that declare
// content_from_source (a move or copy) are exempt, because no byte they
// write is the model's; naming a source parameter is not enough. Edits
// name the text they replace and pass.
type readBeforeWrite struct{ s *Set }

func (r *readBeforeWrite) Info() veto.RuleInfo { return ReadBeforeWrite.RuleInfo() }

func (r *readBeforeWrite) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	if !a.desc.Has(veto.CapOverwrites) || a.desc.Has(veto.CapContentFromSource) {
		return veto.Allow(), nil
	}
	for _, w := range a.written {
		if w.command {
			continue
		}
		if _, ok, err := in.Knowledge.File(ctx, w.path.Real); err != nil {
			return veto.Decision{}, err
		} else if ok {
			continue
		}
		now, err := in.Probe.File(ctx, w.path.Real)
		if err != nil {
			return veto.Decision{}, err
		}
		if now.Exists && !now.Dir {
			return overwriteUnread.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

// referenceExists denies a call that names something that must exist and
// does not: the file an edit changes, the source a writing tool copies or
// moves.
type referenceExists struct{ s *Set }

func (r *referenceExists) Info() veto.RuleInfo { return ReferenceExists.RuleInfo() }

func (r *referenceExists) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Decision{}, err
	}
	var refs []pathArg
	if a.desc.Has(veto.CapEdits) {
		refs = append(refs, a.written...)
	}
	if a.desc.Has(veto.CapWrites) {
		refs = append(refs, a.read...)
	}
	for _, p := range refs {
		if p.command {
			continue
		}
		now, err := in.Probe.File(ctx, p.path.Real)
		if err != nil {
			return veto.Decision{}, err
		}
		if !now.Exists {
			return referenceMissing.Deny(p.what()), nil
		}
	}
	return veto.Allow(), nil
}

// Resolver returns the target resolver of file tools: a described tool
// naming exactly one path acts on that file. It resolves the call's paths
// once for every file rule.
func (s *Set) Resolver() veto.Resolver { return resolver{s} }

type resolver struct{ s *Set }

func (r resolver) Resolve(ctx context.Context, in *veto.Input) (veto.Target, bool, error) {
	if in.Descriptor == nil {
		return veto.Target{}, false, nil
	}
	a, err := r.s.analyze(ctx, in)
	if err != nil {
		return veto.Target{}, false, err
	}
	var only *pathArg
	for _, list := range [][]pathArg{a.written, a.read} {
		for i := range list {
			p := &list[i]
			if p.command {
				continue // a command's files are not what the tool call acts on
			}
			if only != nil && (p.err != nil || only.err != nil || p.path.Real != only.path.Real) {
				return veto.Target{}, false, nil // several files: no single target
			}
			only = p
		}
	}
	if only == nil {
		return veto.Target{}, false, nil
	}
	if only.err != nil {
		return veto.Target{}, false, only.err
	}
	return veto.Target{Kind: "file", ID: only.path.Real}, true, nil
}

// Learner returns the learner of file tools: a successful described call
// taught the run every file it named.
func (s *Set) Learner() veto.Learner { return learner{s} }

type learner struct{ s *Set }

func (l learner) Touched(c *veto.Call, d *veto.Descriptor) ([]string, error) {
	if d == nil || !d.Has(veto.CapReads) && !d.Has(veto.CapWrites) {
		return nil, nil
	}
	a := l.s.compute(c, d)
	var out []string
	for _, list := range [][]pathArg{a.written, a.read} {
		for _, p := range list {
			if p.err != nil {
				return nil, p.err
			}
			out = append(out, p.path.Real)
		}
	}
	return out, nil
}
