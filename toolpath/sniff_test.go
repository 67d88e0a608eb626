package toolpath

import (
	"slices"
	"testing"
)

// TestSniff: the path-like strings of an undescribed tool's arguments,
// at any depth, in key order; URLs, words with spaces and plain words
// are not paths. Nothing is left out after many strings: padding does
// not hide a path.
func TestSniff(t *testing.T) {
	args := map[string]any{
		"b": []any{"~/.ssh/id_rsa", "hello", map[string]any{"x": "./notes.md"}},
		"a": "https://example.com/x",
		"c": "id_ed25519", "d": "server.pem", "e": "two words/here", "f": "file:///etc/passwd", "g": "$HOME/.netrc",
	}
	want := []string{"~/.ssh/id_rsa", "./notes.md", "id_ed25519", "server.pem", "file:///etc/passwd", "$HOME/.netrc"}
	if got := Sniff(args); !slices.Equal(got, want) {
		t.Fatalf("Sniff: %q, want %q", got, want)
	}
	padded := []any{}
	for range 1000 {
		padded = append(padded, "a/b")
	}
	padded = append(padded, "/etc/shadow")
	if got := Sniff(map[string]any{"p": padded}); len(got) != 1001 || got[1000] != "/etc/shadow" {
		t.Fatalf("a path after padding: %d paths", len(got))
	}
}

// TestPathLikeSpacesAndSchemes: a path with spaces in it is a path when
// it starts as one plainly does; prose is not. A web scheme without its
// "//" is a URL, not a relative path, unless it climbs with "..".
func TestPathLikeSpacesAndSchemes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"/etc/cron.d/daily job", true},
		{"$HOME/.config/autostart/my app.desktop", true},
		{"~/Library/Application Support/x", true},
		{"./docs/Meeting Notes.md", true},
		{"../up one/x", true},
		{"file:///tmp/a b", true},
		{"/review this PR", false},
		{"/ is the root", false},
		{"/usr/ bin", false},
		{"Fixed the bug in src/main.go and docs", false},
		{"stand-up: notes / actions", false},
		{"~ is home", false},
		{"two\nlines/x", false},
		{"http:169.254.169.254/latest/meta-data/", false},
		{"HTTPS:/example.com/x", false},
		{"ws:host/x", false},
		{"http:../../etc/passwd", true},
		{"git:repo/x", true},
	} {
		if got := PathLike(tc.s); got != tc.want {
			t.Errorf("PathLike(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
