package egress_test

import (
	"testing"

	"github.com/vetohq/veto/egress"
)

// Forty-odd spellings of a destination, and the host each must yield.
func TestParseTrickySpellings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://example.com/path", "example.com"},
		{"https://EXAMPLE.com/", "example.com"},
		{"https://example.com./", "example.com"},
		{"https://example.com..", "example.com"},
		{"http://example.com:8080/x", "example.com:8080"},
		{"https://user:pass@example.com/", "example.com"},
		{"https://allowed.example@evil.example/", "evil.example"},
		{"https://allowed.example:443@evil.example/", "evil.example"},
		{"https://a@b@evil.example/", "evil.example"},
		{"https://evil.example?@allowed.example/", "evil.example"},
		{"https://evil.example#@allowed.example/", "evil.example"},
		{"//evil.example/x", "evil.example"},
		{"evil.example", "evil.example"},
		{"evil.example:22", "evil.example:22"},
		{"git@github.com:org/repo.git", "github.com"},
		{"user@host.example:/srv", "host.example"},
		{"ftp://files.example/pub", "files.example"},
		{"http://169.254.169.254/latest", "169.254.169.254"},
		{"http://2852039166/", "169.254.169.254"},
		{"http://0xa9fea9fe/", "169.254.169.254"},
		{"http://0xA9FEA9FE/", "169.254.169.254"},
		{"http://0251.0376.0251.0376/", "169.254.169.254"},
		{"http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"},
		{"http://169.254.43518/", "169.254.169.254"},
		{"http://169.16689662/", "169.254.169.254"},
		{"http://0251.254.169.254/", "169.254.169.254"},
		{"http://127.1/", "127.0.0.1"},
		{"http://0/", "0.0.0.0"},
		{"http://[::1]/", "[::1]"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"http://[fd00:ec2::254]/", "[fd00:ec2::254]"},
		{"http://[FD00:EC2:0:0:0:0:0:254]/", "[fd00:ec2::254]"},
		{"http://[::ffff:169.254.169.254]/", "169.254.169.254"},
		{"http://[::ffff:a9fe:a9fe]/", "169.254.169.254"},
		{"http://[fe80::1%25eth0]/", "[fe80::1]"},
		{"fe80::1%eth0", "[fe80::1]"},
		{"http://xn--bcher-kva.example/", "xn--bcher-kva.example"},
		{"http://bücher.example/", "xn--bcher-kva.example"},
		{"http://BÜCHER.example/", "xn--bcher-kva.example"},
		{"http://ｅｘａｍｐｌｅ．com/", "example.com"},
		{"http://１６９.２５４.１６９.２５４/", "169.254.169.254"},
		{"http://metadata.google.internal./computeMetadata/v1/", "metadata.google.internal"},
		{"HTTPS://Example.COM:443", "example.com:443"},
		{"  https://example.com  ", "example.com"},
		{"https://example.com:notaport/", "example.com"},
		// WHATWG clients (browsers, Node's fetch) skip any slashes and
		// backslashes after a special scheme and end the host at one.
		{"https:///path", "path"},
		{"https:evil.example/x", "evil.example"},
		{"//evil.example@good.example/x", "good.example"},
		{"https://%65vil.example/", "evil.example"},
		{"wss://Socket.Example:9443/chat", "socket.example:9443"},
	} {
		h, err := egress.Parse(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := h.String(); got != tc.want {
			t.Errorf("%q: host %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"", "   ", "https://", "https:///", "user@", "https://%zz/", "https://exa mple.com/", "https://a%2Fb.example/",
		// Clients disagree on a backslash in the authority: veto cannot vouch.
		"https:\\\\evil.example\\x", "https://evil.example\\@good.example/"} {
		if h, err := egress.Parse(bad); err == nil {
			t.Errorf("%q parsed as %v", bad, h)
		}
	}
}

func TestJudge(t *testing.T) {
	l, err := egress.ParseList([]string{"api.example.com", "*.cdn.example", "10.0.0.0/8", "git.example:22", "[2001:db8::1]"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw   string
		known bool
		mode  egress.Mode
		want  egress.Verdict
	}{
		{"https://example.org/", true, egress.Open, egress.Allowed},
		{"http://169.254.169.254/", true, egress.Open, egress.Metadata},
		{"http://0xa9fea9fe/", true, egress.Allowlist, egress.Metadata},
		{"http://[fe80::1]/", true, egress.Open, egress.Metadata},
		{"http://metadata.google.internal/", true, egress.Open, egress.Metadata},
		{"", false, egress.Open, egress.Unresolvable},
		{"", false, egress.Allowlist, egress.Unresolvable},
		{"https://api.example.com/v1", true, egress.Allowlist, egress.Allowed},
		{"https://API.EXAMPLE.COM./v1", true, egress.Allowlist, egress.Allowed},
		{"https://api.example.com@evil.example/", true, egress.Allowlist, egress.NotListed},
		{"https://a.cdn.example/x", true, egress.Allowlist, egress.Allowed},
		{"https://a.b.cdn.example/x", true, egress.Allowlist, egress.Allowed},
		{"https://cdn.example/x", true, egress.Allowlist, egress.NotListed},
		{"https://evilcdn.example/x", true, egress.Allowlist, egress.NotListed},
		{"http://10.1.2.3/", true, egress.Allowlist, egress.Allowed},
		{"http://012.1.2.3/", true, egress.Allowlist, egress.Allowed},
		{"http://11.1.2.3/", true, egress.Allowlist, egress.NotListed},
		{"git.example:22", true, egress.Allowlist, egress.Allowed},
		{"git.example:2222", true, egress.Allowlist, egress.NotListed},
		{"http://[2001:db8::1]/", true, egress.Allowlist, egress.Allowed},
	} {
		if got := egress.Judge(tc.raw, tc.known, tc.mode, l); got != tc.want {
			t.Errorf("%q (%s): %v, want %v", tc.raw, tc.mode, got, tc.want)
		}
	}
	for _, bad := range []string{"*.", "*.10.0.0.1", "a b", "https://"} {
		if _, err := egress.ParseList([]string{bad}); err == nil {
			t.Errorf("allow-list entry %q accepted", bad)
		}
	}
}

// FuzzParse: no panic, the same answer twice, and a parsed host parses to
// itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"https://a@b.example:8/x", "0xa9fea9fe", "[::ffff:1.2.3.4]", "bücher.example", "git@h:r", "1.2.3", "%%", "[", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h1, err1 := egress.Parse(s)
		h2, err2 := egress.Parse(s)
		if (err1 == nil) != (err2 == nil) || h1 != h2 {
			t.Fatalf("%q: two parses differ", s)
		}
		if err1 != nil {
			return
		}
		again, err := egress.Parse(h1.String())
		if err != nil || again != h1 {
			t.Fatalf("%q → %v → %v (%v)", s, h1, again, err)
		}
		_ = egress.Forbidden(h1)
	})
}
