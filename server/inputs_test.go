package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// take is the runtime's GET /v1/inputs/{run}/{call}: the status and the
// JSON answer.
func (s *service) take(run, call, token, wait string) (int, map[string]any) {
	s.t.Helper()
	path := "/v1/inputs/" + run + "/" + call
	if wait != "" {
		path += "?wait=" + wait
	}
	return s.get(path, token)
}

// TestInputRequestsAreBounded: a call waits for at most 32 fields of
// sane names, none twice; an actor has at most 100 requests waiting in
// one instance (429 then, Retry-After); a call id another actor's request
// holds is refused 409; a suspension for approval keeps no request.
func TestInputRequestsAreBounded(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, other := s.token("agent:ci"), s.token("agent:other")
	call := func(id string) map[string]any {
		return s.call(id, "r1", "Bash", map[string]any{"command": "ls"})
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = "f" + itoa(uint64(i))
	}
	for _, c := range []struct {
		name   string
		fields []string
	}{
		{"too many fields", many},
		{"a field twice", []string{"a", "a"}},
		{"an empty name", []string{""}},
		{"a name too long", []string{strings.Repeat("n", 129)}},
		{"a control character", []string{"a\nb"}},
	} {
		if code, m := s.post("/v1/suspend", agent, map[string]any{"call": call("x"), "kind": "input", "fields": c.fields}); code != 400 || m["reason"] != "request_invalid" {
			t.Fatalf("%s: %d %v", c.name, code, m)
		}
	}
	if code, m := s.post("/v1/suspend", agent, map[string]any{"call": call("a1"), "kind": "approval"}); code != 200 || m["input_form"] != nil {
		t.Fatalf("a suspension for approval: %d %v", code, m)
	}
	if code, _ := s.take("r1", "a1", agent, ""); code != 404 {
		t.Fatalf("a suspension for approval keeps a request: %d", code)
	}
	if code, m := s.post("/v1/suspend", agent, map[string]any{"call": call("c0"), "kind": "input", "fields": []string{"command"}}); code != 200 || m["input_form"] != true {
		t.Fatalf("the first: %d %v", code, m)
	}
	if code, m := s.post("/v1/suspend", other, map[string]any{"call": call("c0"), "kind": "input", "fields": []string{"command"}}); code != 409 || m["reason"] != "input_pending" {
		t.Fatalf("another actor's call of the same id: %d %v", code, m)
	}
	if code, m := s.post("/v1/suspend", agent, map[string]any{"call": call("c0"), "kind": "input", "fields": []string{"command"}}); code != 200 || m["input_form"] != true {
		t.Fatalf("the same call suspended again: %d %v", code, m)
	}
	for i := 1; i < 100; i++ {
		if code, m := s.post("/v1/suspend", agent, map[string]any{"call": call("c" + itoa(uint64(i))), "kind": "input", "fields": []string{"command"}}); code != 200 {
			t.Fatalf("request %d: %d %v", i, code, m)
		}
	}
	req, _ := http.NewRequest("POST", s.url+"/v1/suspend", strings.NewReader(`{"call":{"call_id":"c100","tool":"Bash","args":{"command":"ls"},"run":{"ref":"r1"}},"kind":"input","fields":["command"]}`))
	req.Header.Set("Authorization", "Bearer "+agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the 101st request of one actor: %d", resp.StatusCode)
	}
	if code, m := s.post("/v1/suspend", other, map[string]any{"call": call("o1"), "kind": "input", "fields": []string{"command"}}); code != 200 || m["input_form"] != true {
		t.Fatalf("another actor's first: %d %v", code, m)
	}
}

// giveInput keeps a person's values for the call, as the page's form does
// (page.Page answers through Server.GiveInput), as the actor of token.
func giveInput(t *testing.T, s *service, token, run, call string, values map[string]string) {
	t.Helper()
	tok, ok, err := s.toks.Verify(context.Background(), token)
	if err != nil || !ok {
		t.Fatalf("the token: %v %v", ok, err)
	}
	if status, msg := s.h.GiveInput(run, call, values, tok.Actor); status != http.StatusOK {
		t.Fatalf("the input: %d %s", status, msg)
	}
}

func itoa(n uint64) string {
	b := []byte{}
	for ; n > 0 || len(b) == 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
