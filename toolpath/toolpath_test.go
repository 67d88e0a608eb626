package toolpath_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/toolpath"
)

// tree builds a real directory tree:
//
//	root/home/alice/            the fake HOME
//	root/ws/                    the workspace (cwd), a git work tree
//	root/ws/sub/file.txt
//	root/ws/out -> root/outside (absolute symlink leaving the workspace)
//	root/ws/rel -> sub          (relative symlink inside)
//	root/ws/loop1 -> loop2, root/ws/loop2 -> loop1
//	root/ws/dangle -> root/outside/ghost (dangling)
//	root/outside/secret
func tree(t testing.TB) (root string, env toolpath.Env) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/alice", "home/bob", "ws/sub", "ws/.git", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"ws/sub/file.txt", "outside/secret"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"ws/out":    filepath.Join(root, "outside"),
		"ws/rel":    "sub",
		"ws/loop1":  "loop2",
		"ws/loop2":  "loop1",
		"ws/dangle": filepath.Join(root, "outside/ghost"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	env = toolpath.Env{
		Cwd:  filepath.Join(root, "ws"),
		Home: filepath.Join(root, "home/alice"),
		LookupHome: func(name string) (string, error) {
			if name == "bob" {
				return filepath.Join(root, "home/bob"), nil
			}
			return "", errors.New("no such user")
		},
	}
	return root, env
}

func TestResolve(t *testing.T) {
	root, env := tree(t)
	ws, home := env.Cwd, env.Home
	for _, tc := range []struct {
		raw, lexical, real string
		cleaned            string // when it differs from real
	}{
		{"~", home, home, ""},
		{"~/notes.md", home + "/notes.md", home + "/notes.md", ""},
		{"~bob/.ssh/id_rsa", root + "/home/bob/.ssh/id_rsa", root + "/home/bob/.ssh/id_rsa", ""},
		{"$HOME/.bashrc", home + "/.bashrc", home + "/.bashrc", ""},
		{"${HOME}/.bashrc", home + "/.bashrc", home + "/.bashrc", ""},
		{"$HOMEX/a", ws + "/$HOMEX/a", ws + "/$HOMEX/a", ""},
		{"sub/file.txt", ws + "/sub/file.txt", ws + "/sub/file.txt", ""},
		{"./sub/../sub/file.txt", ws + "/sub/file.txt", ws + "/sub/file.txt", ""},
		{"../outside/secret", root + "/outside/secret", root + "/outside/secret", ""},
		{"sub/../../outside", root + "/outside", root + "/outside", ""},
		{ws + "//sub///file.txt", ws + "/sub/file.txt", ws + "/sub/file.txt", ""},
		{"sub/", ws + "/sub", ws + "/sub", ""},
		{"/", "/", "/", ""},
		{"/../../etc/passwd", "/etc/passwd", "/etc/passwd", ""},
		{"file://" + ws + "/sub/file.txt", ws + "/sub/file.txt", ws + "/sub/file.txt", ""},
		{"file://localhost" + ws + "/a%20b", ws + "/a b", ws + "/a b", ""},
		// Symlinks of the existing prefix are followed; the rest is lexical.
		{"out/secret", ws + "/out/secret", root + "/outside/secret", ""},
		{"out/new/deeper.txt", ws + "/out/new/deeper.txt", root + "/outside/new/deeper.txt", ""},
		{"rel/file.txt", ws + "/rel/file.txt", ws + "/sub/file.txt", ""},
		// A dangling symlink is followed to where a write would create its file.
		{"dangle", ws + "/dangle", root + "/outside/ghost", ""},
		// ".." after a symlink is the parent of its target for the kernel,
		// and the parent of the link for a tool that cleans first.
		{"out/../ws/sub", ws + "/ws/sub", root + "/ws/sub", ws + "/ws/sub"},
		{"out/..", ws, root, ws},
		{"out/../outside/secret", ws + "/outside/secret", root + "/outside/secret", ws + "/outside/secret"},
		// Nothing exists below a file; below a missing component, lexical,
		// until ".." climbs back to where things exist.
		{"sub/file.txt/x", ws + "/sub/file.txt/x", ws + "/sub/file.txt/x", ""},
		{"missing/../sub", ws + "/sub", ws + "/sub", ""},
		{"missing/../out/secret", ws + "/out/secret", root + "/outside/secret", ""},
		{"a/b/../../out", ws + "/out", root + "/outside", ""},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			p, err := toolpath.Resolve(tc.raw, env)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if tc.cleaned == "" {
				tc.cleaned = tc.real
			}
			if p.Lexical != tc.lexical || p.Real != tc.real || p.Cleaned != tc.cleaned {
				t.Fatalf("got lexical %s real %s cleaned %s\nwant lexical %s real %s cleaned %s",
					p.Lexical, p.Real, p.Cleaned, tc.lexical, tc.real, tc.cleaned)
			}
		})
	}
}

// slowFS is the live filesystem without the one-call fast path.
type slowFS struct{}

func (slowFS) Lstat(name string) (os.FileInfo, error) { return os.Lstat(name) }
func (slowFS) Readlink(name string) (string, error)   { return os.Readlink(name) }

func TestFastPathAgreesWithWalk(t *testing.T) {
	root, env := tree(t)
	slow := env
	slow.FS = slowFS{}
	for _, raw := range []string{"sub/file.txt", "sub/new.txt", "sub/a/b/c", "out/secret", "out/new", "dangle", "dangle/x",
		"rel", "rel/file.txt", root + "/ws", root + "/ws/out", "/", "/proc/self/environ", "loop1/x", "sub/file.txt/x"} {
		p, err := toolpath.Resolve(raw, env)
		ps, errSlow := toolpath.Resolve(raw, slow)
		if (err == nil) != (errSlow == nil) || p != ps {
			t.Errorf("%q: fast %+v (%v), walk %+v (%v)", raw, p, err, ps, errSlow)
		}
	}
}

