package mcpgate

import (
	"slices"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
)

// PolicyBuild is the BuildFunc of a policy: its gate, with the gateway's
// descriptors added to the policy's (which they never replace) and the
// gateway's rules after the policy's own, and its offerability.
func PolicyBuild(p *policy.Policy, o policy.BuildOptions) BuildFunc {
	return func(extra []veto.Descriptor, rules []veto.Rule) (*veto.Gate, veto.Offerability, error) {
		q := *p
		q.Tools = slices.Clone(p.Tools)
		for _, d := range extra {
			if !slices.ContainsFunc(q.Tools, func(t veto.Descriptor) bool { return t.Name == d.Name }) {
				q.Tools = append(q.Tools, d)
			}
		}
		q.Rules = slices.Clone(p.Rules)
		for _, r := range rules {
			q.Rules = append(q.Rules, policy.UserRule{Rule: r, Where: "veto mcp"})
		}
		g, err := q.Gate(o)
		if err != nil {
			return nil, nil, err
		}
		offer := q.Offer
		return g, &offer, nil
	}
}
