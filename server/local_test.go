package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// noAuth is a service without tokens (veto serve --insecure-no-auth).
func noAuth(t *testing.T) *service {
	t.Helper()
	w := newWorld(t)
	st, d := sqliteStore(t)
	return start(t, w, st, d, func(c *server.Config) { c.Tokens = nil })
}

// send sends one request with the headers given (Host among them) and
// returns the status and the raw answer.
func (s *service) send(method, path, body string, headers map[string]string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	// A stream served (the log read through a rebound Host) never ends:
	// the client gives up, and the case fails on its status.
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestNoAuthRefusesWhatAPageCouldSend: without tokens, a request a web
// page could make is refused before any handler, and records nothing:
// a cross-site text/plain post (no CORS preflight) forging a decision or
// an observation, a JSON post from another origin, a Host that is not a
// loopback name (DNS rebinding reading the log), a sandboxed frame's
// Origin null. What a local harness sends (JSON, its own Host, no Origin
// or its own) is served.
func TestNoAuthRefusesWhatAPageCouldSend(t *testing.T) {
	s := noAuth(t)
	host := strings.TrimPrefix(s.url, "http://")
	decide, _ := json.Marshal(s.call("c1", "forged", "Read", map[string]any{"file_path": "README.md"}))
	observe, _ := json.Marshal(map[string]any{"call_id": "c1", "tool": "Read", "args": map[string]any{"file_path": "README.md"},
		"cwd": s.work, "run": map[string]any{"ref": "forged", "fresh": true}, "outcome": "succeeded"})
	hook := `{"session_id":"forged","cwd":"` + s.work + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"README.md"},"tool_use_id":"t1"}`
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		reason                   string
	}{
		{"cross-site text/plain decide", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, server.ReasonOriginRefused},
		{"text/plain decide, no Origin", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "text/plain"}, 415, server.ReasonContentTypeRefused},
		{"form observe", "POST", "/v1/observe", string(observe),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, server.ReasonContentTypeRefused},
		{"no Content-Type observe", "POST", "/v1/observe", string(observe), nil, 415, server.ReasonContentTypeRefused},
		{"two Content-Types", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json, text/plain"}, 415, server.ReasonContentTypeRefused},
		{"JSON from another origin", "POST", "/v1/observe", string(observe),
			map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, server.ReasonOriginRefused},
		{"JSON from another loopback port", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403, server.ReasonOriginRefused},
		{"Origin null", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403, server.ReasonOriginRefused},
		{"same-site fetch", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403, server.ReasonOriginRefused},
		{"rebound Host reads the log", "GET", "/v1/events?all=1", "",
			map[string]string{"Host": "attacker.example:" + portOf(host)}, 403, server.ReasonHostRefused},
		{"rebound Host reads a run", "GET", "/v1/runs/forged/events", "",
			map[string]string{"Host": "attacker.example"}, 403, server.ReasonHostRefused},
		{"rebound Host reads the policy", "GET", "/v1/policy", "", map[string]string{"Host": "localhost.attacker.example"}, 403, server.ReasonHostRefused},
		{"rebound Host decides", "POST", "/v1/decide", string(decide),
			map[string]string{"Host": "attacker.example", "Content-Type": "application/json"}, 403, server.ReasonHostRefused},
		{"trailing-dot Host", "GET", "/v1/policy", "", map[string]string{"Host": "localhost."}, 403, server.ReasonHostRefused},
		{"rebound Host, metrics", "GET", "/metrics", "", map[string]string{"Host": "attacker.example"}, 403, server.ReasonHostRefused},
		{"cross-site hook", "POST", "/v1/hooks/claude-code", hook,
			map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, 200, server.ReasonOriginRefused},
		{"rebound Host hook", "POST", "/v1/hooks/claude-code", hook,
			map[string]string{"Content-Type": "application/json", "Host": "attacker.example"}, 200, server.ReasonHostRefused},

		{"harness JSON", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200, ""},
		{"own Origin", "POST", "/v1/decide", string(decide),
			map[string]string{"Content-Type": "application/json", "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"localhost Host", "GET", "/v1/policy", "", map[string]string{"Host": "LocalHost:" + portOf(host)}, 200, ""},
		{"[::1] Host", "GET", "/healthz", "", map[string]string{"Host": "[::1]:8181"}, 200, ""},
		{"127.9.9.9 Host", "GET", "/healthz", "", map[string]string{"Host": "127.9.9.9"}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := s.send(c.method, c.path, c.body, c.headers)
			if code != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.status)
			}
			if c.reason != "" && !strings.Contains(body, c.reason) {
				t.Fatalf("%s %s: %s, want the reason %s", c.method, c.path, body, c.reason)
			}
			if c.reason != "" && c.status == 200 && !strings.Contains(body, `"permissionDecision":"deny"`) {
				t.Fatalf("the hook's refusal is not its blocking reply: %s", body)
			}
			if strings.Contains(body, "evil.example") || strings.Contains(body, "attacker.example") {
				t.Fatalf("the refusal quotes the request: %s", body)
			}
		})
	}
	// Nothing the refused requests carried reached the log: the forged
	// run holds the two served decisions of c1 alone, and no observation.
	evs, err := s.store.Events(context.Background(), "forged", 0)
	if err != nil {
		t.Fatal(err)
	}
	decided := 0
	for _, e := range evs {
		switch {
		case e.Kind == veto.EventRunStarted:
		case e.Kind == veto.EventObserved || e.CallID != "c1":
			t.Errorf("a refused request was recorded: %+v", e)
		case e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied:
			decided++
		}
	}
	if decided != 2 {
		t.Errorf("%d decisions in the forged run, want the 2 served", decided)
	}
}

// portOf is the port of host:port.
func portOf(hostport string) string {
	_, port, _ := strings.Cut(hostport, ":")
	return port
}
