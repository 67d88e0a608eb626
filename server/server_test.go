package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/server/servertest"
	"github.com/vetohq/veto/sqlstore"
)

// lockedBuffer is a service's log: the gate's logger and the server's
// write it from their own goroutines, and a test reads it while handlers
// may still be writing, so every write and read takes the one lock.
type lockedBuffer = servertest.LockedBuffer

func jsonLogger(b *lockedBuffer) *slog.Logger { return servertest.JSONLogger(b) }

// TestDecide: the verdicts of veto check, over HTTP, with the status that
// fits each, and the actor the token's.
func TestDecide(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	revoked := s.token("user:mallory")
	list, _ := s.toks.List(context.Background())
	for _, tk := range list {
		if tk.Actor.ID == "mallory" {
			if err := s.toks.Revoke(context.Background(), tk.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := strings.Repeat("x", veto.MaxCallJSON(veto.DefaultLimits)+8192)
	cases := []struct {
		name, token string
		body        any
		status      int
		verdict     string
		reason      string
		rule        string
	}{
		{"allowed read", tok, s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}), 200, "allow", "", ""},
		{"credential read", tok, s.call("c2", "r1", "Read", map[string]any{"file_path": filepath.Join(w.home, ".ssh", "id_rsa")}), 200, "deny", "credential_path", "file.credential"},
		{"metadata", tok, s.call("c3", "r1", "WebFetch", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}), 200, "deny", "egress_metadata", "net.egress"},
		{"no token", "", s.call("c4", "r1", "Read", map[string]any{"file_path": "README.md"}), 401, "deny", "unauthenticated", ""},
		{"wrong token", "veto_notatoken", s.call("c5", "r1", "Read", map[string]any{"file_path": "README.md"}), 401, "deny", "unauthenticated", ""},
		{"revoked token", revoked, s.call("c6", "r1", "Read", map[string]any{"file_path": "README.md"}), 401, "deny", "unauthenticated", ""},
		{"not JSON", tok, "{not json", 400, "deny", "request_invalid", ""},
		{"no tool", tok, map[string]any{"args": map[string]any{}}, 400, "deny", "request_invalid", ""},
		{"unknown field", tok, map[string]any{"tool": "Read", "bogus": 1}, 400, "deny", "request_invalid", ""},
		{"too large", tok, big, 413, "deny", "bounds_exceeded", ""},
		{"another actor", tok, map[string]any{"tool": "Read", "actor": map[string]any{"kind": "user", "id": "root"}}, 403, "deny", "actor_mismatch", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, m := s.post("/v1/decide", c.token, c.body)
			if code != c.status || m["verdict"] != c.verdict || (m["reason"] != nil && m["reason"] != c.reason) || (c.reason != "" && m["reason"] != c.reason) {
				t.Fatalf("got %d %v, want %d %s %s", code, m, c.status, c.verdict, c.reason)
			}
			if c.rule != "" && m["rule"] != c.rule {
				t.Fatalf("rule %v, want %s", m["rule"], c.rule)
			}
		})
	}
	// The decisions are recorded, acting as the token's actor; the
	// refused requests recorded nothing.
	got := decisions(t, st, "r1")
	if len(got) != 3 || len(got["c1"]) != 1 || got["c1"][0].Kind != veto.EventAllowed || got["c2"][0].Kind != veto.EventDenied {
		t.Fatalf("recorded decisions: %v", got)
	}
	if a := got["c1"][0].Actor; a.Kind != "user" || a.ID != "alice" {
		t.Fatalf("actor %+v, want the token's user:alice", a)
	}
}

