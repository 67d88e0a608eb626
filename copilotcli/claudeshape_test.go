package copilotcli_test

import (
	"strings"
	"testing"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/agent/agenttest"
	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/copilotcli"
)

// The payloads Copilot CLI 1.0.102 sent the hooks of .claude/settings.json
// (TestCopilotCLIClaudeHookPayloads), shortened paths.
const (
	guestStart   = `{"hook_event_name":"SessionStart","session_id":"760eb293","timestamp":"2026-12-02T07:12:09.117Z","cwd":"/home/dev/app","source":"new","initial_prompt":"go"}`
	guestPreBash = `{"hook_event_name":"PreToolUse","session_id":"760eb293","timestamp":"2026-12-02T07:12:10.796Z","cwd":"/home/dev/app","tool_name":"Bash","tool_input":{"command":"echo fine","description":"Say fine"}}`
	guestPreRead = `{"hook_event_name":"PreToolUse","session_id":"760eb293","timestamp":"2026-12-02T07:12:12.002Z","cwd":"/home/dev/app","tool_name":"Read","tool_input":{"path":"/home/dev/app/README.md"}}`
	guestPostBad = `{"hook_event_name":"PostToolUse","session_id":"760eb293","timestamp":"2026-12-02T07:12:11.886Z","cwd":"/home/dev/app","tool_name":"Bash","tool_input":{"command":"ls no-such-directory"},"tool_result":{"result_type":"success","text_result_for_llm":"ls: cannot access 'no-such-directory'\n<shellId: 1 completed with exit code 2>"}}`
	guestPostOK  = `{"hook_event_name":"PostToolUse","session_id":"760eb293","timestamp":"2026-12-02T07:12:12.429Z","cwd":"/home/dev/app","tool_name":"Write","tool_input":{"path":"/home/dev/app/NOTES.md","file_text":"# Notes\n"},"tool_result":{"result_type":"success","text_result_for_llm":"Created file"}}`
	guestFailure = `{"hook_event_name":"PostToolUseFailure","session_id":"760eb293","timestamp":"2026-12-02T07:12:12.944Z","cwd":"/home/dev/app","tool_name":"Read","tool_input":{"path":"/home/dev/app/no-such-file"},"error":"Path does not exist"}`
	guestPermit  = `{"hookName":"permissionRequest","sessionId":"760eb293","timestamp":1796195530936,"cwd":"/home/dev/app","toolName":"bash","toolInput":{"command":"echo fine"},"permissionSuggestions":[]}`
	// Copilot CLI's own registration's payload of the same Read call.
	ownPreView = `{"sessionId":"760eb293","timestamp":1796195532002,"cwd":"/home/dev/app","toolName":"view","toolArgs":{"path":"/home/dev/app/README.md"}}`
	// Claude Code's own payloads are never claimed.
	claudePre   = `{"session_id":"s1","transcript_path":"/home/dev/.claude/p/s1.jsonl","cwd":"/home/dev/app","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/app/x.go"},"tool_use_id":"toolu_01"}`
	claudeStart = `{"session_id":"s1","transcript_path":"/home/dev/.claude/p/s1.jsonl","cwd":"/home/dev/app","hook_event_name":"SessionStart","source":"startup"}`
)

// TestGuestDecodes: Copilot CLI's Claude-shaped payloads are its calls,
// under its own tools' names and actor, in its session.
func TestGuestDecodes(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"start", guestStart, "kind: start\nsession: 760eb293\ncwd: /home/dev/app\nfresh: true\n"},
		{"pre-bash", guestPreBash, "kind: decide\nsession: 760eb293\ncwd: /home/dev/app\ncall.id: copilot-"}, {"pre-bash-tool", guestPreBash, "call.tool: bash\n" +
			`call.args: {"command":"echo fine","description":"Say fine"}` + "\ncall.actor: agent copilot-cli\ncall.run: 760eb293\ncall.cwd: /home/dev/app\n"},
		{"post-bash-fails", guestPostBad, "outcome: failed\n"},
		{"post-write", guestPostOK, "outcome: succeeded\n"},
		{"post-failure", guestFailure, "outcome: failed\n"},
		{"permission", guestPermit, "kind: ignore\n"},
		{"no-cwd", `{"hook_event_name":"PreToolUse","session_id":"a","timestamp":"2026-12-02T07:12:10Z","tool_name":"Bash","tool_input":{}}`, "error: the hook event has no cwd\n"},
		{"no-tool", `{"hook_event_name":"PreToolUse","session_id":"a","timestamp":"2026-12-02T07:12:10Z","cwd":"/x"}`, "error: the tool event has no tool_name\n"},
		{"unknown-event", `{"hook_event_name":"Stop","session_id":"a","timestamp":"2026-12-02T07:12:10Z","cwd":"/x"}`, "error: veto does not handle the \"Stop\" hook event\n"},
		{"args-not-object", `{"hook_event_name":"PreToolUse","session_id":"a","timestamp":"2026-12-02T07:12:10Z","cwd":"/x","tool_name":"Bash","tool_input":[1]}`, "error: tool_input does not hold a JSON object\n"},
	} {
		ev, err := copilotcli.Guest{}.Decode([]byte(tc.in))
		got := agenttest.Describe(ev, err)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\ngot\n%s\nwant it to hold\n%s", tc.name, got, tc.want)
		}
		if err == nil {
			if verr := agenttest.Valid(ev); verr != nil {
				t.Errorf("%s: %v", tc.name, verr)
			}
		}
	}
	// Read with view's arguments is view, with the id Copilot CLI's own
	// registration gives the same call: both registrations name one call.
	guest, err := copilotcli.Guest{}.Decode([]byte(guestPreRead))
	if err != nil {
		t.Fatal(err)
	}
	own, err := copilotcli.Adapter{}.Decode([]byte(ownPreView))
	if err != nil {
		t.Fatal(err)
	}
	if guest.Call.Tool != "view" || guest.Call.ID != own.Call.ID || guest.Call.Run.Ref != own.Call.Run.Ref || guest.Call.Actor != own.Call.Actor {
		t.Errorf("the guest's call %+v is not its own registration's %+v", guest.Call, own.Call)
	}
}

