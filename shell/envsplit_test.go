package shell

import (
	"slices"
	"strings"
	"testing"
)

func envLookup(name string) (string, bool) {
	if name == "HOME" {
		return "/home/u", true
	}
	return "", false
}

func TestSplitEnvS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: an error; "?" an unknown argument
	}{
		{`sh -c "rm -rf ~"`, []string{"sh", "-c", "rm -rf ~"}},
		{`bash -c 'git reset --hard'`, []string{"bash", "-c", "git reset --hard"}},
		{`rm\_-rf\_~`, []string{"rm", "-rf", "~"}},
		{`a"b\_c"d`, []string{"ab cd"}},
		{`a'b\_c'd`, []string{`ab\_cd`}},
		{`'it\'s' 'a\\b'`, []string{"it's", `a\b`}},
		{`  a   b  `, []string{"a", "b"}},
		{"a\tb\nc", []string{"a", "b", "c"}},
		{`a\cb c`, []string{"a"}},
		{`x\tY`, []string{"x\tY"}},
		{`"" ''`, []string{"", ""}},
		{`a #comment b`, []string{"a"}},
		{`a#b`, []string{"a#b"}},
		{`#all`, []string{}},
		{`\#a`, []string{"#a"}},
		{`echo ${HOME}/x`, []string{"echo", "/home/u/x"}},
		{`echo "${HOME}"`, []string{"echo", "/home/u"}},
		{`echo '${HOME}'`, []string{"echo", "${HOME}"}},
		{`echo ${UNSET}`, []string{"echo", "?"}},
		{`echo \$HOME`, []string{"echo", "$HOME"}},
		{`echo $HOME`, nil},
		{`echo ${1x}`, nil},
		{`"\c"`, nil},
		{`\q`, nil},
		{`a\`, nil},
		{`'open`, nil},
		{`"open`, nil},
	} {
		got, err := splitEnvS(tc.in, envLookup)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q: want an error, got %v", tc.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		vals := []string{}
		for _, a := range got {
			if a.unknown {
				vals = append(vals, "?")
			} else {
				vals = append(vals, a.val)
			}
		}
		if !slices.Equal(vals, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, vals, tc.want)
		}
	}
}

// envQuote quotes a word for env -S: in single quotes, only \ and ' are
// escaped.
func envQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// FuzzSplitEnvS holds env -S's splitter to two things: it never panics,
// and words quoted for it come back as they were.
func FuzzSplitEnvS(f *testing.F) {
	for _, s := range []string{`sh -c "rm -rf ~"`, `a\_b`, `'x\'y'`, `${HOME}`, `"a\c"`, `#c`, `a "b c" 'd'`} {
		f.Add(s, "x y")
	}
	f.Fuzz(func(t *testing.T, s, word string) {
		_, _ = splitEnvS(s, envLookup)
		words := []string{word, s}
		line := envQuote(word) + " " + envQuote(s)
		got, err := splitEnvS(line, envLookup)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if len(got) != 2 || got[0].val != words[0] || got[1].val != words[1] || got[0].unknown || got[1].unknown {
			t.Fatalf("%q: got %v, want %q", line, got, words)
		}
	})
}
