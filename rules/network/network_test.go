package network_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rules/network"
	"github.com/vetohq/veto/tools"
)

var ctx = context.Background()

func gate(t testing.TB, mode egress.Mode, allow ...string) *veto.Gate {
	t.Helper()
	l, err := egress.ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	g, err := veto.NewGate(veto.Config{Rules: []veto.Rule{network.Rule(egress.Policy{Mode: mode, Allow: l})},
		Tools: tools.Defaults(), Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestEmbedded(t *testing.T) {
	got := egress.Embedded("see <https://a.example/x>, HTTP://B.example. and httpx://no and 'https://c.example:8/p?q=1'")
	want := []string{"https://a.example/x", "HTTP://B.example", "https://c.example:8/p?q=1"}
	if len(got) != len(want) {
		t.Fatalf("Embedded = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Embedded = %q, want %q", got, want)
		}
	}
}

func TestEgressRule(t *testing.T) {
	open := gate(t, egress.Open)
	list := gate(t, egress.Allowlist, "api.example.com", "*.corp.example", "192.168.0.0/16", "[2001:db8::1]:8443")
	for _, tc := range []struct {
		name   string
		g      *veto.Gate
		tool   string
		args   map[string]any
		reason string // "" : allow
	}{
		{"open: any public host", open, "WebFetch", map[string]any{"url": "https://example.org/"}, ""},
		{"open: metadata by name", open, "WebFetch", map[string]any{"url": "http://metadata.google.internal./computeMetadata/v1/"}, "egress_metadata"},
		{"open: metadata in decimal", open, "WebFetch", map[string]any{"url": "http://2852039166/"}, "egress_metadata"},
		{"open: metadata over IPv6", open, "WebFetch", map[string]any{"url": "http://[fd00:ec2::254]/"}, "egress_metadata"},
		{"open: link-local with a zone", open, "WebFetch", map[string]any{"url": "http://[fe80::1%25eth0]/"}, "egress_metadata"},
		{"open: userinfo trick to metadata", open, "WebFetch", map[string]any{"url": "http://example.org@169.254.169.254/"}, "egress_metadata"},
		{"open: no host", open, "WebFetch", map[string]any{"url": "https://"}, "egress_unresolvable"},
		{"open: url not a string", open, "WebFetch", map[string]any{"url": []any{"https://example.org"}}, "egress_unresolvable"},
		{"open: MCP fetch tool", open, "mcp__fetch__fetch", map[string]any{"url": "http://169.254.169.254/"}, "egress_metadata"},
		{"open: sniffed from an unknown tool", open, "mcp__x__go", map[string]any{"deep": []any{map[string]any{"u": " HTTP://169.254.169.254/ "}}}, "egress_metadata"},
		{"open: unknown tool without URLs", open, "mcp__x__go", map[string]any{"q": "169.254.169.254"}, ""},
		{"open: Gemini web_fetch reads URLs from its prompt", open, "web_fetch", map[string]any{"prompt": "Summarise https://example.org/a and (http://169.254.169.254/latest)."}, "egress_metadata"},
		{"list: Gemini web_fetch, every URL in the prompt", list, "web_fetch", map[string]any{"prompt": "compare https://api.example.com/x with https://evil.example/y"}, "egress_not_listed"},
		{"list: Gemini web_fetch, listed URLs only", list, "web_fetch", map[string]any{"prompt": "read https://API.example.com/x, then https://go.corp.example/y."}, ""},
		{"list: listed", list, "WebFetch", map[string]any{"url": "https://API.EXAMPLE.COM:443/x"}, ""},
		{"list: punycode of a listed unicode name is the same host", list, "WebFetch", map[string]any{"url": "https://xn--bcher-kva.corp.example/"}, ""},
		{"list: unicode below a wildcard", list, "WebFetch", map[string]any{"url": "https://bücher.corp.example/"}, ""},
		{"list: suffix that is not a subdomain", list, "WebFetch", map[string]any{"url": "https://evilcorp.example/"}, "egress_not_listed"},
		{"list: CIDR", list, "WebFetch", map[string]any{"url": "http://192.168.3.4:8080/"}, ""},
		{"list: CIDR in hex", list, "WebFetch", map[string]any{"url": "http://0xc0a80304/"}, ""},
		{"list: port-bound v6", list, "WebFetch", map[string]any{"url": "https://[2001:db8::1]:8443/"}, ""},
		{"list: port-bound v6 elsewhere", list, "WebFetch", map[string]any{"url": "https://[2001:db8::1]/"}, "egress_not_listed"},
		{"list: userinfo trick", list, "WebFetch", map[string]any{"url": "https://api.example.com:x@evil.example/"}, "egress_not_listed"},
		{"list: a backslash in the authority: clients disagree, veto cannot vouch", list, "WebFetch", map[string]any{"url": "https://evil.example\\@api.example.com/"}, "egress_unresolvable"},
		{"list: slashes and backslashes after a special scheme", list, "WebFetch", map[string]any{"url": "https:/\\evil.example/x"}, "egress_not_listed"},
		{"list: a percent-encoded host is decoded", list, "WebFetch", map[string]any{"url": "https://api%2Eexample%2Ecom/"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.g.Decide(ctx, &veto.Call{ID: "c", Tool: tc.tool, Args: tc.args, Run: veto.Run{Ref: tc.name, Fresh: true}})
			if tc.reason == "" {
				if !v.Allowed {
					t.Fatalf("denied %s/%s, want allow", v.Rule, v.Reason)
				}
				return
			}
			if v.Allowed || v.Rule != "net.egress" || v.Reason != tc.reason {
				t.Fatalf("got allowed=%v %s/%s, want net.egress/%s", v.Allowed, v.Rule, v.Reason, tc.reason)
			}
		})
	}
}

// BenchmarkWebFetchDecision is a WebFetch judged against a 50-entry
// allow-list, recorded in memory.
func BenchmarkWebFetchDecision(b *testing.B) {
	allow := []string{"*.corp.example", "10.0.0.0/8"}
	for i := range 48 {
		allow = append(allow, "h"+strconv.Itoa(i)+".example.com")
	}
	g := gate(b, egress.Allowlist, allow...)
	args := map[string]any{"url": "https://h47.example.com/v1/items?q=1", "prompt": "p"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		v := g.Decide(ctx, &veto.Call{ID: "b" + strconv.Itoa(i), Tool: "WebFetch", Args: args, Run: veto.Run{Ref: "r", Fresh: true}})
		if !v.Allowed {
			b.Fatal(v.Reason)
		}
		i++
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := egress.Parse("https://user@Bücher.Example.COM.:8443/path?q=1"); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzEmbedded(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "x http://b y", "httphttps://c", "HTTPS:\\\\d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, u := range egress.Embedded(s) {
			if len(u) < 7 || !strings.EqualFold(u[:4], "http") || !strings.Contains(s, u) {
				t.Fatalf("%q yielded %q", s, u)
			}
		}
	})
}
