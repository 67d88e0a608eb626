package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestApprovalsOverHTTP: a call a rule asks about is answered ask; it is
// listed as waiting; only a person's token answers; an approval lets the
// same call through once; answers are refused twice or for no question.
func TestApprovalsOverHTTP(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	deploy := func(id string) map[string]any {
		return s.call(id, "r1", "Bash", map[string]any{"command": "make deploy"})
	}
	if code, m := s.post("/v1/decide", agent, deploy("c1")); code != 200 || m["verdict"] != "ask" || m["reason"] != "deploy_needs_person" {
		t.Fatalf("the question: %d %v", code, m)
	}
	code, m := s.get("/v1/approvals?run=r1", agent)
	pending, _ := m["pending"].([]any)
	if code != 200 || len(pending) != 1 || pending[0].(map[string]any)["call_id"] != "c1" || len(pending[0].(map[string]any)["args_hash"].(string)) != 64 {
		t.Fatalf("pending: %d %v", code, m)
	}
	if b := fmt.Sprint(m); strings.Contains(b, "make deploy") {
		t.Fatalf("the list holds the call's arguments: %s", b)
	}
	h := argsHash(map[string]any{"command": "make deploy"})
	for _, c := range []struct {
		name, token, path string
		body              any
		status            int
		reason            string
	}{
		{"an agent", agent, "/v1/approvals/r1/c1", map[string]any{"approve": true, "args_hash": h}, 403, "person_required"},
		{"no question", person, "/v1/approvals/r1/nope", map[string]any{"approve": true, "args_hash": h}, 404, "no_question"},
		{"a ttl too long", person, "/v1/approvals/r1/c1", map[string]any{"approve": true, "ttl": "48h", "args_hash": h}, 400, "request_invalid"},
		{"no answer", person, "/v1/approvals/r1/c1", map[string]any{"ttl": "5m", "args_hash": h}, 400, "request_invalid"},
		{"no hash", person, "/v1/approvals/r1/c1", map[string]any{"approve": true}, 400, "request_invalid"},
		{"other arguments", person, "/v1/approvals/r1/c1", map[string]any{"approve": true, "args_hash": argsHash(map[string]any{"command": "make deploy prod"})}, 409, "arguments_changed"},
		{"a person", person, "/v1/approvals/r1/c1", map[string]any{"approve": true, "ttl": "5m", "args_hash": h}, 200, ""},
		{"twice", person, "/v1/approvals/r1/c1", map[string]any{"approve": true, "args_hash": h}, 409, "answered"},
	} {
		code, m := s.post(c.path, c.token, c.body)
		if code != c.status || (c.reason != "" && m["reason"] != c.reason) {
			t.Fatalf("%s: %d %v, want %d %s", c.name, code, m, c.status, c.reason)
		}
	}
	if _, m := s.get("/v1/approvals?run=r1", agent); len(m["pending"].([]any)) != 0 {
		t.Fatalf("still pending after the answer: %v", m)
	}
	if code, m := s.post("/v1/decide", agent, deploy("c2")); code != 200 || m["verdict"] != "allow" {
		t.Fatalf("the approved call: %d %v", code, m)
	}
	if _, m := s.post("/v1/decide", agent, deploy("c3")); m["verdict"] != "ask" {
		t.Fatalf("an approval used twice: %v", m)
	}
	evs, _ := st.Events(context.Background(), "r1", 0)
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[string(e.Kind)]++
	}
	if kinds["approval_granted"] != 1 {
		t.Fatalf("events: %v", kinds)
	}
}
