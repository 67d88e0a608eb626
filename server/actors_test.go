package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// sseEvent is one frame of a server-sent event stream, as a browser's
// EventSource reads it.
type sseEvent struct{ id, event, data string }

// openStream opens path (an event stream) with token; next reads the
// next frame that names an event, and fails the test when none comes.
func openStream(t *testing.T, ctx context.Context, s *service, path, token string) (next func() sseEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", path, resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	return func() sseEvent {
		t.Helper()
		var e sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && e.event != "":
				return e
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data += line[6:]
			}
		}
	}
}

// TestEventTimesAreTheServers: a call's "time" does not date its events.
// A call dated 2200 used to move every stream's cursor past the present
// (no later event was streamed), one dated 9999 overflowed the stored
// nanoseconds, and one dated 2020 kept a critical refusal behind every
// open stream's cursor. Now each is recorded at the server's time, and an
// open stream shows the refusals made after them.
func TestEventTimesAreTheServers(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	next := openStream(t, ctx, s, "/v1/events?verdict=deny", tok)

	secret := filepath.Join(w.home, ".ssh", "id_rsa")
	before := time.Now().Add(-time.Second)
	for i, when := range []string{"2200-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2020-01-01T00:00:00Z"} {
		c := s.call(fmt.Sprintf("d%d", i), "dated", "Read", map[string]any{"file_path": secret})
		c["time"] = when
		if code, m := s.post("/v1/decide", tok, c); code != 200 || m["verdict"] != "deny" {
			t.Fatalf("call dated %s: %d %v", when, code, m)
		}
		// Each refusal reaches the open stream, in the order made.
		if e := next(); !strings.Contains(e.data, fmt.Sprintf(`"call_id":"d%d"`, i)) {
			t.Fatalf("after the call dated %s the stream shows %+v", when, e)
		}
	}
	// And one made after them, undated, too.
	if code, m := s.post("/v1/decide", tok, s.call("d3", "dated", "Read", map[string]any{"file_path": secret})); code != 200 || m["verdict"] != "deny" {
		t.Fatalf("undated call: %d %v", code, m)
	}
	if e := next(); !strings.Contains(e.data, `"call_id":"d3"`) {
		t.Fatalf("the refusal after the dated calls is not streamed: %+v", e)
	}
	after := time.Now().Add(time.Second)
	evs, err := st.Events(context.Background(), "dated", 0)
	if err != nil || len(evs) < 5 {
		t.Fatalf("events %d %v", len(evs), err)
	}
	for _, e := range evs {
		if e.Time.Before(before) || e.Time.After(after) {
			t.Fatalf("event %d (%s of %s) is dated %s, not the server's time", e.Seq, e.Kind, e.CallID, e.Time)
		}
	}
}

// TestNamesHoldNoControlCharacters: a run reference, call id or tool
// name that could start a line of its own is refused before anything is
// recorded. A newline in a run ref used to put frames of the attacker's
// choosing (forged events, a resume cursor, HTML for the page) into
// every stream of the log.
func TestNamesHoldNoControlCharacters(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("service:worker")
	const inject = "\nid: 1.1.x\nevent: invocation_denied\ndata: <a href=//evil>forged</a>\n\n"
	readme := map[string]any{"file_path": filepath.Join(w.work, "README.md")}
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"run ref, decide", "/v1/decide", s.call("c1", "r1"+inject, "Read", readme)},
		{"run ref, observe", "/v1/observe", with(s.call("c1", "r1"+inject, "Read", readme), "outcome", "succeeded")},
		{"run ref, suspend", "/v1/suspend", map[string]any{"call": s.call("c1", "r1"+inject, "Read", readme), "kind": "approval"}},
		{"run ref, start", "/v1/runs", map[string]any{"ref": "r1" + inject, "fresh": true}},
		{"call id", "/v1/decide", s.call("c1"+inject, "r1", "Read", readme)},
		{"carriage return", "/v1/decide", s.call("c1\rdata: x", "r1", "Read", readme)},
		{"line separator", "/v1/decide", s.call("c1\u2028x", "r1", "Read", readme)},
		{"bidi override", "/v1/decide", s.call("c1\u202ex", "r1", "Read", readme)},
		{"tool, escape", "/v1/decide", s.call("c1", "r1", "Read\x1b[2J", readme)},
		{"tool, slash", "/v1/decide", s.call("c1", "r1", "dir/Read", readme)},
		{"tool, space", "/v1/decide", s.call("c1", "r1", "Read me", readme)},
		{"tool, too long", "/v1/decide", s.call("c1", "r1", strings.Repeat("a", 129), readme)},
		{"sub-agent", "/v1/decide", with(s.call("c1", "r1", "Read", readme), "actor", map[string]any{"agent": "x\ny"})},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := s.post(c.path, tok, c.body)
			if code != 400 || m["reason"] != "request_invalid" {
				t.Fatalf("%d %v, want 400 request_invalid", code, m)
			}
			if msg, _ := m["message"].(string); strings.Contains(msg, "evil") || strings.ContainsAny(msg, "\n\r\x1b") {
				t.Fatalf("the refusal quotes the name: %q", msg)
			}
		})
	}
	runs, err := st.Runs(context.Background())
	if err != nil || len(runs) != 0 {
		t.Fatalf("runs recorded: %q %v", runs, err)
	}
	// The names MCP allows pass.
	if code, m := s.post("/v1/decide", tok, s.call("c-1.x_Y", "run.1-a_b", "mcp__srv-1__get.item_2", nil)); code != 200 || m["verdict"] == nil {
		t.Fatalf("an MCP tool name: %d %v", code, m)
	}
}

