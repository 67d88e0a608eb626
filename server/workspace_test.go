package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/server"
)

// TestWorkspaceIsBounded: a request claiming a workspace outside the
// service's roots (/, the home above the root, a symlink out of it, a
// relative path), or a cwd outside its workspace, is refused before any
// rule with its own reason, and nothing is recorded; the same call placed
// in the root is decided. The write of issue 26 (/etc/ld.so.preload with
// "workspace": "/") is among them.
func TestWorkspaceIsBounded(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, func(c *server.Config) { c.WorkspaceRoots = []string{w.work} })
	tok := s.token("service:worker")
	out := filepath.Join(w.work, "out")
	if err := os.Symlink("/", out); err != nil {
		t.Fatal(err)
	}
	write := func(id, file string) map[string]any {
		return map[string]any{"call_id": id, "tool": "Write", "args": map[string]any{"file_path": file, "content": "x"},
			"run": map[string]any{"ref": "r1", "fresh": true}}
	}
	placed := func(c map[string]any, kv ...string) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			c[kv[i]] = kv[i+1]
		}
		return c
	}
	cases := []struct {
		name   string
		call   map[string]any
		status int
		reason string
	}{
		{"the root of the filesystem", placed(write("c1", "/etc/ld.so.preload"), "workspace", "/"), 403, server.ReasonWorkspaceRefused},
		{"a cwd of / and no workspace", placed(write("c2", "/etc/veto/veto.yaml"), "cwd", "/"), 403, server.ReasonWorkspaceRefused},
		{"the home above the root", placed(write("c3", filepath.Join(w.home, ".bashrc")), "workspace", w.home), 403, server.ReasonWorkspaceRefused},
		{"a symlink out of the root", placed(write("c4", "/etc/ld.so.preload"), "workspace", out), 403, server.ReasonWorkspaceRefused},
		{"a relative workspace", placed(write("c5", "/etc/ld.so.preload"), "workspace", "project"), 403, server.ReasonWorkspaceRefused},
		{"a cwd outside the workspace", placed(write("c6", "/etc/ld.so.preload"), "workspace", w.work, "cwd", "/etc"), 403, server.ReasonCwdOutside},
		{"a cwd through the symlink", placed(write("c7", "ld.so.preload"), "workspace", w.work, "cwd", filepath.Join(out, "etc")), 403, server.ReasonCwdOutside},
		{"in the root: decided", placed(write("c8", filepath.Join(w.work, "notes.md")), "workspace", w.work), 200, ""},
		{"a cwd below it: decided", placed(write("c9", "notes.md"), "workspace", w.work, "cwd", filepath.Join(w.work, "secrets")), 200, ""},
		{"a cwd alone, in the root: decided", placed(write("c10", "notes.md"), "cwd", w.work), 200, ""},
		{"no place claimed: decided", write("c11", filepath.Join(w.work, "notes.md")), 200, ""},
		{"a cwd alone, through the symlink", placed(write("c12", "ld.so.preload"), "cwd", filepath.Join(out, "etc")), 403, server.ReasonWorkspaceRefused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, m := s.post("/v1/decide", tok, c.call)
			if code != c.status || (c.reason != "" && m["reason"] != c.reason) || (c.reason == "" && m["verdict"] == nil) {
				t.Fatalf("%d %v, want %d %s", code, m, c.status, c.reason)
			}
			if b, _ := json.Marshal(m); c.reason != "" && (strings.Contains(string(b), "/etc") || strings.Contains(string(b), w.home)) {
				t.Fatalf("the refusal quotes the path: %s", b)
			}
		})
	}
	got := decisions(t, st, "r1")
	for _, c := range cases {
		id := c.call["call_id"].(string)
		if (c.reason != "") != (len(got[id]) == 0) {
			t.Errorf("%s: %d decisions recorded", c.name, len(got[id]))
		}
	}
	// Every way in is bounded: observe, suspend, resume and the hooks.
	bad := placed(write("b1", "/etc/ld.so.preload"), "workspace", "/")
	obs := placed(write("b2", "/etc/ld.so.preload"), "workspace", "/", "outcome", "succeeded")
	if code, m := s.post("/v1/observe", tok, obs); code != 403 || m["reason"] != server.ReasonWorkspaceRefused {
		t.Fatalf("observe: %d %v", code, m)
	}
	if code, m := s.post("/v1/suspend", tok, map[string]any{"call": bad, "kind": "approval"}); code != 403 || m["reason"] != server.ReasonWorkspaceRefused {
		t.Fatalf("suspend: %d %v", code, m)
	}
	good := placed(write("b3", filepath.Join(w.work, "notes.md")), "workspace", w.work)
	_, sus := s.post("/v1/suspend", tok, map[string]any{"call": good, "kind": "approval"})
	if sus["suspension"] == nil {
		t.Fatalf("suspend in the root: %v", sus)
	}
	if code, m := s.post("/v1/resume", tok, map[string]any{"suspension": sus["suspension"], "approved": true}); code != 200 {
		t.Fatalf("resume in the root: %d %v", code, m)
	}
	hook := s.tokenAs("agent:claude-code", server.RoleAgent)
	pre := func(id, cwd string) string {
		return fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/ld.so.preload","content":"x"},"tool_use_id":%q}`, cwd, id)
	}
	if code, m := s.post("/v1/hooks/claude-code", hook, pre("h1", "/")); code != 200 || !strings.Contains(fmt.Sprint(m), server.ReasonWorkspaceRefused) {
		t.Fatalf("the hook at /: %d %v", code, m)
	}
	if code, m := s.post("/v1/hooks/claude-code", hook, pre("h2", w.work)); code != 200 || strings.Contains(fmt.Sprint(m), "workspace_refused") ||
		!strings.Contains(fmt.Sprint(m), "deny") {
		t.Fatalf("the hook in the root (a rule's deny, outside the write roots): %d %v", code, m)
	}
}

// TestNoWorkspaceRootAcceptsNoWorkspace: the default names no root, so
// any claimed workspace or cwd is refused, the service's own home
// included; a call that claims none is decided.
func TestNoWorkspaceRootAcceptsNoWorkspace(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, func(c *server.Config) { c.WorkspaceRoots = nil })
	tok := s.token("service:worker")
	home, _ := os.UserHomeDir()
	for _, ws := range []string{"/", home, w.work} {
		c := map[string]any{"tool": "Read", "workspace": ws, "args": map[string]any{"file_path": filepath.Join(w.work, "README.md")}}
		if code, m := s.post("/v1/decide", tok, c); code != 403 || m["reason"] != server.ReasonWorkspaceRefused ||
			!strings.Contains(m["message"].(string), "--workspace-root") {
			t.Fatalf("workspace %s: %d %v", ws, code, m)
		}
	}
	c := map[string]any{"tool": "Read", "args": map[string]any{"file_path": filepath.Join(w.work, "README.md")}}
	if code, m := s.post("/v1/decide", tok, c); code != 200 || m["verdict"] != "allow" {
		t.Fatalf("no place: %d %v", code, m)
	}
	if _, err := server.New(server.Config{Gate: nil, PageOnly: true, Store: st, WorkspaceRoots: []string{"relative"}}); err == nil {
		t.Fatal("a relative root was taken")
	}
}
