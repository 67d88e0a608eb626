package shell

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// argvBack parses line as one simple command and returns its words as the
// shell passes them, or false when it is not one (an assignment, a
// keyword, an expansion).
func argvBack(t *testing.T, line string) ([]string, bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) != 0 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 0 {
		return nil, false
	}
	var out []string
	for _, w := range call.Args {
		var b strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				v := p.Value
				for i := 0; i < len(v); i++ {
					if v[i] == '\\' && i+1 < len(v) {
						i++
					}
					b.WriteByte(v[i])
				}
			case *syntax.SglQuoted:
				if p.Dollar {
					return nil, false
				}
				b.WriteString(p.Value)
			default:
				return nil, false
			}
		}
		out = append(out, b.String())
	}
	return out, true
}

func TestArgvLine(t *testing.T) {
	for _, argv := range [][]string{
		{"python3", "-c", "print(2 + 2)"},
		{"FOO=1", "x"},
		{"if", "then"},
		{"rg", "TODO|FIXME", "~/x", "$HOME", "", "it's", "a\nb", "{}", "*.go"},
	} {
		line := ArgvLine(argv)
		got, ok := argvBack(t, line)
		if !ok || !slices.Equal(got, argv) {
			t.Errorf("%q: line %q reads back as %q", argv, line, got)
		}
	}
	if got := ArgvLine([]string{"git", "log", "-n", "5"}); got != "git log -n 5" {
		t.Errorf("plain words are quoted: %q", got)
	}
}

// FuzzArgvLine holds ArgvLine to its promise: the shell reads the line as
// one simple command with exactly the words given.
func FuzzArgvLine(f *testing.F) {
	f.Add("python3", "-c", "print(2 + 2)")
	f.Add("A=1", "$(x)", "'")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if strings.ContainsAny(a+b+c, "\x00\r") || !utf8.ValidString(a) || !utf8.ValidString(b) || !utf8.ValidString(c) {
			return // no NUL or invalid UTF-8 in a JSON argument; the parser reads CR LF as LF
		}
		argv := []string{a, b, c}
		line := ArgvLine(argv)
		got, ok := argvBack(t, line)
		if !ok || !slices.Equal(got, argv) {
			t.Fatalf("%q: line %q reads back as %q", argv, line, got)
		}
	})
}
