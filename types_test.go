package veto_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
)

// Risk levels by name, in and out; a mapping falls back to its default,
// and an unset default is medium.
func TestRiskSpellingAndMapping(t *testing.T) {
	for _, name := range []string{"none", "low", "medium", "high", "critical"} {
		r, err := veto.ParseRisk(name)
		b, err2 := r.MarshalText()
		var back veto.Risk
		err3 := back.UnmarshalText([]byte(name))
		if err != nil || err2 != nil || err3 != nil || string(b) != name || back != r || r.String() != name {
			t.Errorf("%s: %v %q %v %v", name, r, b, err, err2)
		}
	}
	if _, err := veto.ParseRisk("severe"); err == nil {
		t.Error("an unknown risk parsed")
	}
	var r veto.Risk = veto.RiskHigh
	if err := r.UnmarshalText([]byte("severe")); err == nil || r != veto.RiskNone {
		t.Errorf("unmarshal of an unknown risk: %v, left %v", err, r)
	}
	if _, err := veto.Risk(5).MarshalText(); err == nil {
		t.Error("risk 5 marshalled")
	}
	if b, err := veto.RiskCritical.MarshalText(); err != nil || string(b) != "critical" {
		t.Errorf("critical: %q %v", b, err)
	}
	m := veto.RiskMapping{Default: veto.RiskLow, ByReason: map[string]veto.Risk{"bad": veto.RiskCritical, "unset": veto.RiskNone}}
	for reason, want := range map[string]veto.Risk{"bad": veto.RiskCritical, "unset": veto.RiskLow, "other": veto.RiskLow} {
		if got := m.Of(reason); got != want {
			t.Errorf("Of(%s) = %v, want %v", reason, got, want)
		}
	}
	if got := (veto.RiskMapping{}).Of("x"); got != veto.RiskMedium {
		t.Errorf("an empty mapping: %v, want medium", got)
	}
	a := veto.AdviceMapping{Default: veto.Advice{Instead: "d"}, ByReason: map[string]veto.Advice{"r": {Policy: "p"}}}
	if a.Of("r") != (veto.Advice{Policy: "p"}) || a.Of("x") != (veto.Advice{Instead: "d"}) {
		t.Errorf("advice %v %v", a.Of("r"), a.Of("x"))
	}
}

