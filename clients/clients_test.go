package clients_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vetohq/veto/clients"
)

// Every entry is whole: a name commands can take, a display name, an
// actor, events, a project settings file and the field its command goes
// in; names and actors are each one client's.
func TestTableIsWhole(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	names, actors := map[string]bool{}, map[string]bool{}
	for _, c := range clients.All {
		switch {
		case !name.MatchString(c.Name):
			t.Errorf("%q: not a command-line name", c.Name)
		case c.Display == "" || c.Actor == "":
			t.Errorf("%s: no display name or actor", c.Name)
		case len(c.Events) == 0 || len(c.EventNames(true)) == 0:
			t.Errorf("%s: no events init registers", c.Name)
		case c.Settings.Project == "" || c.Settings.CommandKey == "":
			t.Errorf("%s: no project settings file or command field", c.Name)
		case c.Settings.UserDirEnv != "" && c.Settings.User == "":
			t.Errorf("%s: a user directory variable without user settings", c.Name)
		}
		if names[c.Name] || actors[c.Actor] {
			t.Errorf("%s: its name or actor is another client's too", c.Name)
		}
		names[c.Name], actors[c.Actor] = true, true
		seen := map[string]bool{}
		for _, e := range c.Events {
			if e.Name == "" || seen[e.Name] {
				t.Errorf("%s: event %q empty or twice", c.Name, e.Name)
			}
			seen[e.Name] = true
		}
		if clients.Lookup(c.Name) != c {
			t.Errorf("%s: Lookup finds another entry", c.Name)
		}
	}
	if clients.Lookup("") != nil || clients.Lookup("vscode") != nil {
		t.Error("Lookup finds a client not in the table")
	}
	if !slices.Equal(clients.Names(), []string{"claude-code", "gemini-cli", "copilot-cli", "cursor", "codex", "pi", "opencode", "claude-agent-sdk"}) {
		t.Errorf("Names() = %v", clients.Names())
	}
}

// A denial is a form the client blocks on: exit 2, or a JSON "deny" on
// stdout with exit 0 (any other exit code would let some clients run the
// call). It carries the reason; an allow and an approve block nothing.
func TestDenialsBlockAndAllowsDoNot(t *testing.T) {
	const reason = "a reason <&> \"quoted\""
	for _, c := range clients.All {
		exit, stdout, stderr := c.Deny.Write(reason)
		blocks := exit == 2 || exit == 0 && strings.Contains(stdout, `"deny"`)
		if !blocks {
			t.Errorf("%s: its denial (exit %d, %q) does not block", c.Name, exit, stdout)
		}
		if !strings.Contains(stderr, reason) && !strings.Contains(stdout, `a reason \u003c\u0026\u003e \"quoted\"`) {
			t.Errorf("%s: its denial does not carry the reason: %q %q", c.Name, stdout, stderr)
		}
		if stdout != "" && !json.Valid([]byte(stdout)) {
			t.Errorf("%s: the denial's stdout is not JSON: %q", c.Name, stdout)
		}
		for _, r := range []clients.Reply{c.Allow, c.Approve} {
			exit, stdout, stderr := r.Write(reason)
			if exit != 0 || strings.Contains(stdout, "deny") || stderr != "" || strings.Contains(stdout, "a reason") {
				t.Errorf("%s: an allow that blocks or speaks: %d %q %q", c.Name, exit, stdout, stderr)
			}
		}
	}
}

func TestReplyWrite(t *testing.T) {
	r := clients.Reply{Exit: 2, Stdout: map[string]any{"z": 1, "a": map[string]any{"why": clients.ReasonHere}, "l": []any{clients.ReasonHere}}, Stderr: true}
	exit, stdout, stderr := r.Write("no")
	if exit != 2 || stdout != `{"a":{"why":"no"},"l":["no"],"z":1}`+"\n" || stderr != "no\n" {
		t.Fatalf("%d %q %q", exit, stdout, stderr)
	}
	// The table's shapes are not changed by writing.
	if r.Stdout.(map[string]any)["a"].(map[string]any)["why"] != clients.ReasonHere {
		t.Fatal("Write filled the table's own map")
	}
	long := strings.Repeat("é", clients.MaxReason)
	if _, _, e := r.Write(long); len(e) > clients.MaxReason+len("…\n") || !utf8.ValidString(e) {
		t.Fatalf("a reason of %d bytes was not clipped, or clipped inside a character", len(e))
	}
}

func TestList(t *testing.T) {
	for want, in := range map[string][]string{"": nil, "a": {"a"}, "a or b": {"a", "b"}, "a, b or c": {"a", "b", "c"}} {
		if got := clients.List(in, "or"); got != want {
			t.Errorf("List(%v) = %q, want %q", in, got, want)
		}
	}
}
