package rule

import (
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

func okBuild(*Build) error { return nil }

func fam(name string, rules ...*Info) *Family {
	return &Family{Name: name, Rules: rules, Build: okBuild}
}

func info(id string, reasons ...*Reason) *Info {
	return &Info{ID: id, Risk: veto.RiskLow, Reasons: reasons}
}

var because = &Reason{Code: "because", Message: "Because."}

type sec struct {
	A []string `yaml:"a"`
}

// TestRegisterRefusesMistakes: registration refuses, at init, every
// malformed or duplicate declaration, and a refused family changes
// nothing.
func TestRegisterRefusesMistakes(t *testing.T) {
	if err := register(fam("reg-base", info("reg.one", because))); err != nil {
		t.Fatal(err)
	}
	section := func(key string) *Section {
		return NewSection(key, "", nil, func(*[]string, *sec, *Layer) {})
	}
	if err := register(&Family{Name: "reg-sec", Sections: []*Section{section("regsec")}, Build: okBuild}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    *Family
		want string
	}{
		{"nil", nil, "needs a name"},
		{"bad name", fam("Bad Name"), "needs a name"},
		{"no build", &Family{Name: "reg-nobuild"}, "no Build"},
		{"duplicate family", fam("reg-base"), "duplicate family"},
		{"bad rule id", fam("reg-a", info("Not.Valid", because)), "malformed rule id"},
		{"no reasons", fam("reg-b", info("reg.two")), "declares no reason codes"},
		{"bad reason", fam("reg-c", info("reg.three", &Reason{Code: "Bad Code", Message: "x"})), "malformed reason code"},
		{"duplicate reason", fam("reg-d", info("reg.four", because, because)), "duplicate reason code"},
		{"no message", fam("reg-e", info("reg.five", &Reason{Code: "silent"})), "has no message"},
		{"bad risk", fam("reg-f", info("reg.six", &Reason{Code: "x", Message: "x", Risk: veto.RiskCritical + 1})), "invalid risk"},
		{"duplicate rule across families", fam("reg-g", info("reg.one", because)), "duplicate rule id"},
		{"duplicate rule in a family", fam("reg-h", info("reg.seven", because), info("reg.seven", because)), "duplicate rule id"},
		{"duplicate section", &Family{Name: "reg-i", Sections: []*Section{section("regsec")}, Build: okBuild}, "already declared"},
		{"section without a type", &Family{Name: "reg-j", Sections: []*Section{{Key: "untyped"}}, Build: okBuild}, "needs a key and a type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := register(tc.f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("register: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if got := IDs(); len(got) != 1 || got[0] != "reg.one" {
		t.Errorf("IDs() = %v: a refused family left rules behind", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Register did not panic on a duplicate")
		}
	}()
	Register(fam("reg-base"))
}

// TestMergeHelpers: the typed merge helpers narrow as a later file may.
func TestMergeHelpers(t *testing.T) {
	var probs []string
	user := &Layer{Kind: "user", Trusted: true, Section: "s", Report: func(m string, _ ...any) { probs = append(probs, m) },
		Origin: func(string, string, ...any) {}}
	project := &Layer{Kind: "project", Section: "s", Report: user.Report, Origin: user.Origin}
	none := func() []string { return []string{} }

	if got := Shorten(user, []string{"a"}, []string{"a", "b"}, none); strings.Join(got, ",") != "a,b" {
		t.Errorf("the user's file replaces: %v", got)
	}
	if got := Shorten(project, []string{"a", "c"}, []string{"a", "b"}, none); strings.Join(got, ",") != "a" {
		t.Errorf("a project keeps what both hold: %v", got)
	}
	if got := Shorten(project, nil, []string{"a"}, none); len(got) != 0 || got == nil {
		t.Errorf("a project cannot add to an empty list: %#v", got)
	}
	if got := Shorten(project, nil, []string{"a"}, nil); strings.Join(got, ",") != "a" {
		t.Errorf("a project narrows an unbounded list to its own: %v", got)
	}
	if got, ok := Lower(project, 5, 9); got != 5 || ok {
		t.Errorf("a project cannot raise a limit: %d %v", got, ok)
	}
	if got, ok := Lower(project, 5, 2); got != 2 || !ok {
		t.Errorf("a project lowers a limit: %d %v", got, ok)
	}
	if got, ok := Lower(user, 5, 9); got != 9 || !ok {
		t.Errorf("the user's file sets a limit: %d %v", got, ok)
	}
	if got, ok := Lower(project, 5, 0); got != 5 || ok {
		t.Errorf("an unset limit changes nothing: %d %v", got, ok)
	}
	check := func(s string) error {
		if s == "bad" {
			return errBad
		}
		return nil
	}
	if got := Append(project, []string{"a"}, []string{"b", "bad"}, "k", check); strings.Join(got, ",") != "a,b" || len(probs) != 1 ||
		probs[0] != "s.k: bad entry" {
		t.Errorf("append: %v, problems %q", got, probs)
	}
}

type badErr struct{}

func (badErr) Error() string { return "bad entry" }

var errBad = badErr{}
