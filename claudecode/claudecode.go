// Package claudecode speaks Claude Code's hook protocol: it reads one hook
// event from stdin's bytes, says what veto must do with it, and writes the
// reply in the form Claude Code obeys. It holds no rule logic.
//
// Claude Code blocks a tool call when a PreToolUse hook exits 2 (stderr is
// the reason the model reads); any other non-zero exit, a crash or a
// timeout lets the call run. So every failure here is turned into exit 2.
// An allow prints nothing: Claude Code's own permission prompts still run,
// unless the policy says veto approves.
package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// Event is one hook event, as Claude Code sends it.
type Event struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	Source         string          `json:"source"` // SessionStart: startup, resume, clear, compact
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	IsInterrupt    bool            `json:"is_interrupt"`
}

// The events veto handles.
const (
	SessionStart       = "SessionStart"
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
)

// Decode reads an event. Fields veto does not use are ignored (Claude Code
// adds them over time); the ones it uses must have their types.
func Decode(b []byte) (Event, error) {
	var e Event
	if len(bytes.TrimSpace(b)) == 0 {
		return e, errors.New("empty input: want one hook event as JSON")
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, errors.New("the hook event is not valid JSON of the expected shape")
	}
	switch e.HookEventName {
	case SessionStart, PreToolUse, PostToolUse, PostToolUseFailure:
	case "":
		return e, errors.New("the hook event has no hook_event_name")
	default:
		return e, fmt.Errorf("veto does not handle the %q hook event", e.HookEventName)
	}
	if e.SessionID == "" {
		return e, errors.New("the hook event has no session_id")
	}
	if e.HookEventName != SessionStart && (e.ToolName == "" || e.ToolUseID == "") {
		return e, errors.New("the tool event has no tool_name or tool_use_id")
	}
	return e, nil
}

// Call is the veto call of a tool event. The run is the session; a
// subagent acts in the same run and is named in the actor.
func (e Event) Call(projectDir string) (veto.Call, error) {
	c := veto.Call{ID: e.ToolUseID, Tool: e.ToolName, Cwd: e.Cwd, Workspace: projectDir,
		Actor: veto.Actor{Kind: "agent", ID: "claude-code", Agent: e.AgentType},
		Run:   veto.Run{Ref: e.SessionID}}
	if e.AgentType == "" && e.AgentID != "" {
		c.Actor.Agent = "subagent"
	}
	args, err := agent.Object(e.ToolInput, "tool_input")
	c.Args = args
	return c, err
}

// Adapter is Claude Code's hook protocol.
type Adapter struct {
	ProjectDir string // $CLAUDE_PROJECT_DIR
}

var _ agent.Adapter = Adapter{}

// Decode implements agent.Adapter.
func (a Adapter) Decode(b []byte) (agent.Event, error) {
	e, err := Decode(b)
	if err != nil {
		return agent.Event{}, err
	}
	return e.agentEvent(a.ProjectDir)
}

func (e Event) agentEvent(projectDir string) (agent.Event, error) {
	ev := agent.Event{Session: e.SessionID, Cwd: e.Cwd, ProjectDir: projectDir}
	switch e.HookEventName {
	case SessionStart:
		ev.Kind = agent.Start
		ev.Fresh = e.Source == "startup" || e.Source == "clear" || e.Source == ""
		return ev, nil
	case PreToolUse:
		ev.Kind = agent.Decide
	default:
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		if e.HookEventName == PostToolUseFailure {
			ev.Outcome = veto.Failed
			if e.IsInterrupt {
				ev.Outcome = veto.Cancelled
			}
		}
	}
	c, err := e.Call(projectDir)
	ev.Call = c
	return ev, err
}

// Deny implements agent.Adapter: exit 2 with the reason on stderr.
func (Adapter) Deny(reason string) agent.Reply {
	return agent.Reply{Exit: 2, Stderr: agent.Clip(reason) + "\n"}
}

// Allow implements agent.Adapter: nothing printed, so Claude Code's own
// permission flow runs; with approve, veto answers allow for the user.
func (Adapter) Allow(approve bool) agent.Reply {
	if !approve {
		return agent.Reply{}
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": PreToolUse, "permissionDecision": "allow", "permissionDecisionReason": "veto: allowed by policy"}})
	return agent.Reply{Stdout: string(b) + "\n"}
}

// Reason is what the model reads about a denial: the rule, the reason
// code, one sentence of why, what to do instead and the policy key that
// changes the answer, as the rule declared them. Never argument text.
func Reason(v veto.Verdict) string {
	var b strings.Builder
	b.WriteString("veto blocked this ")
	b.WriteString(v.Tool)
	b.WriteString(" call")
	if v.Rule != "" {
		fmt.Fprintf(&b, " (rule %s, reason %s)", v.Rule, v.Reason)
	} else {
		fmt.Fprintf(&b, " (%s)", v.Reason)
	}
	b.WriteString(": ")
	b.WriteString(v.Message)
	if v.Advice.Instead != "" {
		b.WriteString(" Instead: ")
		b.WriteString(v.Advice.Instead)
	}
	b.WriteString(" Do not retry it or work around it; ")
	hint := v.Advice.Policy
	if hint == "" && v.Stage == veto.StageRule && v.Rule != "" {
		hint = "the rule " + v.Rule
	}
	if hint != "" {
		b.WriteString("ask the user to do it, or to change veto's policy (" + hint + ").")
	} else {
		b.WriteString("ask the user how to proceed.")
	}
	return b.String()
}
