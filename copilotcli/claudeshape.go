package copilotcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Copilot CLI 1.0.102 also runs the hooks it finds in a project's
// .claude/settings.json (measured in e2e, TestCopilotCLIReadsClaudeHooks),
// so veto's Claude Code hook gets Copilot's calls. It sends them
// Claude-shaped, with differences that name the sender: hook_event_name
// (SessionStart, PreToolUse, PostToolUse, PostToolUseFailure), session_id,
// a timestamp as an RFC 3339 string (Claude Code sends none), cwd,
// tool_name as Claude Code's name for its own tool (bash is Bash, view is
// Read), tool_input with its own tool's arguments (view's path, not
// Read's file_path), a PostToolUse's tool_result {result_type,
// text_result_for_llm}; and no tool_use_id, transcript_path or
// permission_mode. Its permissionRequest comes in its own camelCase shape
// ({"hookName":"permissionRequest","sessionId":…,"toolName":…}).
//
// Guest is that payload's adapter: veto decides such a call once, as
// Copilot CLI's (its actor, its run, its tool names, the same call id as
// its own registration's payload of the call), and replies in a form
// Copilot CLI blocks on.
type Guest struct{}

var _ agent.Adapter = Guest{}

func init() {
	agent.RegisterGuest(agent.Guest{Host: &clients.ClaudeCode, Client: Client, Claims: ClaimsClaudeShaped,
		New: func(agent.Env) agent.Adapter { return Guest{} }})
}

// claudeNames are Copilot CLI's tools by the Claude Code names it gives
// them in a Claude-shaped payload (measured, 1.0.102).
var claudeNames = map[string]string{"Bash": "bash", "Read": "view", "Write": "create", "Edit": "edit", "Glob": "glob", "Grep": "grep"}

// ClaimsClaudeShaped reports whether b, which came to veto's Claude Code
// hook, is Copilot CLI's: its camelCase shape, or the Claude shape with a
// timestamp string and no transcript_path, and for a call no tool_use_id.
// A payload Claude Code sends always names a call's tool_use_id, so no
// call veto decides as Claude Code's is ever claimed here: only payloads
// Claude Code's adapter refuses as malformed.
func ClaimsClaudeShaped(b []byte) bool {
	var p map[string]json.RawMessage
	if json.Unmarshal(b, &p) != nil {
		return false
	}
	if _, claude := p["hook_event_name"]; !claude {
		for _, k := range []string{"hookName", "hookEventName", "sessionId", "toolName"} {
			if _, ok := p[k]; ok {
				return true
			}
		}
		return false
	}
	var ts string
	if json.Unmarshal(p["timestamp"], &ts) != nil || ts == "" {
		return false
	}
	_, transcript := p["transcript_path"]
	_, id := p["tool_use_id"]
	return !transcript && !id
}

type claudeShaped struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Timestamp     string          `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	Source        string          `json:"source"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolResult    struct {
		ResultType string `json:"result_type"`
		Text       string `json:"text_result_for_llm"`
	} `json:"tool_result"`
}

// Decode implements agent.Adapter: a Claude-shaped payload of Copilot
// CLI's, or one in its own shape (Adapter's); a permission request is
// ignored (the call was decided at its PreToolUse).
func (Guest) Decode(b []byte) (agent.Event, error) {
	var p map[string]json.RawMessage
	if err := agent.Unmarshal(b, &p); err != nil {
		return agent.Event{}, err
	}
	if _, claude := p["hook_event_name"]; !claude {
		var named struct {
			HookName string `json:"hookName"`
		}
		json.Unmarshal(b, &named)
		if named.HookName == "permissionRequest" {
			return agent.Event{Kind: agent.Ignore}, nil
		}
		return Adapter{}.Decode(b)
	}
	var e claudeShaped
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	if e.Cwd == "" {
		return agent.Event{}, errors.New("the hook event has no cwd")
	}
	run := e.SessionID
	if run == "" {
		run = "copilot:" + e.Cwd
	}
	ev := agent.Event{Session: run, Cwd: e.Cwd}
	switch e.HookEventName {
	case agent.SessionStart:
		ev.Kind, ev.Fresh = agent.Start, e.Source != "resume"
		return ev, nil
	case agent.PermissionRequest:
		return agent.Event{Kind: agent.Ignore}, nil
	case agent.PreToolUse:
		ev.Kind = agent.Decide
	case agent.PostToolUse, agent.PostToolUseFailure:
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		switch {
		case e.HookEventName == agent.PostToolUseFailure, e.ToolResult.ResultType == "failure":
			ev.Outcome = veto.Failed
		case e.ToolResult.ResultType == "denied":
			ev.Outcome = veto.Denied
		}
	default:
		return ev, fmt.Errorf("veto does not handle the %q hook event", e.HookEventName)
	}
	if e.ToolName == "" {
		return ev, errors.New("the tool event has no tool_name")
	}
	tool := e.ToolName
	if own, ok := claudeNames[tool]; ok {
		tool = own
	}
	if ev.Kind == agent.Observe && tool == ShellTool && ev.Outcome == veto.Succeeded && shellFailed(e.ToolResult.Text) {
		ev.Outcome = veto.Failed
	}
	args, err := agent.Object(e.ToolInput, "tool_input")
	// The id Copilot CLI's own registration gives the call (Adapter's):
	// its session, its tool's name and the arguments.
	id := fmt.Sprintf("copilot-%x", sum(e.SessionID, tool, string(canonicalArgs(e.ToolInput))))
	if e.SessionID == "" {
		ms := e.Timestamp
		if t, perr := time.Parse(time.RFC3339Nano, e.Timestamp); perr == nil {
			ms = fmt.Sprint(t.UnixMilli())
		}
		id = fmt.Sprintf("copilot-%s-%s", ms, tool)
	}
	ev.Call = veto.Call{ID: id, Tool: tool, Args: args, Cwd: e.Cwd, Run: veto.Run{Ref: run},
		Actor: veto.Actor{Kind: "agent", ID: Client.Actor}}
	// Where veto's own Copilot CLI hooks are registered too, 1.0.102 runs
	// them first (measured, TestCopilotCLIBothRegistrations).
	ev.Twin = Client
	return ev, err
}

// Deny implements agent.Adapter: Copilot CLI's denial
// ({"permissionDecision":"deny","permissionDecisionReason":…}), which
// 1.0.102 obeys from a hook in .claude/settings.json with its reason, and
// exit 2 with the reason on stderr, which Claude Code obeys: whichever
// client sent the payload, the call is blocked.
func (Guest) Deny(reason string) agent.Reply {
	r := agent.Deny(Client, reason)
	r.Exit, r.Stderr = 2, agent.Clip(reason)+"\n"
	return r
}

// Allow implements agent.Adapter: nothing printed (approving, Copilot
// CLI's {"permissionDecision":"allow"}, which Claude Code ignores).
func (Guest) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }
