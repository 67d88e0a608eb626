package server_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeNoAuthHoldsToLoopback: veto serve --insecure-no-auth refuses,
// on the API and on the page alike, a Host that is not a loopback name
// (a DNS-rebound page) and a cross-site text/plain post; a local harness
// posting JSON to its own address is served.
func TestServeNoAuthHoldsToLoopback(t *testing.T) {
	w := newWorld(t)
	p := serveProcess(t, w, "--state", filepath.Join(t.TempDir(), "veto.db"), "--insecure-no-auth")
	call := `{"call_id":"c1","tool":"Read","args":{"file_path":"README.md"},"cwd":"` + w.work + `","run":{"ref":"r1","fresh":true}}`
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		reason                   string
	}{
		{"rebound Host, the log", "GET", "/v1/events?all=1", "", map[string]string{"Host": "attacker.example"}, 403, "host_refused"},
		{"rebound Host, the page", "GET", "/ui", "", map[string]string{"Host": "attacker.example"}, 403, "host_refused"},
		{"cross-site page post", "POST", "/ui/login", "k=x",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}, 403, "origin_refused"},
		{"cross-site text/plain decide", "POST", "/v1/decide", call,
			map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 403, "origin_refused"},
		{"text/plain decide", "POST", "/v1/decide", call, map[string]string{"Content-Type": "text/plain"}, 415, "content_type_refused"},
		{"the harness", "POST", "/v1/decide", call, map[string]string{"Content-Type": "application/json"}, 200, `"verdict":"allow"`},
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, p.url+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.headers {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.reason) {
				t.Fatalf("%s %s: %d %s, want %d %s", c.method, c.path, resp.StatusCode, b, c.status, c.reason)
			}
		})
	}
}
