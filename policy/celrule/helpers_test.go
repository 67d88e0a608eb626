package celrule

import (
	"errors"
	"path"
	"testing"

	"cel.dev/cel-go/cel"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/glob"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/toolpath"
)

// helpers compiles each of veto's CEL helpers once, as a rule would call
// it on two string arguments.
type helpers struct {
	c                 *Compiler
	fold              bool
	host, glob, under cel.Program
}

func newHelpers(t testing.TB, fold bool) *helpers {
	t.Helper()
	c, err := New(FoldCase(fold))
	if err != nil {
		t.Fatal(err)
	}
	prg := func(expr string) cel.Program {
		ast, iss := c.env.Compile(expr)
		if iss != nil && iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		p, err := c.env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return &helpers{c: c, fold: fold, host: prg(`host(args.a)`), glob: prg(`glob(args.a, args.b)`), under: prg(`path.under(args.a, args.b)`)}
}

func (h *helpers) eval(p cel.Program, a, b string) (any, error) {
	out, _, err := p.Eval(map[string]any{"args": map[string]any{"a": a, "b": b}})
	if err != nil {
		return nil, err
	}
	return out.Value(), nil
}

// wantHost is what the egress rule reads in s, in host()'s form; ok is
// false when it reads no host.
func wantHost(s string) (string, bool) {
	h, err := egress.Parse(s)
	switch {
	case err != nil:
		return "", false
	case h.Addr.IsValid():
		return h.Addr.String(), true
	default:
		return h.Name, h.Name != ""
	}
}

// checkHelpers holds every CEL helper to the Go function it mirrors on
// one input.
func checkHelpers(t *testing.T, h *helpers, a, b string) {
	got, err := h.eval(h.host, a, b)
	want, ok := wantHost(a)
	switch {
	case !ok && err == nil:
		t.Fatalf("host(%q) = %q, and egress reads no host in it: want an error", a, got)
	case ok && err != nil:
		t.Fatalf("host(%q) failed (%v), egress reads %q", a, err, want)
	case ok && got != want:
		t.Fatalf("host(%q) = %q, egress reads %q", a, got, want)
	}
	if ok {
		// The egress rule, given host()'s answer as its allow-list, lets
		// the URL through: a rule and CEL name the same destination.
		l, err := egress.ParseList([]string{want})
		ph, _ := egress.Parse(a)
		ph.Port = 0
		if err != nil || !l.Allows(ph) {
			t.Fatalf("host(%q) = %q, which as an allow-list entry does not allow it (%v)", a, want, err)
		}
	}

	if got, err := h.eval(h.glob, a, b); err != nil || got != glob.Path(a, b) {
		t.Fatalf("glob(%q, %q) = %v, %v; glob.Path says %v", a, b, got, err, glob.Path(a, b))
	}
	wantUnder := toolpath.Within(path.Clean(a), path.Clean(b), h.fold)
	if got, err := h.eval(h.under, a, b); err != nil || got != wantUnder {
		t.Fatalf("path.under(%q, %q) = %v, %v; toolpath.Within says %v", a, b, got, err, wantUnder)
	}

	// A rule's match is glob.Name on the tool name and on kind:id.
	r, err := h.c.Compile(policy.RuleSpec{ID: "m", Deny: "false", Reason: "m", Match: &policy.MatchSpec{Tool: a, Actor: a}})
	if err != nil {
		t.Fatal(err)
	}
	c := &veto.Call{Tool: b, Actor: veto.Actor{Kind: "agent", ID: b}}
	wantApplies := (a == "" || glob.Name(a, b)) && (a == "" || glob.Name(a, "agent:"+b))
	if got := r.(*Rule).AppliesTo(c); got != wantApplies {
		t.Fatalf("match {tool: %q, actor: %q} on %q: %v, glob.Name says %v", a, a, b, got, wantApplies)
	}
}

// The spellings by which host() used to disagree with the egress rule.
var hostSeeds = [][2]string{
	{"https://ｅvil.example/", "evil.example"},   // fullwidth e: IDNA maps it
	{"https://evil%2eexample/", "evil.example"}, // clients percent-decode the host
	{"https://2130706433/", "127.0.0.1"},        // one decimal number is an IPv4 address
	{"https://0x7f.1/", "127.0.0.1"},
	{"https://EVIL.example./x", "evil.example"},
	{"https://good.example@evil.example/", "evil.example"},
	{"https://[::ffff:127.0.0.1]:8443/", "127.0.0.1"},
	{"https://[::1]/", "::1"},
	{"evil.example/path", "evil.example"},
	{"https://api.internal.example:8443/v1", "api.internal.example"},
}

func TestHostIsEgress(t *testing.T) {
	h := newHelpers(t, false)
	for _, s := range hostSeeds {
		got, err := h.eval(h.host, s[0], "")
		if err != nil || got != s[1] {
			t.Errorf("host(%q) = %v, %v; want %q", s[0], got, err, s[1])
		}
	}
	// Where egress reads no host, host() is an error: the rule fails,
	// which denies rule_failed, instead of comparing "" as harmless.
	for _, s := range []string{"", "https://", "https://a\\b@evil.example/", "/just/a/path", "https://exa mple.com/", "https://%zz/"} {
		if got, err := h.eval(h.host, s, ""); err == nil {
			t.Errorf("host(%q) = %v, want an error", s, got)
		}
		if _, err := hostOf(s); !errors.Is(err, ErrNoHost) {
			t.Errorf("hostOf(%q): %v, want ErrNoHost", s, err)
		}
	}
}

func TestHelpersAgreeOnExamples(t *testing.T) {
	h, folded := newHelpers(t, false), newHelpers(t, true)
	for _, in := range [][2]string{
		{"/W/Vendor/x.go", "/w/vendor"}, {"/Users/U/.ssh", "/users/u"},
		{"**/*.pem", "a/b/key.pem"}, {"*.pem", "a/key.pem"}, {"/etc/**", "/etc"}, {"[a]", "[a]"}, {"**/[a]", "x/[a]"},
		{"/w/vendor/x.go", "/w/vendor"}, {"/w/vendorx", "/w/vendor"}, {"/", "/"}, {"a/../b", "b"}, {"", ""},
		{"mcp__db__*", "mcp__db__query"}, {"agent:*", "researcher"},
	} {
		checkHelpers(t, h, in[0], in[1])
		checkHelpers(t, folded, in[0], in[1])
	}
	for _, s := range hostSeeds {
		checkHelpers(t, h, s[0], s[1])
	}
	if got, _ := folded.eval(folded.under, "/W/Vendor/x.go", "/w/vendor"); got != true {
		t.Fatal("path.under on a folding filesystem compared case")
	}
	if got, _ := h.eval(h.under, "/W/Vendor/x.go", "/w/vendor"); got != false {
		t.Fatal("path.under on a case-sensitive filesystem ignored case")
	}
}

// FuzzCELHelpers evaluates every CEL helper through a compiled program
// and holds it to the Go function the built-in rules use on the same
// input: host() to egress.Parse, glob() to glob.Path, a rule's match to glob.Name,
// path.under() to toolpath.Within.
func FuzzCELHelpers(f *testing.F) {
	for _, s := range hostSeeds {
		f.Add(s[0], s[1])
	}
	f.Add("**/*.pem", "a/b/key.pem")
	f.Add("/w/vendor/x.go", "/w/vendor")
	f.Add("agent:*", "x")
	h, folded := newHelpers(f, false), newHelpers(f, true)
	f.Fuzz(func(t *testing.T, a, b string) {
		checkHelpers(t, h, a, b)
		checkHelpers(t, folded, a, b)
	})
}
