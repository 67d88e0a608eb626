// Package network holds net.egress: the rule that judges where a call's
// URLs go (WebFetch, MCP fetch tools, URL parameters of described tools,
// and URLs sniffed from the arguments of tools veto has no descriptor
// for), by the egress package's one parser and allow-list. Shell commands
// are judged by shell.egress with the same Config.
package network

import (
	"context"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
)

// Config is the egress policy.
type Config struct {
	Mode  egress.Mode // "" means egress.Open
	Allow egress.List // the policy's allow-list; events add to it per run
}

// Rule returns net.egress.
func Rule(cfg Config) veto.Rule { return &rule{cfg} }

type rule struct{ cfg Config }

func (r *rule) Info() veto.RuleInfo {
	return veto.RuleInfo{ID: "net.egress", Risk: veto.RiskMapping{Default: veto.RiskHigh, ByReason: map[string]veto.Risk{
		"egress_metadata": veto.RiskCritical, "egress_unresolvable": veto.RiskMedium}}}
}

// maxSniff bounds how many argument strings are looked at for URLs.
const maxSniff = 256

func (r *rule) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	dests, ok := Destinations(in)
	if !ok {
		return veto.Deny("egress_unresolvable", "A URL parameter of this call is not a string, so veto cannot tell where it goes."), nil
	}
	if len(dests) == 0 {
		return veto.Allow(), nil
	}
	return Judge(ctx, in, r.cfg, dests)
}

// Destinations returns the URLs a call reaches: the values of its
// descriptor's url parameters, or for a tool without a descriptor every
// argument string that is an http(s) or ws(s) URL. ok is false when a url
// parameter holds something other than a string.
func Destinations(in *veto.Input) (out []string, ok bool) {
	if d := in.Descriptor; d != nil {
		for _, p := range d.ParamsWith(veto.RoleURL) {
			v, present := in.Call.Args[p]
			if !present || v == nil {
				continue
			}
			s, isString := v.(string)
			if !isString {
				return nil, false
			}
			out = append(out, s)
		}
		if d.Has(veto.CapNetwork) {
			// A network tool that takes its URLs inside text (Gemini CLI's
			// web_fetch reads them from its prompt) goes to each of them.
			for _, p := range d.ParamsWith(veto.RoleContent) {
				if s, isString := in.Call.Args[p].(string); isString {
					out = append(out, Embedded(s)...)
				}
			}
		}
		return out, true
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n >= maxSniff {
			return
		}
		switch x := v.(type) {
		case string:
			n++
			if looksLikeURL(x) {
				out = append(out, strings.TrimSpace(x))
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(in.Call.Args)
	return out, true
}

// Embedded returns the http(s) URLs written inside text, each up to the
// first space, quote or bracket that ends it.
func Embedded(text string) []string {
	var out []string
	for i := 0; i+7 <= len(text) && len(out) < maxSniff; i++ {
		if text[i] != 'h' && text[i] != 'H' {
			continue
		}
		n := 0
		for _, p := range []string{"https://", "http://", "https:\\\\", "http:\\\\"} {
			if len(text)-i >= len(p) && strings.EqualFold(text[i:i+len(p)], p) {
				n = len(p)
				break
			}
		}
		if n == 0 {
			continue
		}
		end := i + n
		for end < len(text) && !strings.ContainsRune(" \t\r\n\"'<>()[]{}`", rune(text[end])) {
			end++
		}
		if u := strings.TrimRight(text[i:end], ".,;:!?"); len(u) > n {
			out = append(out, u)
		}
		i = end - 1
	}
	return out
}

func looksLikeURL(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"http://", "https://", "ws://", "wss://", "ftp://"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Judge judges destinations (hosts or URLs; "" for one veto could not
// determine) under cfg plus the run's allow events.
func Judge(ctx context.Context, in *veto.Input, cfg Config, dests []string) (veto.Decision, error) {
	list := cfg.Allow
	if cfg.Mode == egress.Allowlist {
		if ek := in.Knowledge; ek != nil {
			added, err := ek.Egress(ctx)
			if err != nil {
				return veto.Decision{}, err
			}
			for _, h := range added {
				list = list.Add(h)
			}
		}
	}
	for _, d := range dests {
		switch egress.Judge(d, d != "", cfg.Mode, list) {
		case egress.Metadata:
			return veto.Deny("egress_metadata", "The call reaches a link-local or cloud metadata address, which holds credentials."), nil
		case egress.Unresolvable:
			return veto.Deny("egress_unresolvable", "The call reaches a host veto cannot determine statically, so it cannot vouch for it."), nil
		case egress.NotListed:
			return veto.Deny("egress_not_listed", "The call reaches a host that is not on the egress allow-list; a person can add it with veto egress allow."), nil
		}
	}
	return veto.Allow(), nil
}
