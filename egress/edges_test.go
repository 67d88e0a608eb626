package egress_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/egress"
)

// The edges of the parser: schemes (special or not, with digits, signs or
// a leading digit), empty userinfo, a path after a bare host, IDNA's
// non-transitional mapping and underscores, loose IPv4 out of range, and
// a name too long for DNS.
func TestParseEdges(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ftp:files.example/pub", "files.example"},
		{"https://@evil.example/", "evil.example"},
		{"zz://evil.example/", "evil.example"},
		{"s0+-.x://h.example/", "h.example"},
		{"0s://h.example", "0s"},
		{"evil.example/x?y", "evil.example"},
		{"evil.example?x", "evil.example"},
		{"faß.example", "xn--fa-hia.example"},
		{"a_b.example", "a_b.example"},
		{"A_B.Example", "a_b.example"},
		{"a_0.example", "a_0.example"},
		{"http://256.1.2.3/", "256.1.2.3"},
		{"http://1.2.3.256/", "1.2.3.256"},
		{"http://1.2.65535/", "1.2.255.255"},
		{"http://1.2.65536/", "1.2.65536"},
	} {
		h, err := egress.Parse(tc.in)
		if err != nil || h.String() != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, h.String(), err, tc.want)
		}
	}
	long := strings.Repeat("abcdefghi.", 25) + "example" // 257 bytes
	for _, bad := range []string{"x y://evil.example/", long} {
		if h, err := egress.Parse(bad); err == nil {
			t.Errorf("%q parsed as %q", bad, h.String())
		}
	}
	if h, err := egress.Parse(strings.Repeat("a", 63) + ".example"); err != nil || h.Name == "" {
		t.Errorf("a 63-byte label: %v %v", h, err)
	}
}

// Every metadata name and address is forbidden in every mode; an entry is
// read without the spaces around it; a destination that does not parse is
// unresolvable, not merely unlisted.
func TestMetadataAndEntryEdges(t *testing.T) {
	var none egress.List
	for _, raw := range []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal",
		"metadata.azure.com", "metadata.packet.net", "169.254.1.1", "[fe80::9]", "[fd00:ec2::254]", "100.100.100.200", "168.63.129.16", "192.0.0.192"} {
		if v := egress.Judge(raw, true, egress.Open, none); v != egress.Metadata {
			t.Errorf("%s: %v, want metadata", raw, v)
		}
	}
	for _, raw := range []string{"100.100.100.201", "168.63.129.17", "192.0.0.193", "[fd00:ec2::255]", "metadata.example"} {
		if v := egress.Judge(raw, true, egress.Open, none); v != egress.Allowed {
			t.Errorf("%s: %v, want allowed", raw, v)
		}
	}
	l, err := egress.ParseList([]string{" *.cdn.example ", "\t10.0.0.0/8 "})
	if err != nil {
		t.Fatal(err)
	}
	if v := egress.Judge("https://a.cdn.example/", true, egress.Allowlist, l); v != egress.Allowed {
		t.Errorf("a spaced wildcard entry: %v", v)
	}
	for _, mode := range []egress.Mode{egress.Open, egress.Allowlist} {
		if v := egress.Judge("https://", true, mode, l); v != egress.Unresolvable {
			t.Errorf("%s: an unparseable destination is %v", mode, v)
		}
	}
}

// The metadata addresses are forbidden however an address or a name
// spells them: embedded in NAT64, 6to4 or IPv4-compatible IPv6, or as a
// name under a wildcard DNS service (nip.io, sslip.io, xip.io) in its
// dotted, dashed or hex form. The same spellings of other addresses, and
// the services themselves, are not.
func TestMetadataSpellings(t *testing.T) {
	var none egress.List
	for _, raw := range []string{"[64:ff9b::a9fe:a9fe]", "[64:ff9b::169.254.169.254]", "[2002:a9fe:a9fe::]", "[::169.254.169.254]",
		"[::ffff:a9fe:a9fe]", "[fd20:ce::254]", "http://[fd00:ec2:0:0:0:0:0:254]/", "169.254.169.254.nip.io", "169-254-169-254.sslip.io",
		"app.169.254.169.254.sslip.io", "app-169-254-169-254.sslip.io", "a9fea9fe.nip.io", "x-a9fea9fe.nip.io", "169.254.169.254.xip.io",
		"fd00-ec2--254.sslip.io", "http://100.100.100.200.nip.io:80/", "[64:ff9b:1::a9fe:a9fe]"} {
		if v := egress.Judge(raw, true, egress.Open, none); v != egress.Metadata {
			t.Errorf("%s: %v, want metadata", raw, v)
		}
	}
	for _, raw := range []string{"nip.io", "sslip.io", "93-184-216-34.sslip.io", "127.0.0.1.nip.io", "10.0.0.1.nip.io", "[64:ff9b::5db8:d822]",
		"[2002:5db8:d822::1]", "[::1]", "[::]", "web-169.example.com", "169.254.169.254.example.com", "localtest.me", "app.lvh.me"} {
		if v := egress.Judge(raw, true, egress.Open, none); v != egress.Allowed {
			t.Errorf("%s: %v, want allowed", raw, v)
		}
	}
	for raw, want := range map[string]string{"10.0.0.1.nip.io": "10.0.0.1", "10-0-0-1.sslip.io": "10.0.0.1", "0a000001.nip.io": "10.0.0.1",
		"app.localtest.me": "127.0.0.1", "a.b.10.1.2.3.nip.io": "10.1.2.3"} {
		a, ok := egress.SpelledAddr(raw)
		if !ok || a.String() != want {
			t.Errorf("SpelledAddr(%s) = %v %v, want %s", raw, a, ok, want)
		}
	}
	if _, ok := egress.SpelledAddr("example.com"); ok {
		t.Error("example.com spells an address")
	}
}