// TestHookNamesHoldNoControlCharacters: the same through Claude Code's
// hook endpoint: a session id with a newline is blocked, not recorded.
func TestHookNamesHoldNoControlCharacters(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.tokenAs("agent:claude", server.RoleAgent)
	body := fmt.Sprintf(`{"session_id":"s1\nevent: x","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"t1"}`,
		w.work, filepath.Join(w.work, "README.md"))
	code, m := s.post("/v1/hooks/claude-code", tok, body)
	out, _ := m["hookSpecificOutput"].(map[string]any)
	if code != 200 || out["permissionDecision"] != "deny" || !strings.Contains(fmt.Sprint(out["permissionDecisionReason"]), "request_invalid") {
		t.Fatalf("the hook: %d %v", code, m)
	}
	if runs, err := st.Runs(context.Background()); err != nil || len(runs) != 0 {
		t.Fatalf("runs recorded: %q %v", runs, err)
	}
}

// with returns m with key set to v.
func with(m map[string]any, key string, v any) map[string]any {
	m[key] = v
	return m
}

// TestObservationsAreBoundToTheirActors: an observation names a call
// decided in its run for the token's actor. Before, any token recorded
// "succeeded" for a call never decided (a forged Read let a Write pass
// read-before-write) and re-marked another actor's outcome; now both are
// refused, recorded as observation_refused naming who reported them, and
// teach the run nothing. The observation taken names its observer.
func TestObservationsAreBoundToTheirActors(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	a, b := s.token("service:a"), s.token("service:b")
	if code, _ := s.post("/v1/runs", a, map[string]any{"ref": "ra", "fresh": true}); code != 200 {
		t.Fatal("start")
	}
	mainGo := filepath.Join(w.work, "main.go")
	write := func(id string) map[string]any {
		_, m := s.post("/v1/decide", a, s.call(id, "ra", "Write", map[string]any{"file_path": mainGo, "content": "x"}))
		return m
	}
	if m := write("w1"); m["reason"] != "overwrite_unread" {
		t.Fatalf("a write of a file not read: %v", m)
	}

	// A Read never decided, reported as succeeded.
	forged := with(s.call("f1", "ra", "Read", map[string]any{"file_path": mainGo}), "outcome", "succeeded")
	if code, m := s.post("/v1/observe", a, forged); code != 403 || m["reason"] != veto.ReasonNotDecided {
		t.Fatalf("a forged observation: %d %v", code, m)
	}
	if m := write("w2"); m["reason"] != "overwrite_unread" {
		t.Fatalf("after a forged Read the write is %v", m)
	}

	// A Read decided for a, reported by b.
	read := s.call("r1", "ra", "Read", map[string]any{"file_path": mainGo})
	if code, m := s.post("/v1/decide", a, read); code != 200 || m["verdict"] != "allow" {
		t.Fatalf("the read: %d %v", code, m)
	}
	if code, m := s.post("/v1/observe", b, with(read, "outcome", "failed")); code != 403 || m["reason"] != veto.ReasonObserverMismatch {
		t.Fatalf("another actor's observation: %d %v", code, m)
	}
	// A Read reported as another tool.
	if code, m := s.post("/v1/observe", a, with(s.call("r1", "ra", "Grep", map[string]any{"path": mainGo}), "outcome", "succeeded")); code != 403 || m["reason"] != veto.ReasonNotDecided {
		t.Fatalf("an observation of another tool: %d %v", code, m)
	}
	// The actor's own report is taken.
	if code, m := s.post("/v1/observe", a, with(read, "outcome", "succeeded")); code != 200 || m["recorded"] != true {
		t.Fatalf("the actor's own observation: %d %v", code, m)
	}
	if m := write("w3"); m["verdict"] != "allow" {
		t.Fatalf("a write of a file read: %v", m)
	}

	evs, err := st.Events(context.Background(), "ra", 0)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, e := range evs {
		switch e.Kind {
		case veto.EventObservationRefused:
			refused = append(refused, e.CallID+" "+e.Actor.Kind+":"+e.Actor.ID+" "+e.Reason)
		case veto.EventObserved:
			if e.CallID != "r1" || e.Outcome != veto.Succeeded || e.Actor != (veto.Actor{Kind: "service", ID: "a"}) {
				t.Fatalf("an observation taken: %+v", e)
			}
		}
	}
	want := []string{"f1 service:a call_not_decided", "r1 service:b observer_mismatch", "r1 service:a call_not_decided"}
	if fmt.Sprint(refused) != fmt.Sprint(want) {
		t.Fatalf("refusals recorded %q, want %q", refused, want)
	}
	// A refused observation of a run with no events starts none.
	if code, _ := s.post("/v1/observe", b, with(s.call("x1", "nothing", "Read", nil), "outcome", "succeeded")); code != 403 {
		t.Fatalf("an observation of no run: %d", code)
	}
	if evs, _ := st.Events(context.Background(), "nothing", 0); len(evs) != 0 {
		t.Fatalf("a run was started: %+v", evs)
	}
}

