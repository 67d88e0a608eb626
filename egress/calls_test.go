package egress_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
)

// knowledge answers a run's egress allow-list, or fails.
type knowledge struct {
	veto.Knowledge
	hosts []string
	err   error
}

func (k knowledge) Egress(context.Context) ([]string, error) { return k.hosts, k.err }

// Check judges every destination under the policy's list plus the run's
// allow events (in allow-list mode only), and answers the first refusal.
func TestCheckAddsTheRunsAllowEvents(t *testing.T) {
	ctx := context.Background()
	p, err := egress.Settings{Mode: egress.Allowlist, Allow: []string{"api.example.com"}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	in := &veto.Input{Call: &veto.Call{Tool: "WebFetch"}, Knowledge: knowledge{hosts: []string{"added.example", "not a host"}}}
	for _, tc := range []struct {
		dests []string
		want  egress.Verdict
	}{
		{nil, egress.Allowed},
		{[]string{"https://api.example.com/x", "https://added.example/y"}, egress.Allowed},
		{[]string{"https://api.example.com/x", "https://other.example/"}, egress.NotListed},
		{[]string{"https://other.example/", "http://169.254.169.254/"}, egress.NotListed},
		{[]string{"http://169.254.169.254/", "https://other.example/"}, egress.Metadata},
		{[]string{"https://api.example.com/", ""}, egress.Unresolvable},
	} {
		if got, err := p.Check(ctx, in, tc.dests); err != nil || got != tc.want {
			t.Errorf("%q: %v %v, want %v", tc.dests, got, err, tc.want)
		}
	}
	// Without knowledge only the policy's list counts.
	if got, _ := p.Check(ctx, &veto.Input{Call: in.Call}, []string{"https://added.example/"}); got != egress.NotListed {
		t.Errorf("without the run's events: %v", got)
	}
	// The run's list cannot be read: the call cannot be vouched for.
	boom := errors.New("store down")
	if got, err := p.Check(ctx, &veto.Input{Call: in.Call, Knowledge: knowledge{err: boom}}, []string{"https://api.example.com/"}); err != boom || got != egress.Unresolvable {
		t.Errorf("unreadable allow events: %v %v", got, err)
	}
	// Open mode neither reads nor needs the run's list.
	open, _ := egress.Settings{}.Compile()
	if got, err := open.Check(ctx, &veto.Input{Call: in.Call, Knowledge: knowledge{err: boom}}, []string{"https://anything.example/"}); err != nil || got != egress.Allowed {
		t.Errorf("open mode: %v %v", got, err)
	}
	if _, err := (egress.Settings{Allow: []string{"*."}}).Compile(); err == nil {
		t.Error("a malformed allow-list compiled")
	}
}

// Destinations: a descriptor's url parameters (and a network tool's
// content), else every argument string that is a URL.
func TestDestinationsOfACall(t *testing.T) {
	fetch := &veto.Descriptor{Name: "fetch", Caps: veto.CapNetwork, Params: map[string]veto.Role{"url": veto.RoleURL, "prompt": veto.RoleContent}}
	write := &veto.Descriptor{Name: "write", Params: map[string]veto.Role{"url": veto.RoleURL, "content": veto.RoleContent}}
	for _, tc := range []struct {
		name string
		d    *veto.Descriptor
		args map[string]any
		want []string
		ok   bool
	}{
		{"url-param", fetch, map[string]any{"url": "https://a.example/", "prompt": "see http://b.example/x and https://c.example."}, []string{"https://a.example/", "http://b.example/x", "https://c.example"}, true},
		{"url-missing", fetch, map[string]any{"prompt": 3}, nil, true},
		{"url-null", fetch, map[string]any{"url": nil}, nil, true},
		{"url-not-string", fetch, map[string]any{"url": []any{"https://a.example/"}}, nil, false},
		{"not-network-content", write, map[string]any{"url": "https://a.example/", "content": "https://b.example/"}, []string{"https://a.example/"}, true},
		// Through the roles in any letter case (issue 27): a tool may read
		// "URL" as its url; both spellings of one parameter are judged.
		{"url-upper", fetch, map[string]any{"URL": "https://a.example/"}, []string{"https://a.example/"}, true},
		{"url-twice", fetch, map[string]any{"url": "https://a.example/", "Url": "https://b.example/"}, []string{"https://a.example/", "https://b.example/"}, true},
		{"url-other-case-not-string", fetch, map[string]any{"uRL": 7}, nil, false},
		{"content-other-case", fetch, map[string]any{"PROMPT": "see https://c.example/"}, []string{"https://c.example/"}, true},
		{"sniffed", nil, map[string]any{"a": " HTTPS://x.example/ ", "b": []any{"ws://y.example", map[string]any{"c": "ftp://z.example"}}, "d": "wss://w.example", "e": "mailto:x", "f": 7},
			[]string{"HTTPS://x.example/", "ws://y.example", "ftp://z.example", "wss://w.example"}, true},
		{"sniffed-http", nil, map[string]any{"a": "http://h.example"}, []string{"http://h.example"}, true},
		{"sniffed-none", nil, map[string]any{"a": "not a url", "b": "http: 200", "c": "https:", "d": "ftp:/ x"}, nil, true},
		// As WHATWG clients read them, a web scheme needs no "//".
		{"sniffed-no-slashes", nil, map[string]any{"a": "https:/x", "b": "http:169.254.169.254/latest", "c": "HTTP:\\\\h.example"},
			[]string{"HTTP:\\\\h.example", "http:169.254.169.254/latest", "https:/x"}, true},
	} {
		got, ok := egress.Destinations(&veto.Input{Call: &veto.Call{Args: tc.args}, Descriptor: tc.d})
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if ok != tc.ok || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, want, tc.ok)
		}
	}
	// The sniffing is bounded: the strings after the first 256 are not read.
	var many []any
	for range 256 {
		many = append(many, "plain")
	}
	many = append(many, "https://late.example/")
	if got, _ := egress.Destinations(&veto.Input{Call: &veto.Call{Args: map[string]any{"l": many}}}); len(got) != 0 {
		t.Errorf("sniffed past the bound: %q", got)
	}
	many[255] = "https://last.example/"
	if got, _ := egress.Destinations(&veto.Input{Call: &veto.Call{Args: map[string]any{"l": many}}}); !slices.Equal(got, []string{"https://last.example/"}) {
		t.Errorf("the 256th string: %q", got)
	}
}

