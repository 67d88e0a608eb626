// Package network holds net.egress: the rule that judges where a call's
// URLs go (WebFetch, MCP fetch tools, URL parameters of described tools,
// and URLs sniffed from the arguments of tools veto has no descriptor
// for), by the egress package's one parser and allow-list. It declares the
// egress section of the policy, which shell.egress reads too.
package network

import (
	"context"
	"fmt"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rule"
)

// Section is the egress section of a policy file.
type Section struct {
	Mode  string   `yaml:"mode" doc:"open (the default: every host but link-local and cloud metadata addresses) or allowlist (only the hosts in allow, and those a person adds to a run with veto egress allow; a host veto cannot determine statically is denied). Only the user's file may set open over another file's allowlist."`
	Allow []string `yaml:"allow" doc:"The allow-list: host names, wildcard domains (*.example.com, below example.com), host:port, addresses and CIDR ranges. In every mode, the hosts uploads of local data (shell.upload) and installs from outside a registry (shell.install, file.package_config) may go to, as far as the user's file lists them: another file's entries never let an upload or install through. Later files can only remove entries."`
}

// reasons are net.egress's reasons: one per verdict of egress that
// refuses.
func reasons() []*rule.Reason {
	var out []*rule.Reason
	for _, v := range egress.Refusals {
		code, msg := v.Reason()
		out = append(out, &rule.Reason{Code: code, Message: msg, Risk: v.Risk()})
	}
	return out
}

// Egress is net.egress's declaration.
var Egress = &rule.Info{ID: "net.egress", Doc: "Refuses a call whose URLs reach a metadata address, a host veto cannot determine, or (in allowlist mode) a host not on the list.",
	Risk: veto.RiskHigh, Reasons: reasons()}

// EgressSection is the egress section: its effective settings are
// egress.Settings.
var EgressSection = rule.NewSection(egress.SectionKey, "Where calls may reach on the network (net.egress and shell.egress), and where uploads and installs may go (shell.upload, shell.install).",
	nil, mergeEgress)

func init() {
	EgressSection.YAML = func() string {
		return `egress:              # where calls may reach; link-local and metadata addresses never
  mode: open         # open: any other host; allowlist: only the hosts below and those
                     # a person adds to a run with: veto egress allow HOST --run R
  # allow: [api.example.com, "*.docs.example", "ci.example:8443", 10.0.0.0/8]
                     # in every mode, also where uploads and installs may go
`
	}
	rule.Register(&rule.Family{Name: "network", Order: 20, Rules: []*rule.Info{Egress},
		Sections: []*rule.Section{EgressSection}, Build: build})
}

func mergeEgress(eff *egress.Settings, f *Section, l *rule.Layer) {
	// An earlier file's allowlist mode with no list allows nothing: a
	// later file's list may not widen it.
	wasAllowlist := eff.Mode == egress.Allowlist
	switch egress.Mode(f.Mode) {
	case "":
	case egress.Allowlist:
		eff.Mode = egress.Allowlist
		l.Note("mode", f.Mode, "mode")
	case egress.Open:
		if eff.Mode == egress.Allowlist && !l.Trusted {
			l.Bad(fmt.Sprintf("egress.mode: only the user's policy may open egress that another file limited, not the %s policy", l.Kind), "mode")
		} else {
			eff.Mode = egress.Open
			l.Note("mode", f.Mode, "mode")
		}
	default:
		l.Bad(fmt.Sprintf("egress.mode: %q is not open or allowlist", f.Mode), "mode")
	}
	if f.Allow == nil {
		return
	}
	if !rule.Each(l, f.Allow, "allow", func(h string) error { _, err := egress.ParseList([]string{h}); return err }) {
		return
	}
	var unset func() []string // unbounded until a list or allowlist mode is set
	if wasAllowlist {
		unset = func() []string { return []string{} }
	}
	eff.Allow = rule.Shorten(l, eff.Allow, f.Allow, unset)
	// What may be sent (uploads, installs) widens only by the user's file:
	// another file's list only narrows it.
	eff.Sends = rule.Shorten(l, eff.Sends, f.Allow, func() []string { return []string{} })
	l.Note("allow", strings.Join(f.Allow, ", "), "allow")
}

func build(b *rule.Build) error {
	s, err := rule.Settings[egress.Settings](b, EgressSection.Key)
	if err != nil {
		return err
	}
	p, err := s.Compile()
	if err != nil {
		return err
	}
	b.Rules = append(b.Rules, Rule(p))
	return nil
}

// Rule returns net.egress judging by p.
func Rule(p egress.Policy) veto.Rule { return &netEgress{p} }

type netEgress struct{ p egress.Policy }

func (r *netEgress) Info() veto.RuleInfo { return Egress.RuleInfo() }

func (r *netEgress) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	dests, ok := egress.Destinations(in)
	if !ok {
		return deny(egress.Unresolvable), nil
	}
	if len(dests) == 0 {
		return veto.Allow(), nil
	}
	v, err := r.p.Check(ctx, in, dests)
	if err != nil || v == egress.Allowed {
		return veto.Allow(), err
	}
	return deny(v), nil
}

func deny(v egress.Verdict) veto.Decision {
	code, msg := v.Reason()
	return veto.Deny(code, msg)
}