// TestHookObservationsAreBound: Claude Code's PostToolUse, through the
// HTTP hook, is taken for a call its PreToolUse decided, and refused
// (reported, not blocking: the tool ran) for one never decided.
func TestHookObservationsAreBound(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.tokenAs("agent:claude", server.RoleAgent)
	readme := filepath.Join(w.work, "README.md")
	hook := func(event, id string) map[string]any {
		body := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":%q,"tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q,"tool_response":{}}`,
			w.work, event, readme, id)
		code, m := s.post("/v1/hooks/claude-code", tok, body)
		if code != 200 {
			t.Fatalf("%s: %d", event, code)
		}
		return m
	}
	hook("PreToolUse", "t1")
	if m := hook("PostToolUse", "t1"); len(m) != 0 {
		t.Fatalf("the decided call's PostToolUse: %v", m)
	}
	if m := hook("PostToolUse", "t9"); !strings.Contains(fmt.Sprint(m["systemMessage"]), "decided") {
		t.Fatalf("a PostToolUse of a call never decided: %v", m)
	}
	evs, _ := st.Events(context.Background(), "s1", 0)
	last := evs[len(evs)-1]
	if last.Kind != veto.EventObservationRefused || last.CallID != "t9" || last.Actor.ID != "claude" {
		t.Fatalf("the run's last event: %+v", last)
	}
}

// TestApprovalIsTheAskedActors: a person's approval lets through the
// call of the actor it was asked about, not the same call made by
// another actor in the same run.
func TestApprovalIsTheAskedActors(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	a, b, person := s.token("service:a"), s.token("service:b"), s.token("user:ann")
	deploy := map[string]any{"command": "make deploy prod"}
	if _, m := s.post("/v1/decide", a, s.call("c1", "r1", "Bash", deploy)); m["verdict"] != "ask" {
		t.Fatalf("the question: %v", m)
	}
	if code, m := s.post("/v1/approvals/r1/c1", person, map[string]any{"approve": true, "args_hash": argsHash(deploy)}); code != 200 {
		t.Fatalf("the answer: %d %v", code, m)
	}
	if _, m := s.post("/v1/decide", b, s.call("c2", "r1", "Bash", deploy)); m["verdict"] != "ask" {
		t.Fatalf("another actor's same call: %v, want a question of its own", m)
	}
	if _, m := s.post("/v1/decide", a, s.call("c3", "r1", "Bash", deploy)); m["verdict"] != "allow" {
		t.Fatalf("the asked actor's call: %v", m)
	}
	evs, _ := st.Events(context.Background(), "r1", 0)
	for _, e := range evs {
		if e.Kind == veto.EventApproved && (e.For != veto.Actor{Kind: "service", ID: "a"} || e.Actor.ID != "ann") {
			t.Fatalf("the grant: %+v", e)
		}
	}
}

// TestRunsAreReadByTheirActors: a person reads every run; a service the
// runs it acts in, the questions about its calls and the events that
// name it. Before, any token read every run.
func TestRunsAreReadByTheirActors(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	a, b, person := s.token("service:a"), s.token("service:b"), s.token("user:ann")
	secret := filepath.Join(w.home, ".ssh", "id_rsa")
	s.post("/v1/decide", a, s.call("a1", "ra", "Read", map[string]any{"file_path": secret}))
	s.post("/v1/decide", a, s.call("a2", "ra", "Bash", map[string]any{"command": "make deploy prod"}))

	for _, c := range []struct {
		who, token string
		code       int
	}{{"the person", person, 200}, {"the run's actor", a, 200}, {"another service", b, 404}} {
		if code, m := s.get("/v1/runs/ra/events", c.token); code != c.code {
			t.Fatalf("%s reads the run: %d %v, want %d", c.who, code, m, c.code)
		}
		_, m := s.get("/v1/approvals", c.token)
		pending, _ := m["pending"].([]any)
		if want := map[bool]int{true: 1, false: 0}[c.code == 200]; len(pending) != want {
			t.Fatalf("%s lists %d questions, want %d: %v", c.who, len(pending), want, m)
		}
	}

	// b's stream of every event shows its own, not a's before it.
	s.post("/v1/decide", b, s.call("b1", "rb", "Read", map[string]any{"file_path": secret}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := openStream(t, ctx, s, "/v1/events?all=true", b)(); !strings.Contains(e.data, `"run":"rb"`) {
		t.Fatalf("another service's stream shows %+v", e)
	}
	if e := openStream(t, ctx, s, "/v1/events?all=true", person)(); !strings.Contains(e.data, `"run":"ra"`) {
		t.Fatalf("the person's stream shows %+v", e)
	}
}