// Embedded finds the URLs inside text, each up to what ends it, without
// trailing punctuation, in any case, with backslashes as some clients read them.
func TestEmbeddedURLs(t *testing.T) {
	for text, want := range map[string][]string{
		"":                                nil,
		"http://":                         nil,
		"go to https://a.example/x, then": {"https://a.example/x"},
		"(http://b.example/y) [HTTPS://C.example] {https://d.example}":   {"http://b.example/y", "HTTPS://C.example", "https://d.example"},
		`"https://e.example/q?x=1"` + "'https://f.example'":              {"https://e.example/q?x=1", "https://f.example"},
		"https:\\\\g.example\\x and http:\\\\h.example":                  {"https:\\\\g.example\\x", "http:\\\\h.example"},
		"<https://i.example/>\thttps://j.example!?\nhttps://k.example;:": {"https://i.example/", "https://j.example", "https://k.example"},
		"https://.":                     nil,
		"hhttps://l.example":            {"https://l.example"},
		"`https://m.example`x":          {"https://m.example"},
		"ends with https://n.example\r": {"https://n.example"},
		"Http://o.example":              {"Http://o.example"},
		"https://p.example" + strings.Repeat(" ", 3) + "h": {"https://p.example"},
	} {
		if got := egress.Embedded(text); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
	var text strings.Builder
	for range 300 {
		text.WriteString("https://x.example ")
	}
	if got := egress.Embedded(text.String()); len(got) != 256 {
		t.Errorf("%d URLs, want the bound of 256", len(got))
	}
}

// Each refusal has its reason code, message and weight; Allowed has none.
func TestRefusalReasonsAndRisks(t *testing.T) {
	for v, want := range map[egress.Verdict]struct {
		code string
		risk veto.Risk
	}{
		egress.Metadata: {"egress_metadata", veto.RiskCritical}, egress.Unresolvable: {"egress_unresolvable", veto.RiskMedium},
		egress.NotListed: {"egress_not_listed", veto.RiskHigh}, egress.Allowed: {"", veto.RiskNone},
	} {
		code, msg := v.Reason()
		if code != want.code || (code == "") != (msg == "") || v.Risk() != want.risk {
			t.Errorf("%v: %q %q %v, want %q %v", v, code, msg, v.Risk(), want.code, want.risk)
		}
	}
	if !slices.Equal(egress.Refusals, []egress.Verdict{egress.Metadata, egress.Unresolvable, egress.NotListed}) {
		t.Errorf("refusals %v", egress.Refusals)
	}
}

// Add appends an allow event's host (a malformed one adds nothing, and the
// list it was added to is unchanged); Key is the form it is recorded under.
func TestAddAndKey(t *testing.T) {
	base, err := egress.ParseList([]string{"a.example"})
	if err != nil {
		t.Fatal(err)
	}
	h := func(s string) egress.Host {
		x, err := egress.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	more := base.Add("b.example").Add("*.c.example").Add("not a host")
	for host, want := range map[string][2]bool{ // base, more
		"a.example": {true, true}, "b.example": {false, true}, "x.c.example": {false, true}, "c.example": {false, false},
	} {
		if base.Allows(h(host)) != want[0] || more.Allows(h(host)) != want[1] {
			t.Errorf("%s: base %v more %v, want %v", host, base.Allows(h(host)), more.Allows(h(host)), want)
		}
	}
	for raw, want := range map[string]string{
		"https://API.Example.com:8443/x": "api.example.com", "http://0xa9fea9fe/": "169.254.169.254", "[::1]:80": "[::1]",
	} {
		if got, err := egress.Key(raw); err != nil || got != want {
			t.Errorf("Key(%q) = %q %v, want %q", raw, got, err, want)
		}
	}
	if _, err := egress.Key(""); err == nil {
		t.Error("Key of nothing")
	}
}