// A verdict's JSON: allow or deny, with what is set and nothing else.
func TestVerdictJSON(t *testing.T) {
	for _, tc := range []struct {
		v    veto.Verdict
		want string
	}{
		{veto.Verdict{Allowed: true, CallID: "c"}, `{"verdict":"allow","call_id":"c"}`},
		{veto.Verdict{CallID: "c", Tool: "Bash", Run: "r", Stage: veto.StageRule, Rule: "x", Reason: "no", Risk: veto.RiskHigh, Message: "No.",
			Advice: veto.Advice{Instead: "i", Policy: "p"}, Target: veto.Target{Kind: "file", ID: "/a"}, Seq: 4},
			`{"verdict":"deny","call_id":"c","tool":"Bash","run":"r","stage":"rule","rule":"x","reason":"no","risk":"high","message":"No.","advice":{"instead":"i","policy":"p"},"target":{"kind":"file","id":"/a"},"seq":4}`},
		{veto.Verdict{Allowed: true, CallID: "c", Args: map[string]any{"a": 1}, Target: veto.Target{ID: "ignored"}},
			`{"verdict":"allow","call_id":"c","args":{"a":1}}`},
		{veto.Verdict{CallID: "c", ToolDenial: veto.Unavailable, Reason: veto.ReasonToolDenied},
			`{"verdict":"deny","call_id":"c","reason":"tool_denied","tool_denial":"unavailable"}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v:\n%s %v\nwant\n%s", tc.v, b, err, tc.want)
		}
	}
	if (veto.Target{}).String() != "unknown" || (veto.Target{Kind: "file", ID: "/a"}).String() != "file:/a" {
		t.Error("target strings")
	}
}

// Offerability's checks, each on its own: the actor's globs by the most
// specific key, the run's allow-list as globs, trust zones.
func TestOfferChecksEachRule(t *testing.T) {
	o := &veto.Offer{Actors: map[string][]string{"agent:sub": {"Read"}, "agent:*": {"Grep", "mcp__*"}, "*": {"Bash"}}}
	desc := &veto.Descriptor{Name: "Zoned", TrustZones: []string{"local", "vpn"}}
	for _, tc := range []struct {
		name string
		c    veto.Call
		d    *veto.Descriptor
		want veto.ToolDenial
	}{
		{"actor-exact", veto.Call{Tool: "Read", Actor: veto.Actor{Kind: "agent", ID: "sub"}}, nil, ""},
		{"actor-exact-not-kind", veto.Call{Tool: "Grep", Actor: veto.Actor{Kind: "agent", ID: "sub"}}, nil, veto.ActorNotAllowed},
		{"actor-kind", veto.Call{Tool: "mcp__x__y", Actor: veto.Actor{Kind: "agent", ID: "other"}}, nil, ""},
		// A tool glob crosses "/" (issue 27): the server's tool named
		// like a path is among "mcp__*"; "Grep" alone is not "Grep/x".
		{"actor-kind-slash", veto.Call{Tool: "mcp__x__dir/y", Actor: veto.Actor{Kind: "agent", ID: "other"}}, nil, ""},
		{"actor-kind-slash-literal", veto.Call{Tool: "Grep/x", Actor: veto.Actor{Kind: "agent", ID: "other"}}, nil, veto.ActorNotAllowed},
		{"run-list-slash", veto.Call{Tool: "mcp__s__a/b", Actor: veto.Actor{Kind: "agent", ID: "other"}, Run: veto.Run{AllowedTools: []string{"mcp__s__*"}}}, nil, ""},
		{"actor-kind-not-any", veto.Call{Tool: "Bash", Actor: veto.Actor{Kind: "agent", ID: "other"}}, nil, veto.ActorNotAllowed},
		{"actor-any", veto.Call{Tool: "Bash", Actor: veto.Actor{Kind: "user"}}, nil, ""},
		{"actor-any-denied", veto.Call{Tool: "Read", Actor: veto.Actor{Kind: "user"}}, nil, veto.ActorNotAllowed},
		{"run-list-glob", veto.Call{Tool: "Bash", Run: veto.Run{AllowedTools: []string{"B*", "["}}}, nil, ""},
		{"run-list-miss", veto.Call{Tool: "Bash", Run: veto.Run{AllowedTools: []string{"["}}}, nil, veto.NotInRunAllowlist},
		{"run-list-empty", veto.Call{Tool: "Bash", Run: veto.Run{AllowedTools: []string{}}}, nil, veto.NotInRunAllowlist},
		{"zone-second", veto.Call{Tool: "Bash", Run: veto.Run{TrustZone: "vpn"}}, desc, ""},
		{"zone-none", veto.Call{Tool: "Bash"}, desc, veto.OutsideTrustZone},
	} {
		got, err := o.Offer(context.Background(), &tc.c, tc.d)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

// NewGate refuses a configuration it cannot vouch for.
func TestNewGateRefusesABrokenConfig(t *testing.T) {
	for name, cfg := range map[string]veto.Config{
		"no-store":          {},
		"nil-rule":          {Store: memstore.New(), Rules: []veto.Rule{nil}},
		"nameless-tool":     {Store: memstore.New(), Tools: []veto.Descriptor{{}}},
		"duplicate-tool":    {Store: memstore.New(), Tools: []veto.Descriptor{{Name: "a"}, {Name: "a"}}},
		"advice-reason":     {Store: memstore.New(), Rules: []veto.Rule{ruleWith(veto.RuleInfo{ID: "r", Advice: veto.AdviceMapping{ByReason: map[string]veto.Advice{"Bad": {}}}})}},
		"risk-out-of-range": {Store: memstore.New(), Rules: []veto.Rule{ruleWith(veto.RuleInfo{ID: "r", Risk: veto.RiskMapping{ByReason: map[string]veto.Risk{"ok": veto.Risk(5)}}})}},
	} {
		if _, err := veto.NewGate(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := veto.NewGate(veto.Config{Store: memstore.New(), Rules: []veto.Rule{ruleWith(veto.RuleInfo{ID: "r",
		Risk: veto.RiskMapping{ByReason: map[string]veto.Risk{"ok": veto.RiskCritical}}})}}); err != nil {
		t.Errorf("a critical risk mapping: %v", err)
	}
	// Limits left zero are the defaults: a call past a default bound is refused.
	f := newFixture(t, veto.Config{})
	if v := f.g.Decide(ctx, call("Read", map[string]any{"s": strings.Repeat("x", veto.DefaultLimits.MaxString+1)})); v.Reason != veto.ReasonBoundsExceeded {
		t.Errorf("zero limits: %+v", v)
	}
	// Decisions and reasons seen from a rule's side.
	d := veto.Deny("r", "m")
	if !d.Denied() || d.Reason() != "r" || veto.Allow().Denied() || veto.Allow().Reason() != "" {
		t.Error("decision accessors")
	}
	for _, tc := range []struct {
		d    *veto.Descriptor
		c    veto.Capability
		want bool
	}{{nil, veto.CapReads, false}, {&veto.Descriptor{Caps: veto.CapReads | veto.CapWrites}, veto.CapReads, true},
		{&veto.Descriptor{Caps: veto.CapReads}, veto.CapReads | veto.CapWrites, false}} {
		if tc.d.Has(tc.c) != tc.want {
			t.Errorf("Has(%v) of %+v", tc.c, tc.d)
		}
	}
	if ps := (&veto.Descriptor{Params: map[string]veto.Role{"b": veto.RoleInput, "a": veto.RoleInput, "c": veto.RoleURL}}).ParamsWith(veto.RoleInput); len(ps) != 2 || ps[0] != "a" || ps[1] != "b" {
		t.Errorf("ParamsWith %v", ps)
	}
}

func ruleWith(info veto.RuleInfo) veto.Rule {
	return &rule.Func{RuleInfo: info, Fn: func(context.Context, *veto.Input) (veto.Decision, error) { return veto.Allow(), nil }}
}

// Each tool denial says which, in its own sentence.
func TestToolDenialsSayWhich(t *testing.T) {
	offer := &veto.Offer{RequireRegistered: true, Unavailable: []string{"Off"}, Actors: map[string][]string{"agent:*": {"Read"}}}
	tools := []veto.Descriptor{{Name: "Read"}, {Name: "Off"}, {Name: "Grep"}, {Name: "Zoned", TrustZones: []string{"local"}}}
	f := newFixture(t, veto.Config{Offer: offer, Tools: tools})
	calls := map[veto.ToolDenial]*veto.Call{
		veto.NotRegistered: call("Nope", nil),
		veto.Unavailable:   call("Off", nil),
	}
	c := call("Grep", nil)
	c.Actor = veto.Actor{Kind: "agent", ID: "x"}
	calls[veto.ActorNotAllowed] = c
	c = call("Grep", nil)
	c.Run.AllowedTools = []string{"Read"}
	calls[veto.NotInRunAllowlist] = c
	c = call("Zoned", nil)
	c.Run.TrustZone = "cloud"
	calls[veto.OutsideTrustZone] = c
	want := map[veto.ToolDenial]string{
		veto.NotRegistered:     "This tool is not registered with veto's policy, which requires it.",
		veto.Unavailable:       "This tool is not available in this run.",
		veto.ActorNotAllowed:   "The acting user or agent may not use this tool.",
		veto.NotInRunAllowlist: "This tool is not on this run's list of allowed tools.",
		veto.OutsideTrustZone:  "This tool may not be used by a model outside its trust zone.",
	}
	for td, c := range calls {
		v := f.g.Decide(ctx, c)
		if v.ToolDenial != td || v.Message != want[td] || v.Advice.Policy != "offer" || v.Risk != veto.RiskMedium {
			t.Errorf("%s: %+v, want the message %q", td, v, want[td])
		}
	}
}
