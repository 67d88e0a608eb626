package replay_test

import (
	"context"
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

var ctx = context.Background()

func builtin(t *testing.T, extra string) *policy.Policy {
	t.Helper()
	layers := []*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}
	if extra != "" {
		l, err := policy.Parse(policy.KindFlag, "new.yaml", []byte(extra))
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	c, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Merge(layers, c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// record runs a session through the live gate, as the hook would, and
// returns its transcript (Claude Code's JSONL) and veto's events.
func record(t *testing.T, ws string) (string, []veto.Event) {
	t.Helper()
	store := memstore.New()
	g, err := builtin(t, "").Gate(policy.BuildOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	step := func(id, tool string, args map[string]any, change func()) {
		c := &veto.Call{ID: id, Tool: tool, Args: args, Cwd: ws, Run: veto.Run{Ref: "sess-1", Fresh: true}}
		v := g.Decide(ctx, c)
		in, _ := json.Marshal(args)
		lines = append(lines, `{"type":"assistant","sessionId":"sess-1","cwd":"`+ws+`","message":{"content":[{"type":"tool_use","id":"`+id+`","name":"`+tool+`","input":`+string(in)+`}]}}`)
		isErr := "false"
		if !v.Allowed {
			isErr = "true"
		} else if change != nil {
			change()
		}
		if v.Allowed {
			if err := g.ObserveCall(ctx, c, veto.Succeeded); err != nil {
				t.Fatal(err)
			}
		}
		lines = append(lines, `{"type":"user","sessionId":"sess-1","message":{"content":[{"type":"tool_result","tool_use_id":"`+id+`","is_error":`+isErr+`}]}}`)
	}
	step("t1", "Read", map[string]any{"file_path": "notes.md"}, nil)
	step("t2", "Edit", map[string]any{"file_path": "notes.md", "old_string": "a", "new_string": "b"}, func() {
		os.WriteFile(filepath.Join(ws, "notes.md"), []byte("b"), 0o644)
	})
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("changed behind the run's back"), 0o644)
	step("t3", "Edit", map[string]any{"file_path": "notes.md", "old_string": "b", "new_string": "c"}, nil)
	step("t4", "Write", map[string]any{"file_path": "README.md", "content": "x"}, nil)
	step("t5", "Bash", map[string]any{"command": "git push --force origin main"}, nil)
	step("t6", "Bash", map[string]any{"command": "go test ./..."}, nil)
	evs, err := store.Events(ctx, "sess-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n") + "\n", evs
}

func workspace(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# readme"), 0o644)
	return ws
}

// With the recorded workspace deleted, replay under the same policy
// changes no verdict (E23 is pinned by TestReplayDecidesOnTheRecordedWorldAlone).
func TestReplayNeverTouchesTheLiveWorld(t *testing.T) {
	ws := workspace(t)
	transcript, events := record(t, ws)
	// The world the session ran in is gone: a replay that looked at it would
	// decide differently (the stale edit would pass, the unread README
	// overwrite would pass, the workspace would not be a git repository).
	if err := os.RemoveAll(filepath.Dir(ws)); err != nil {
		t.Fatal(err)
	}
	calls, err := replay.ClaudeTranscript(strings.NewReader(transcript))
	if err != nil || len(calls) != 6 {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
	rep, err := replay.Run(ctx, calls, events, builtin(t, ""), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unchanged != 6 || len(rep.Changes) != 0 {
		t.Fatalf("the same policy on the recorded world changed verdicts: %+v", rep)
	}
}

func TestReplayReportsWhatANewPolicyChanges(t *testing.T) {
	ws := workspace(t)
	transcript, events := record(t, ws)
	calls, err := replay.ClaudeTranscript(strings.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	tighter := builtin(t, `rules:
  - id: no-go-test
    match: {tool: Bash}
    deny: 'args.command.startsWith("go test")'
    reason: tests_in_ci
`)
	rep, err := replay.Run(ctx, calls, events, tighter, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewlyDenied != 1 || len(rep.Changes) != 1 || rep.Changes[0].CallID != "t6" ||
		rep.Changes[0].After.Rule != "no-go-test" || !rep.Changes[0].Before.Allowed {
		t.Fatalf("report %+v", rep)
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), "go test") {
		t.Fatal("the report quotes a call's arguments")
	}
}

func TestTranscriptParsing(t *testing.T) {
	calls, err := replay.ClaudeTranscript(strings.NewReader(`{"type":"summary","summary":"x"}
{"type":"assistant","sessionId":"s","cwd":"/w","message":{"content":"just text"}}
{"type":"assistant","sessionId":"s","cwd":"/w","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"x","limit":5}}]}}
{"type":"assistant","sessionId":"s","cwd":"/w","message":{"content":[{"type":"tool_use","id":"b","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"a","is_error":true}]}}
`))
	if err != nil || len(calls) != 2 {
		t.Fatalf("%v %v", calls, err)
	}
	if calls[0].Outcome != veto.Failed || calls[1].Outcome != veto.Pending || calls[0].Call.Cwd != "/w" || calls[0].Call.Run.Ref != "s" {
		t.Fatalf("%+v", calls)
	}
	if n, ok := calls[0].Call.Args["limit"].(json.Number); !ok || n != "5" {
		t.Fatalf("numbers: %#v", calls[0].Call.Args["limit"])
	}
	if _, err := replay.ClaudeTranscript(strings.NewReader("{not json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a broken line: %v", err)
	}
}