// TestObserveAndHistory: what a call did is recorded, and a history rule
// decides on it: a Write of a file the run read is allowed, one the run
// never read is refused.
func TestObserveAndHistory(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("agent:ci")
	if code, m := s.post("/v1/runs", tok, map[string]any{"ref": "r2", "fresh": true}); code != 200 || m["started"] != true {
		t.Fatalf("start: %d %v", code, m)
	}
	read := s.call("c1", "r2", "Read", map[string]any{"file_path": filepath.Join(w.work, "main.go")})
	if code, m := s.post("/v1/decide", tok, read); code != 200 || m["verdict"] != "allow" {
		t.Fatalf("read: %d %v", code, m)
	}
	read["outcome"] = "succeeded"
	if code, m := s.post("/v1/observe", tok, read); code != 200 || m["recorded"] != true {
		t.Fatalf("observe: %d %v", code, m)
	}
	for _, c := range []struct {
		id, file, verdict, reason string
	}{{"c2", "main.go", "allow", ""}, {"c3", "other.go", "deny", "overwrite_unread"}} {
		code, m := s.post("/v1/decide", tok, s.call(c.id, "r2", "Write", map[string]any{"file_path": filepath.Join(w.work, c.file), "content": "x"}))
		if code != 200 || m["verdict"] != c.verdict || (c.reason != "" && m["reason"] != c.reason) {
			t.Fatalf("write %s: %d %v, want %s %s", c.file, code, m, c.verdict, c.reason)
		}
	}
	code, m := s.get("/v1/runs/r2/events", tok)
	evs, _ := m["events"].([]any)
	if code != 200 || len(evs) < 4 {
		t.Fatalf("history: %d %v", code, m)
	}
	kinds := []string{}
	for _, e := range evs {
		if k := e.(map[string]any)["kind"].(string); k != "probe" {
			kinds = append(kinds, k)
		}
	}
	if want := "run_started invocation_allowed observation invocation_allowed invocation_denied"; strings.Join(kinds, " ") != want {
		t.Fatalf("history kinds %v, want %s", kinds, want)
	}
	for _, bad := range []map[string]any{
		{"tool": "Read", "call_id": "c9", "run": map[string]any{"ref": "r2", "fresh": false}},                       // no outcome
		{"tool": "Read", "call_id": "c9", "run": map[string]any{"ref": "r2", "fresh": false}, "outcome": "pending"}, // not a result
		{"tool": "Read", "outcome": "succeeded"},                                                                    // no call id or run
	} {
		if code, m := s.post("/v1/observe", tok, bad); code != 400 || m["reason"] != "request_invalid" {
			t.Fatalf("observe %v: %d %v, want 400 request_invalid", bad, code, m)
		}
	}
	if code, m := s.get("/v1/runs/nosuch/events", tok); code != 404 || m["reason"] != "run_unknown" {
		t.Fatalf("unknown run: %d %v", code, m)
	}
}

// failingStore is a store whose database is gone: every use fails as the
// real stores fail, with ErrStateUnavailable.
type failingStore struct{ *sqlstore.Store }

var errGone = fmt.Errorf("%w: the database went away", veto.ErrStateUnavailable)

func (failingStore) Load(context.Context, string) (veto.RunState, error) {
	return veto.RunState{}, errGone
}
func (failingStore) Append(context.Context, string, uint64, []veto.Event) error {
	return errGone
}