// TestGuestClaims: veto's Claude Code hook answers Copilot CLI's payloads
// as Copilot CLI's, and Claude Code's own as Claude Code's.
func TestGuestClaims(t *testing.T) {
	for _, in := range []string{guestStart, guestPreBash, guestPreRead, guestPostBad, guestFailure, guestPermit, ownPreView} {
		if !copilotcli.ClaimsClaudeShaped([]byte(in)) {
			t.Errorf("not claimed: %s", in)
		}
		if _, ok := agent.Sender(claudecode.Adapter{}, []byte(in)).(copilotcli.Guest); !ok {
			t.Errorf("veto's Claude Code hook does not answer it as Copilot CLI's: %s", in)
		}
	}
	for _, in := range []string{claudePre, claudeStart, "", "{", "[]", `{"hook_event_name":"PreToolUse","timestamp":1}`,
		`{"hook_event_name":"PreToolUse","timestamp":"2026-12-02T07:12:10Z","tool_use_id":"toolu_1"}`} {
		if copilotcli.ClaimsClaudeShaped([]byte(in)) {
			t.Errorf("claimed: %s", in)
		}
		if _, ok := agent.Sender(claudecode.Adapter{}, []byte(in)).(claudecode.Adapter); !ok {
			t.Errorf("veto's Claude Code hook does not answer it as Claude Code's: %s", in)
		}
	}
	// Another host's payloads are its own.
	if _, ok := agent.Sender(copilotcli.Adapter{}, []byte(guestPreBash)).(copilotcli.Adapter); !ok {
		t.Error("a guest was found for a client that hosts none")
	}
}

// TestGuestReplies: the denial is Copilot CLI's, and exit 2 with the reason
// on stderr: Copilot CLI 1.0.102 blocks on it with the reason (measured,
// TestCopilotCLIClaudeHookReplies), and so does Claude Code. An allow
// prints nothing.
func TestGuestReplies(t *testing.T) {
	r := copilotcli.Guest{}.Deny(agenttest.Reason)
	if r.Exit != 2 || !strings.HasPrefix(r.Stdout, `{"permissionDecision":"deny","permissionDecisionReason":"veto blocked this Bash call`) ||
		r.Stderr != agenttest.Reason+"\n" {
		t.Errorf("deny: %+v", r)
	}
	if r := (copilotcli.Guest{}).Allow(false); r != (agent.Reply{}) {
		t.Errorf("allow: %+v", r)
	}
	if r := (copilotcli.Guest{}).Allow(true); r.Exit != 0 || r.Stdout != "{\"permissionDecision\":\"allow\"}\n" {
		t.Errorf("approve: %+v", r)
	}
	long := copilotcli.Guest{}.Deny(strings.Repeat("x", 3*agent.MaxReason))
	if len(long.Stderr) > agent.MaxReason+8 || len(long.Stdout) > agent.MaxReason+200 {
		t.Errorf("a long reason is not clipped: %d, %d", len(long.Stderr), len(long.Stdout))
	}
}

func FuzzGuestDecode(f *testing.F) {
	for _, s := range []string{guestStart, guestPreBash, guestPreRead, guestPostBad, guestPostOK, guestFailure, guestPermit, ownPreView, claudePre} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		agenttest.Fuzz(t, copilotcli.Guest{}.Decode, b)
		if copilotcli.ClaimsClaudeShaped(b) != copilotcli.ClaimsClaudeShaped(b) {
			t.Fatal("two claims differ")
		}
	})
}
