package network_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/policytest"
)

var (
	merge = policytest.Merge
	shows = policytest.Shows
)

// The egress section through a policy's files: a mode and list set, where
// each came from, and what a later file may not do (open what another
// limited, widen a list, name a mode or a host that does not parse).
func TestEgressSectionThroughTheFiles(t *testing.T) {
	type want struct {
		mode    egress.Mode
		allow   []string  // nil: unbounded
		sends   *[]string // nil: not checked
		shown   [][3]string
		problem string
	}
	for _, tc := range []struct {
		name  string
		files []string
		want
	}{
		{"the user's allowlist", []string{policy.KindUser, "egress: {mode: allowlist, allow: [a.example]}"},
			want{mode: egress.Allowlist, allow: []string{"a.example"}, shown: [][3]string{{"egress.mode", "allowlist", "user"}, {"egress.allow", "a.example", "user"}}}},
		{"the user's open", []string{policy.KindUser, "egress: {mode: open}"},
			want{mode: egress.Open, shown: [][3]string{{"egress.mode", "open", "user"}}}},
		{"the user opens what a project limited", []string{policy.KindProject, "egress: {mode: allowlist}", policy.KindUser, "egress: {mode: open}"},
			want{mode: egress.Open, shown: [][3]string{{"egress.mode", "open", "user"}}}},
		{"a project may not open what the user limited", []string{policy.KindUser, "egress: {mode: allowlist}", policy.KindProject, "egress: {mode: open}"},
			want{problem: "only the user's policy may open egress that another file limited, not the project policy"}},
		{"a project may open what no file limited", []string{policy.KindProject, "egress: {mode: open}"},
			want{mode: egress.Open, shown: [][3]string{{"egress.mode", "open", "project"}}}},
		{"a mode that is neither", []string{policy.KindUser, "egress: {mode: closed}"},
			want{problem: `egress.mode: "closed" is not open or allowlist`}},
		{"a host that does not parse", []string{policy.KindUser, "egress: {allow: [\"a b.example\"]}"},
			want{problem: "egress"}},
		{"a project's list after the user's bare allowlist allows nothing",
			[]string{policy.KindUser, "egress: {mode: allowlist}", policy.KindProject, "egress: {allow: [evil.example]}"},
			want{mode: egress.Allowlist, allow: []string{}}},
		{"a list with no mode bounds nothing else",
			[]string{policy.KindProject, "egress: {allow: [a.example, b.example]}"},
			want{allow: []string{"a.example", "b.example"}, shown: [][3]string{{"egress.allow", "a.example, b.example", "project"}}}},
		{"the user's list may be sent to, narrowed by a project's",
			[]string{policy.KindUser, "egress: {allow: [a.example, b.example]}", policy.KindProject, "egress: {allow: [b.example, evil.example]}"},
			want{allow: []string{"b.example"}, sends: &[]string{"b.example"}}},
		{"a project's list alone lets nothing be sent",
			[]string{policy.KindProject, "egress: {allow: [evil.example]}"},
			want{allow: []string{"evil.example"}, sends: &[]string{}}},
		{"no list keeps the earlier one", []string{policy.KindUser, "egress: {mode: allowlist, allow: [a.example]}", policy.KindProject, "egress: {mode: allowlist}"},
			want{mode: egress.Allowlist, allow: []string{"a.example"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := merge(t, tc.files...)
			defer func() {
				if err == nil && tc.sends != nil {
					eg := policy.Effective[egress.Settings](p, egress.SectionKey)
					if !slices.Equal(eg.Sends, *tc.sends) {
						t.Errorf("sends %#v, want %#v", eg.Sends, *tc.sends)
					}
				}
			}()
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("err %v, want %q", err, tc.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eg := policy.Effective[egress.Settings](p, egress.SectionKey)
			if eg.Mode != tc.mode {
				t.Errorf("mode %q, want %q", eg.Mode, tc.mode)
			}
			if (eg.Allow == nil) != (tc.allow == nil) || !slices.Equal(eg.Allow, tc.allow) {
				t.Errorf("allow %#v, want %#v", eg.Allow, tc.allow)
			}
			for _, s := range tc.shown {
				if !shows(p, s[0], s[1], s[2]) {
					t.Errorf("the explanation does not show %s: %s from the %s file: %q", s[0], s[1], s[2], p.Show())
				}
			}
		})
	}
}

// The policy's gate holds net.egress with the merged settings, and the
// default policy file shows the section.
func TestEgressSectionBuildsTheRule(t *testing.T) {
	p, err := merge(t, policy.KindUser, "egress: {mode: allowlist, allow: [a.example]}")
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	run := veto.Run{Ref: "r", Fresh: true}
	for i, tc := range []struct {
		url     string
		allowed bool
	}{{"https://a.example/x", true}, {"https://b.example/x", false}} {
		v := g.Decide(ctx, &veto.Call{ID: string(rune('a' + i)), Tool: "WebFetch", Args: map[string]any{"url": tc.url, "prompt": "p"}, Cwd: "/w", Run: run})
		if v.Allowed != tc.allowed || (!tc.allowed && v.Rule != "net.egress") {
			t.Errorf("%s: %+v, want allowed=%v", tc.url, v, tc.allowed)
		}
	}
	if v := g.Decide(ctx, &veto.Call{ID: "z", Tool: "Grep", Args: map[string]any{"pattern": "x"}, Cwd: "/w", Run: run}); !v.Allowed {
		t.Errorf("a call that names no host, under an allowlist: %+v", v)
	}
	if y := policy.DefaultYAML(); !strings.Contains(y, "egress:") || !strings.Contains(y, "mode: open") {
		t.Errorf("the default policy file has no egress section:\n%s", y)
	}
}