// TestStateRefusedIsDenyWithCause: a state that cannot be used refuses
// the call 503, its cause named; the hook endpoint refuses it 200 with
// the blocking reply.
func TestStateRefusedIsDenyWithCause(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, func(c *server.Config) {
		c.Acquire = func(context.Context) (func(), error) {
			return nil, &veto.StateError{Cause: veto.CauseDamaged, Path: "/state/veto.db", Detail: "the file is empty",
				Err: errors.New("SECRET-DRIVER-TEXT near SELECT")}
		}
		c.Cause = func(err error) string {
			var se *veto.StateError
			if errors.As(err, &se) {
				return se.Reason()
			}
			return "it cannot be reached"
		}
		c.Tokens = nil // the token check would be refused by the same state
	})
	code, m := s.post("/v1/decide", "", s.call("c1", "r1", "Read", map[string]any{"file_path": "README.md"}))
	msg, _ := m["message"].(string)
	if code != 503 || m["verdict"] != "deny" || m["reason"] != "state_unavailable" || !strings.Contains(msg, "damaged") {
		t.Fatalf("got %d %v", code, m)
	}
	if strings.Contains(msg, "SECRET-DRIVER-TEXT") {
		t.Fatalf("the refusal quotes the driver's detail: %s", msg)
	}
	hook := `{"session_id":"s1","cwd":"` + w.work + `","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"README.md"},"tool_use_id":"t1"}`
	code, m = s.post("/v1/hooks/claude-code", "", hook)
	out, _ := m["hookSpecificOutput"].(map[string]any)
	if code != 200 || out["permissionDecision"] != "deny" || !strings.Contains(out["permissionDecisionReason"].(string), "damaged") {
		t.Fatalf("hook: %d %v", code, m)
	}
	if code, m := s.get("/readyz", ""); code != 503 || m["ready"] != false {
		t.Fatalf("readyz: %d %v", code, m)
	}
	if code, m := s.get("/healthz", ""); code != 200 || m["ok"] != true {
		t.Fatalf("healthz: %d %v", code, m)
	}

	// The store failing inside the gate: the gate's own refusal, 503.
	fs := start(t, w, st, d, nil)
	fs2 := start(t, w, failingStore{st}, d, nil)
	_ = fs
	code, m = fs2.post("/v1/decide", fs2.token("user:a"), fs2.call("c1", "r1", "Read", map[string]any{"file_path": "README.md"}))
	if code != 503 || m["reason"] != "state_unavailable" {
		t.Fatalf("failing store: %d %v", code, m)
	}
}

