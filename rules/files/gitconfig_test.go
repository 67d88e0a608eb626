package files

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseGitConfig(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // section.subsection.name=value; ...
		ok   bool
	}{
		{"[core]\n\thooksPath = .githooks ; team hooks\n", "core..hooksPath=.githooks", true},
		{"[core]\n\thooksPath = .githooks # shared\n", "core..hooksPath=.githooks", true},
		{"[core]\n\thooksPath = \"tools/git hooks\" ; quoted\n", "core..hooksPath=tools/git hooks", true},
		{"[core]\n\thooksPath = \"a;b#c\"\n", "core..hooksPath=a;b#c", true},
		{"[core] hooksPath = .husky\n", "core..hooksPath=.husky", true},
		{"[core]hooksPath=.husky", "core..hooksPath=.husky", true},
		{"[core]\n  hooksPath   =   a   b  \n", "core..hooksPath=a   b", true},
		{"[core]\n hooksPath = a\\\nb\n", "core..hooksPath=ab", true},
		{"[core]\n hooksPath = a\\tb\\\\c\\\"d\n", "core..hooksPath=a\tb\\c\"d", true},
		{"[core]\n bare\n", "core..bare=", true},
		{"[core]\n bare ; c\n", "core..bare=", true},
		{"; top\n# top\n[Core]\r\n HooksPath=h\r\n", "Core..HooksPath=h", true},
		{"[remote \"origin\"]\n url = x\n", "remote.origin.url=x", true},
		{"[remote \"a\\\"b\"]\n url = x\n", "remote.a\"b.url=x", true},
		{"[core.Sub]\n x = 1\n", "core.sub.x=1", true},
		{"[core]\n a = 1\n b = \"open\n c = 3\n", "core..a=1", false},
		{"[core]\n a = \\q\n", "", false},
		{"[core\n a = 1\n", "", false},
		{"[core]\n 1a = 1\n", "", false},
		{"[core]\n a b = 1\n", "", false},
		{"", "", true},
	} {
		vars, ok := parseGitConfig(tc.in)
		var got []string
		for _, v := range vars {
			got = append(got, fmt.Sprintf("%s.%s.%s=%s", v.section, v.subsection, v.name, v.value))
		}
		if strings.Join(got, "; ") != tc.want || ok != tc.ok {
			t.Errorf("%q: got %q %v, want %q %v", tc.in, strings.Join(got, "; "), ok, tc.want, tc.ok)
		}
	}
}

// gitQuote writes a value as git config --add would: in double quotes,
// with \ " and the control characters escaped.
func gitQuote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`).Replace(v) + `"`
}

// FuzzParseGitConfig holds the reader to two things: it never panics on
// any file, and a value written quoted, with a comment after it, reads
// back as it was.
func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{"[core]\n\thooksPath = x ; c\n", "[a \"b\"] c", "[x.y]\nz=\"\\\n\"", "a=1"} {
		f.Add(s, ".githooks ; not a comment")
	}
	f.Fuzz(func(t *testing.T, file, value string) {
		_, _ = parseGitConfig(file)
		if strings.ContainsAny(value, "\r\x00") {
			return // git config files hold no NUL; CR LF is read as LF
		}
		text := "[core]\n\thooksPath = " + gitQuote(value) + " ; a comment\n"
		vars, ok := parseGitConfig(text)
		if !ok || len(vars) != 1 || vars[0].value != value {
			t.Fatalf("%q: got %+v %v", text, vars, ok)
		}
	})
}
