package toolpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vetohq/veto/toolpath"
)

// TestGlobExpandsAsTheShellDoes: patterns in any segment, dot names only
// for a dot pattern, a literal tail taken whether or not it exists, the
// word as written when nothing matches or the filesystem cannot be listed,
// and a bound.
func TestGlobExpandsAsTheShellDoes(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ws/a.go", "ws/b.go", "ws/.hidden.go", "ws/c.txt", "ws/.env", "ws/.git/hooks/.keep",
		"ws/src/x/README.md", "ws/src/y/README.md", "home/.aws/config", "home/.ssh/config"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "home/.ssh"), filepath.Join(root, "ws/keys")); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	env := toolpath.Env{Cwd: ws, Home: filepath.Join(root, "home")}
	for _, c := range []struct {
		raw  string
		want []string // relative to root; nil: not expanded
	}{
		{"*.go", []string{"ws/a.go", "ws/b.go"}},
		{".*.go", []string{"ws/.hidden.go"}},
		{".en?", []string{"ws/.env"}},
		{"[!a]*.go", []string{"ws/b.go"}},
		{"**.txt", []string{"ws/c.txt"}},
		{".gi?/hooks/pre-commit", []string{"ws/.git/hooks/pre-commit"}},
		{"src/*/README.md", []string{"ws/src/x/README.md", "ws/src/y/README.md"}},
		{"~/.aw?/config", []string{"home/.aws/config"}},
		{"key?/config", []string{"ws/keys/config"}}, // through a symlink: Resolve follows it
		{"nothing*", nil},
		{"a.go", nil},
	} {
		got, expanded, err := toolpath.Glob(c.raw, env, 16)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		var want []string
		for _, w := range c.want {
			want = append(want, filepath.Join(root, w))
		}
		slices.Sort(got)
		if expanded != (c.want != nil) || !slices.Equal(got, want) {
			t.Errorf("%s: %v (expanded %v), want %v", c.raw, got, expanded, want)
		}
	}
	if _, _, err := toolpath.Glob("*", env, 2); !errors.Is(err, toolpath.ErrTooMany) {
		t.Errorf("over the bound: %v", err)
	}
	// A POSIX class, which path.Match reads otherwise than bash, matches
	// every name: more files judged, .env among them.
	if got, _, _ := toolpath.Glob(".[[:alpha:]]nv", env, 16); !slices.Contains(got, filepath.Join(ws, ".env")) {
		t.Errorf("a POSIX class: %v", got)
	}
	for raw, want := range map[string]string{"node_modules/*/package.json": "node_modules", "*": ".", "/tmp/*/x": "/tmp",
		"/*": "/", "~/.aw?/config": "~", "a/b": "a/b"} {
		if got := toolpath.GlobPrefix(raw); got != want {
			t.Errorf("GlobPrefix(%q) = %q, want %q", raw, got, want)
		}
	}
	lex := env
	lex.FS = toolpath.Lexical{}
	if got, expanded, err := toolpath.Glob("*.go", lex, 16); expanded || got != nil || err != nil {
		t.Errorf("a filesystem that cannot be listed expanded: %v %v %v", got, expanded, err)
	}
	p, err := toolpath.Resolve(filepath.Join(ws, "keys/config"), env)
	if err != nil || p.Real != filepath.Join(root, "home/.ssh/config") {
		t.Errorf("the expansion through a symlink resolves to %+v %v", p, err)
	}
}