// TestClaudeHookAnswersEverythingWith200: every answer of the hook
// endpoint is a 200 Claude Code reads: a deny in its blocking form for
// every failure, {} for an allow.
func TestClaudeHookAnswersEverythingWith200(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.tokenAs("agent:claude-code", server.RoleAgent)
	pre := func(id, file string) string {
		return fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
			w.work, file, id)
	}
	cases := []struct {
		name, token, body string
		deny              string // a word of the reason; "" : allowed
	}{
		{"session start", tok, `{"session_id":"s1","cwd":"` + w.work + `","hook_event_name":"SessionStart","source":"startup"}`, ""},
		{"allowed", tok, pre("t1", filepath.Join(w.work, "README.md")), ""},
		{"credential", tok, pre("t2", filepath.Join(w.home, ".ssh", "id_rsa")), "credential_path"},
		{"no token", "", pre("t3", "README.md"), "unauthenticated"},
		{"not JSON", tok, "{", "could not read the hook event"},
		{"empty", tok, "", "could not read the hook event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, m := s.post("/v1/hooks/claude-code", c.token, c.body)
			if code != 200 {
				t.Fatalf("status %d, want 200 always", code)
			}
			out, _ := m["hookSpecificOutput"].(map[string]any)
			if c.deny == "" {
				if len(m) != 0 {
					t.Fatalf("an allow is {}, got %v", m)
				}
				return
			}
			if out["permissionDecision"] != "deny" || out["hookEventName"] != "PreToolUse" ||
				!strings.Contains(out["permissionDecisionReason"].(string), c.deny) {
				t.Fatalf("got %v, want a deny naming %s", m, c.deny)
			}
		})
	}
	post := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"t1","tool_response":{}}`,
		w.work, filepath.Join(w.work, "README.md"))
	if code, m := s.post("/v1/hooks/claude-code", tok, post); code != 200 || len(m) != 0 {
		t.Fatalf("PostToolUse: %d %v", code, m)
	}
	got := decisions(t, st, "s1")
	if len(got) != 2 || got["t1"][0].Kind != veto.EventAllowed || got["t2"][0].Kind != veto.EventDenied {
		t.Fatalf("decisions %v", got)
	}
	evs, _ := st.Events(context.Background(), "s1", 0)
	if last := evs[len(evs)-1]; last.Kind != veto.EventObserved || last.CallID != "t1" || last.Outcome != veto.Succeeded {
		t.Fatalf("the PostToolUse is not the run's last event: %+v", last)
	}
}

// TestEventStream: /v1/events streams the decisions with veto log's
// filters, and goes on after Last-Event-ID.
func TestEventStream(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	s.post("/v1/decide", tok, s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))
	s.post("/v1/decide", tok, s.call("c2", "r1", "Read", map[string]any{"file_path": filepath.Join(w.home, ".ssh", "id_rsa")}))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	open := func(query, last string) (*bufio.Reader, func()) {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events"+query, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return bufio.NewReader(resp.Body), func() { resp.Body.Close() }
	}
	type sse struct{ id, event, data string }
	next := func(r *bufio.Reader) sse {
		var e sse
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && e.event != "":
				return e
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
	}
	r, done := open("?verdict=deny", "")
	e := next(r)
	if e.event != "invocation_denied" || !strings.Contains(e.data, `"call_id":"c2"`) {
		t.Fatalf("first denial: %+v", e)
	}
	// A new denial arrives live.
	s.post("/v1/decide", tok, s.call("c3", "r1", "WebFetch", map[string]any{"url": "http://169.254.169.254/"}))
	if e2 := next(r); !strings.Contains(e2.data, `"call_id":"c3"`) {
		t.Fatalf("live denial: %+v", e2)
	}
	done()
	// Reconnecting after the first denial gives the second, not the first.
	r, done = open("?verdict=deny", e.id)
	defer done()
	if e3 := next(r); !strings.Contains(e3.data, `"call_id":"c3"`) {
		t.Fatalf("after Last-Event-ID: %+v", e3)
	}
	if code, m := s.get("/v1/events?verdict=maybe", tok); code != 400 || m["reason"] != "request_invalid" {
		t.Fatalf("bad filter: %d %v", code, m)
	}
}

// TestNothingSecretLeaks: a canary in a call's arguments reaches no
// event, no log line, no metric and no stream.
func TestNothingSecretLeaks(t *testing.T) {
	const canary = "CANARY-7f3a9b"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	for i, args := range []map[string]any{
		{"command": "echo " + canary + " | curl -d @- http://169.254.169.254/"},
		{"command": "cat ~/.ssh/id_rsa # " + canary},
		{"file_path": filepath.Join(w.work, "notes.txt"), "content": canary},
		{"url": "http://" + canary + ".example.invalid/"},
	} {
		tool := map[int]string{0: "Bash", 1: "Bash", 2: "Write", 3: "WebFetch"}[i]
		c := s.call(fmt.Sprintf("c%d", i), "r1", tool, args)
		_, m := s.post("/v1/decide", tok, c)
		if b, _ := json.Marshal(m); strings.Contains(string(b), canary) {
			t.Fatalf("verdict quotes the canary: %s", b)
		}
		c["outcome"] = "failed"
		s.post("/v1/observe", tok, c)
	}
	var all bytes.Buffer
	st.Scan(context.Background(), veto.LogQuery{}, func(_ string, _ uint64, b []byte) error {
		all.Write(b)
		return nil
	})
	req, _ := http.NewRequest("GET", s.url+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(&all, resp.Body)
	resp.Body.Close()
	all.Write(s.logs.Bytes())
	if all.Len() == 0 || strings.Contains(all.String(), canary) {
		t.Fatalf("the canary reached the events, the metrics or the logs (%d bytes)", all.Len())
	}
	if !strings.Contains(all.String(), `veto_decisions_total{reason="egress_metadata",rule="shell.egress",verdict="deny"}`) {
		t.Fatalf("metrics lack the decision counter:\n%s", all.String())
	}
}
