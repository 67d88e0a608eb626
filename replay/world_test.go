package replay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/replay"
)

// userPolicy is the built-in policy with a user's file on top (only a
// user's file may turn built-in rules off).
func userPolicy(t *testing.T, user string) *policy.Policy {
	t.Helper()
	u, err := policy.Parse(policy.KindUser, "user.yaml", []byte(user))
	if err != nil {
		t.Fatal(err)
	}
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, u}, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recordIn runs calls through a live gate under p in ws, each allowed one
// succeeding (after change, when it has one), and returns the transcript
// and the run's events.
func recordIn(t *testing.T, p *policy.Policy, ws string, steps []step) (string, []veto.Event) {
	t.Helper()
	store := memstore.New()
	g, err := p.Gate(policy.BuildOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, s := range steps {
		c := &veto.Call{ID: s.id, Tool: s.tool, Args: s.args, Cwd: ws, Run: veto.Run{Ref: "sess-w", Fresh: true}}
		v := g.Decide(ctx, c)
		in := mustJSON(t, s.args)
		lines = append(lines, `{"type":"assistant","sessionId":"sess-w","cwd":"`+ws+`","message":{"content":[{"type":"tool_use","id":"`+s.id+`","name":"`+s.tool+`","input":`+in+`}]}}`)
		isErr := "true"
		if v.Allowed {
			isErr = "false"
			if s.change != nil {
				s.change()
			}
			if err := g.ObserveCall(ctx, c, veto.Succeeded); err != nil {
				t.Fatal(err)
			}
		}
		lines = append(lines, `{"type":"user","sessionId":"sess-w","message":{"content":[{"type":"tool_result","tool_use_id":"`+s.id+`","is_error":`+isErr+`}]}}`)
	}
	evs, err := store.Events(ctx, "sess-w", 0)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n") + "\n", evs
}

type step struct {
	id, tool string
	args     map[string]any
	change   func()
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replayed(t *testing.T, transcript string, events []veto.Event, p *policy.Policy) *replay.Report {
	t.Helper()
	calls, err := replay.ClaudeTranscript(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(ctx, calls, events, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Replay decides on the recorded world alone, however the live one has
// changed at the same paths since: a directory the session worked in is
// now a symlink to another tree (paths resolve lexically, so the calls
// still name the recorded files), the files there and elsewhere hold
// other content, and the workspace is no longer a git repository. Under
// the same policy no verdict changes, nor once the workspace is deleted;
// and a fact the record does not hold
// fails the rule that asks for it (rule_failed), though the live file is
// there to be looked at.
//
// E23
func TestReplayDecidesOnTheRecordedWorldAlone(t *testing.T) {
	ws := workspace(t)
	docs := filepath.Join(ws, "docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "guide.md"), []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []step{
		{id: "r1", tool: "Read", args: map[string]any{"file_path": "docs/guide.md"}},
		{id: "e1", tool: "Edit", args: map[string]any{"file_path": "docs/guide.md", "old_string": "one", "new_string": "two"}, change: func() {
			os.WriteFile(filepath.Join(docs, "guide.md"), []byte("two"), 0o644)
		}},
		{id: "e2", tool: "Edit", args: map[string]any{"file_path": "docs/guide.md", "old_string": "two", "new_string": "six"}, change: func() {
			os.WriteFile(filepath.Join(docs, "guide.md"), []byte("six"), 0o644)
		}},
		{id: "w1", tool: "Write", args: map[string]any{"file_path": "README.md", "content": "x"}},
		{id: "w2", tool: "Write", args: map[string]any{"file_path": "docs/new.md", "content": "x"}},
		{id: "b1", tool: "Bash", args: map[string]any{"command": "go test ./..."}},
	}
	same := builtin(t, "")
	transcript, events := recordIn(t, same, ws, steps)

	// The live world at the same paths is now another one.
	other := filepath.Join(filepath.Dir(ws), "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "guide.md"), []byte("something else entirely"), 0o644)
	os.WriteFile(filepath.Join(other, "new.md"), []byte("already here"), 0o644)
	if err := os.RemoveAll(docs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, docs); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# another readme"), 0o644)
	os.RemoveAll(filepath.Join(ws, ".git"))

	if rep := replayed(t, transcript, events, same); rep.Calls != len(steps) || rep.Unchanged != len(steps) || len(rep.Changes) != 0 {
		t.Fatalf("the same policy replayed over a changed live world changed verdicts: %+v", rep)
	}

	// Recorded without the rule that reads README.md's fact, the record
	// holds none: replayed under a policy with the rule, the rule fails,
	// and the live README.md is not asked.
	loose := userPolicy(t, "builtin:\n  off: [file.read_before_write]\n")
	unread, unreadEvents := recordIn(t, loose, ws, []step{{id: "w9", tool: "Write", args: map[string]any{"file_path": "README.md", "content": "x"}}})
	for _, e := range unreadEvents {
		if e.Kind == veto.EventProbe {
			t.Fatalf("the loose policy probed: %+v", e)
		}
	}
	rep := replayed(t, unread, unreadEvents, same)
	if len(rep.Changes) != 1 || rep.Changes[0].CallID != "w9" || rep.Changes[0].After.Allowed ||
		rep.Changes[0].After.Rule != "file.read_before_write" || rep.Changes[0].After.Reason != veto.ReasonRuleFailed {
		t.Fatalf("an unrecorded fact: %+v, want w9 denied file.read_before_write/%s", rep, veto.ReasonRuleFailed)
	}

	// With the recorded workspace deleted, too.
	if err := os.RemoveAll(filepath.Dir(ws)); err != nil {
		t.Fatal(err)
	}
	if rep := replayed(t, transcript, events, same); rep.Unchanged != len(steps) || len(rep.Changes) != 0 {
		t.Fatalf("the same policy replayed with the workspace deleted changed verdicts: %+v", rep)
	}
}
