package toolpath_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vetohq/veto/toolpath"
)

// Forms and Any give each distinct form once, Real first, then Cleaned,
// then Lexical, and Any stops at the first that holds.
func TestFormsAndAny(t *testing.T) {
	for _, tc := range []struct {
		p    toolpath.Path
		want []string
	}{
		{toolpath.Path{Lexical: "/a", Real: "/a", Cleaned: "/a"}, []string{"/a"}},
		{toolpath.Path{Lexical: "/l", Real: "/r", Cleaned: "/r"}, []string{"/r", "/l"}},
		{toolpath.Path{Lexical: "/l", Real: "/r", Cleaned: "/c"}, []string{"/r", "/c", "/l"}},
		{toolpath.Path{Lexical: "/c", Real: "/r", Cleaned: "/c"}, []string{"/r", "/c"}},
		{toolpath.Path{Lexical: "/r", Real: "/r", Cleaned: "/c"}, []string{"/r", "/c"}},
	} {
		if got := tc.p.Forms(); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: forms %v, want %v", tc.p, got, tc.want)
		}
		for i, form := range tc.want {
			var asked []string
			if !tc.p.Any(func(f string) bool { asked = append(asked, f); return f == form }) {
				t.Errorf("%+v: Any missed %s", tc.p, form)
			}
			if !slices.Equal(asked, tc.want[:i+1]) {
				t.Errorf("%+v: looking for %s asked %v, want %v", tc.p, form, asked, tc.want[:i+1])
			}
		}
		var asked []string
		if tc.p.Any(func(f string) bool { asked = append(asked, f); return false }) || !slices.Equal(asked, tc.want) {
			t.Errorf("%+v: Any of nothing asked %v", tc.p, asked)
		}
	}
}

// On the Lexical filesystem nothing exists: a path through a real
// symlink resolves lexically, as replay must, never reaching the disk.
func TestLexicalNeverTouchesTheDisk(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(root, "link", "f")
	live, err := toolpath.Resolve(raw, toolpath.Env{Cwd: root, FS: toolpath.OS{}})
	if err != nil || live.Real != filepath.Join(root, "real", "f") {
		t.Fatalf("live resolution %+v %v", live, err)
	}
	lex, err := toolpath.Resolve(raw, toolpath.Env{Cwd: root, FS: toolpath.Lexical{}})
	if err != nil || lex.Real != raw || lex.Cleaned != raw || lex.Lexical != raw {
		t.Fatalf("lexical resolution %+v %v, want %s in every form", lex, err, raw)
	}
	lex, err = toolpath.Resolve(filepath.Join(root, "link", "..", "x"), toolpath.Env{Cwd: root, FS: toolpath.Lexical{}})
	if err != nil || lex.Real != filepath.Join(root, "x") {
		t.Fatalf("lexical link/..: %+v %v", lex, err)
	}
	var l toolpath.Lexical
	if fi, err := l.Lstat(root); fi != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat of an existing directory: %v %v", fi, err)
	}
	if s, err := l.Readlink(filepath.Join(root, "link")); s != "" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Readlink of an existing link: %q %v", s, err)
	}
}

// LiveEnv is this process's: its home, other users' from the user
// database, the live filesystem.
func TestLiveEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	env := toolpath.LiveEnv("/w")
	if env.Cwd != "/w" || env.Home != home || env.LookupHome == nil {
		t.Fatalf("%+v", env)
	}
	if _, ok := env.FS.(toolpath.OS); !ok {
		t.Fatalf("filesystem %T, want the live one", env.FS)
	}
	if h, err := env.LookupHome("root"); err != nil || h == "" {
		t.Errorf("root's home: %q %v", h, err)
	}
	if _, err := env.LookupHome("no-such-user-veto"); err == nil {
		t.Error("a home for no user")
	}
}

// Glob's bound admits exactly max matches; a POSIX class of any kind
// matches every name; a pattern at the root lists the root.
func TestGlobEdges(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a1", "a2", "a3", "b"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := toolpath.Env{Cwd: root}
	if got, ok, err := toolpath.Glob(root+"/a*", env, 3); err != nil || !ok || len(got) != 3 {
		t.Errorf("three matches with a bound of 3: %v %v %v", got, ok, err)
	}
	if _, _, err := toolpath.Glob(root+"/a*", env, 2); !errors.Is(err, toolpath.ErrTooMany) {
		t.Errorf("three matches with a bound of 2: %v", err)
	}
	for _, class := range []string{"[[:alpha:]]", "[[=a=]]", "[[.a.]]"} {
		if got, _, err := toolpath.Glob(root+"/"+class, env, 10); err != nil || len(got) != 4 {
			t.Errorf("%s matched %v %v, want every name", class, got, err)
		}
	}
	if got, ok, err := toolpath.Glob("/*", env, 1000); err != nil || !ok || !slices.Contains(got, "/tmp") && !slices.Contains(got, "/proc") {
		t.Errorf("/* matched %v %v %v", got, ok, err)
	}
}

// What Resolve refuses: a file URL that does not parse, and "~user"
// without a way to look users up.
func TestResolveRefusals(t *testing.T) {
	if _, err := toolpath.Resolve("file:///a%zz", toolpath.Env{Cwd: "/"}); err == nil {
		t.Error("a malformed file URL resolved")
	}
	if _, err := toolpath.Resolve("~bob/x", toolpath.Env{Cwd: "/", Home: "/home/me"}); !errors.Is(err, toolpath.ErrNoHome) {
		t.Errorf("~bob without LookupHome: %v", err)
	}
}
