package server

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// TestLoopbackHostTakesLoopbackNamesOnly: the names a Host without
// tokens may carry, and the spellings that only look like one.
func TestLoopbackHostTakesLoopbackNamesOnly(t *testing.T) {
	cases := []struct {
		host string
		ok   bool
	}{
		{"localhost", true}, {"LOCALHOST:8181", true}, {"127.0.0.1", true}, {"127.0.0.1:8181", true},
		{"127.255.0.9:1", true}, {"[::1]", true}, {"[::1]:8181", true},

		{"", false}, {"localhost.", false}, {"localhost.:8181", false}, {"localhost.attacker.example", false},
		{"attacker.example", false}, {"127.0.0.1.nip.io", false}, {"127.1", false}, {"2130706433", false},
		{"0x7f000001", false}, {"0.0.0.0", false}, {"10.0.0.1", false}, {"::1", false}, {"[::1", false},
		{"[::1]]", false}, {"[::1]:", false}, {"[::1]x", false}, {"localhost:", false}, {"localhost:80:80", false},
		{"localhost:http", false}, {"localhost:123456", false}, {"[127.0.0.1]", false}, {"[::ffff:127.0.0.1]", false},
		{"[fe80::1%lo]", false}, {"[]", false}, {":8181", false}, {"[::]", false}, {"127.0.0.1 ", false},
		{"localhost\x00", false}, {strings.Repeat("a", 300), false},
	}
	for _, c := range cases {
		if got := loopbackHost(c.host); got != c.ok {
			t.Errorf("loopbackHost(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}

// TestIsJSONTakesOneJSONType: a body's type without tokens.
func TestIsJSONTakesOneJSONType(t *testing.T) {
	cases := []struct {
		values []string
		ok     bool
	}{
		{[]string{"application/json"}, true}, {[]string{"Application/JSON; charset=utf-8"}, true},
		{nil, false}, {[]string{""}, false}, {[]string{"text/plain"}, false}, {[]string{"text/plain; x=application/json"}, false},
		{[]string{"application/json", "application/json"}, false}, {[]string{"application/json, text/plain"}, false},
		{[]string{"application/x-www-form-urlencoded"}, false}, {[]string{"multipart/form-data; boundary=x"}, false},
		{[]string{"application/jsonp"}, false}, {[]string{"application/json;"}, true}, {[]string{"application/json; charset"}, false},
	}
	for _, c := range cases {
		if got := isJSON(c.values); got != c.ok {
			t.Errorf("isJSON(%q) = %v, want %v", c.values, got, c.ok)
		}
	}
}

// FuzzLocalRefusal: whatever Host, Origin, Sec-Fetch-Site and
// Content-Type a request carries, the checks never panic, answer the
// same twice, and serve only what they promise: a Host whose name is
// localhost or a loopback address, an Origin (if any) that is the
// request's own, a body (if any) declared application/json.
func FuzzLocalRefusal(f *testing.F) {
	f.Add("POST", "127.0.0.1:8181", "http://127.0.0.1:8181", "same-origin", "application/json")
	f.Add("POST", "localhost", "", "", "text/plain")
	f.Add("GET", "attacker.example:8181", "", "", "")
	f.Add("POST", "[::1]:1", "null", "cross-site", "application/json; charset=utf-8")
	f.Add("POST", "LOCALHOST:1", "HTTP://localhost:1", "none", "application/json")
	f.Fuzz(func(t *testing.T, method, host, origin, site, ctype string) {
		r := &http.Request{Method: method, Host: host, Header: http.Header{}}
		if origin != "" {
			r.Header["Origin"] = []string{origin}
		}
		if site != "" {
			r.Header["Sec-Fetch-Site"] = []string{site}
		}
		if ctype != "" {
			r.Header["Content-Type"] = []string{ctype}
		}
		_, reason, _ := localRefusal(r)
		_, reason2, _ := localRefusal(r)
		_, body, _ := bodyRefusal(r)
		_, body2, _ := bodyRefusal(r)
		if reason != reason2 || body != body2 {
			t.Fatalf("two answers: %q %q, %q %q", reason, reason2, body, body2)
		}
		if reason == "" {
			name, ok := splitHost(host)
			if !ok {
				t.Fatalf("served a Host that does not split: %q", host)
			}
			name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
			a, err := netip.ParseAddr(name)
			if !strings.EqualFold(name, "localhost") && (err != nil || !a.IsLoopback()) {
				t.Fatalf("served the Host %q", host)
			}
			if origin != "" && !strings.EqualFold(origin, "http://"+host) {
				t.Fatalf("served the Origin %q for the Host %q", origin, host)
			}
			if site != "" && site != "same-origin" && site != "none" {
				t.Fatalf("served Sec-Fetch-Site %q", site)
			}
		}
		if body == "" && method != "GET" && method != "HEAD" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ctype)), "application/json") {
			t.Fatalf("took a %s body of type %q", method, ctype)
		}
	})
}

// BenchmarkLocalChecks is what the checks without tokens add to a
// request: a JSON post from the harness, served.
func BenchmarkLocalChecks(b *testing.B) {
	r := &http.Request{Method: "POST", Host: "127.0.0.1:8181", Header: http.Header{
		"Content-Type": {"application/json; charset=utf-8"}, "Origin": {"http://127.0.0.1:8181"}, "Sec-Fetch-Site": {"same-origin"}}}
	for b.Loop() {
		if _, reason, _ := localRefusal(r); reason != "" {
			b.Fatal(reason)
		}
		if _, reason, _ := bodyRefusal(r); reason != "" {
			b.Fatal(reason)
		}
	}
}
