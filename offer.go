package veto

import (
	"context"
	"slices"

	"github.com/vetohq/veto/glob"
)

// Offer is the usual Offerability: the five gates a tool passes before any
// rule sees a call's arguments, in this order — registered, available,
// allowed for the actor, on the run's allow-list, inside the trust zone.
type Offer struct {
	// RequireRegistered refuses tools that have no descriptor. Off by
	// default: a tool nobody described is still checked, by exclusion.
	RequireRegistered bool
	// Unavailable tools are switched off for every run.
	Unavailable []string
	// Actors maps an actor (by "kind:id", "kind:*" or "*") to the tool-name
	// globs it may use. An actor that matches no key is not restricted.
	Actors map[string][]string
}

var _ Offerability = (*Offer)(nil)

// Offer implements Offerability.
func (o *Offer) Offer(_ context.Context, c *Call, d *Descriptor) (ToolDenial, error) {
	if o.RequireRegistered && d == nil {
		return NotRegistered, nil
	}
	if slices.Contains(o.Unavailable, c.Tool) {
		return Unavailable, nil
	}
	if globs, ok := o.actorGlobs(c.Actor); ok && !matchAny(globs, c.Tool) {
		return ActorNotAllowed, nil
	}
	if c.Run.AllowedTools != nil && !matchAny(c.Run.AllowedTools, c.Tool) {
		return NotInRunAllowlist, nil
	}
	if d != nil && len(d.TrustZones) > 0 && !slices.Contains(d.TrustZones, c.Run.TrustZone) {
		return OutsideTrustZone, nil
	}
	return "", nil
}

func (o *Offer) actorGlobs(a Actor) ([]string, bool) {
	for _, k := range []string{a.Kind + ":" + a.ID, a.Kind + ":*", "*"} {
		if g, ok := o.Actors[k]; ok {
			return g, true
		}
	}
	return nil, false
}

// matchAny reports whether name matches one of the globs, as every tool
// glob of a policy does (glob.Name: "*" crosses "/", so "mcp__srv__*"
// covers "mcp__srv__dir/tool"). A malformed glob matches nothing.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if glob.Name(g, name) {
			return true
		}
	}
	return false
}