func TestResolveRefuses(t *testing.T) {
	_, env := tree(t)
	noHome := env
	noHome.Home = ""
	noCwd := env
	noCwd.Cwd = "relative/dir"
	for _, tc := range []struct {
		name, raw string
		env       toolpath.Env
		want      error
	}{
		{"empty", "", env, toolpath.ErrEmpty},
		{"nul", "a\x00b", env, toolpath.ErrNUL},
		{"loop", "loop1/x", env, toolpath.ErrLoop},
		{"no-home", "~/x", noHome, toolpath.ErrNoHome},
		{"unknown-user", "~mallory/x", env, toolpath.ErrNoHome},
		{"relative-no-cwd", "x", noCwd, toolpath.ErrNoCwd},
		{"remote-file-url", "file://evil.example/etc/passwd", env, toolpath.ErrRemoteFile},
		{"file-url-nul", "file:///a%00b", env, toolpath.ErrNUL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := toolpath.Resolve(tc.raw, tc.env); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := toolpath.Resolve("file:relative", env); err == nil {
		t.Fatal("a file URL without an absolute path resolved")
	}
}

func TestResolveUnreadableDirectoryRefuses(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	root, env := tree(t)
	locked := filepath.Join(root, "ws/locked")
	if err := os.MkdirAll(filepath.Join(locked, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	if _, err := toolpath.Resolve("locked/inner/x", env); err == nil {
		t.Fatal("a path through an unreadable directory resolved")
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		p, root string
		fold    bool
		want    bool
	}{
		{"/ws", "/ws", false, true},
		{"/ws/a", "/ws", false, true},
		{"/wsx", "/ws", false, false},
		{"/w", "/ws", false, false},
		{"/anything", "/", false, true},
		{"/WS/a", "/ws", false, false},
		{"/WS/a", "/ws", true, true},
	} {
		if got := toolpath.Within(tc.p, tc.root, tc.fold); got != tc.want {
			t.Errorf("Within(%q, %q, %v) = %v", tc.p, tc.root, tc.fold, got)
		}
	}
}

func TestWorkspace(t *testing.T) {
	root, env := tree(t)
	sub := env
	sub.Cwd = filepath.Join(root, "ws/sub")
	for _, tc := range []struct {
		name, reported string
		env            toolpath.Env
		want           string
	}{
		{"reported", filepath.Join(root, "outside"), sub, root + "/outside"},
		{"reported-through-link", filepath.Join(root, "ws/out"), sub, root + "/outside"},
		{"git-top", "", sub, root + "/ws"},
		{"cwd-without-git", "", toolpath.Env{Cwd: filepath.Join(root, "home/alice")}, root + "/home/alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolpath.Workspace(tc.reported, tc.env)
			if err != nil || got != tc.want {
				t.Fatalf("Workspace = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzResolve resolves fuzzed paths in a real tree with symlinks that
// leave it. A resolution never panics, is idempotent, and a path it calls
// inside the workspace really is inside it, with every symlink followed.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"sub/file.txt", "out/secret", "out/../ws", "rel/../../x", "~/a", "~bob/b",
		"$HOME/../../ws", "file:///etc/passwd", "loop1", "/a//b/../c/", "..", ".", "sub/./../out/.."} {
		f.Add(s)
	}
	root, env := tree(f)
	ws := filepath.Join(root, "ws")
	slow := env
	slow.FS = slowFS{}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := toolpath.Resolve(raw, env)
		// The kernel's one-call answer and the component walk agree.
		ps, errSlow := toolpath.Resolve(raw, slow)
		if (err == nil) != (errSlow == nil) || p != ps {
			t.Fatalf("%q: fast %+v (%v), walk %+v (%v)", raw, p, err, ps, errSlow)
		}
		if err != nil {
			return
		}
		for _, s := range []string{p.Lexical, p.Real, p.Cleaned} {
			if !strings.HasPrefix(s, "/") || strings.Contains(s, "//") || (len(s) > 1 && strings.HasSuffix(s, "/")) {
				t.Fatalf("not canonical: %q", s)
			}
			for _, c := range strings.Split(s, "/") {
				if c == "." || c == ".." {
					t.Fatalf("component %q left in %q", c, s)
				}
			}
		}
		for _, real := range []string{p.Real, p.Cleaned} {
			again, err := toolpath.Resolve(real, env)
			if err != nil || again.Real != real || again.Lexical != real || again.Cleaned != real {
				t.Fatalf("not idempotent: %q → %q → %+v (%v)", raw, real, again, err)
			}
			if !toolpath.Within(real, ws, false) {
				continue
			}
			// The longest existing prefix must already be real, and inside.
			prefix := real
			for {
				if _, err := os.Lstat(prefix); err == nil {
					break
				}
				prefix = filepath.Dir(prefix)
			}
			onDisk, err := filepath.EvalSymlinks(prefix)
			if err != nil || onDisk != prefix {
				t.Fatalf("%q resolved to %q, whose existing prefix %q is really %q", raw, real, prefix, onDisk)
			}
			if !toolpath.Within(onDisk, ws, false) {
				t.Fatalf("%q claims to be inside the workspace but is %q", raw, onDisk)
			}
		}
	})
}

// BenchmarkResolve is the filesystem's share of a file decision: one
// existing path, resolved on the real filesystem (on Linux one openat2
// and one close).
func BenchmarkResolve(b *testing.B) {
	root, env := tree(b)
	p := filepath.Join(root, "ws", "sub", "file.txt")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toolpath.Resolve(p, env); err != nil {
			b.Fatal(err)
		}
	}
}
