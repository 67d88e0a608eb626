// Package copilotcli speaks GitHub Copilot CLI's hook protocol:
// preToolUse decides (toolArgs arrives as a JSON string), postToolUse
// observes, sessionStart opens the run. The reply is
// {"permissionDecision":"deny","permissionDecisionReason":…}.
package copilotcli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is Copilot CLI's entry in the client table.
var Client = &clients.CopilotCLI

// Adapter is Copilot CLI's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

type event struct {
	HookEventName string          `json:"hookEventName"`
	SessionID     string          `json:"sessionId"`
	Timestamp     json.Number     `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	Source        string          `json:"source"`
	ToolName      string          `json:"toolName"`
	ToolArgs      json.RawMessage `json:"toolArgs"`
	ToolCallID    string          `json:"toolCallId"`
	ToolResult    struct {
		ResultType string `json:"resultType"`
	} `json:"toolResult"`
}

// Event names the hook command gives with --event, since Copilot CLI's
// payload does not always name its own event.
const (
	SessionStart = "sessionStart"
	PreToolUse   = "preToolUse"
	PostToolUse  = "postToolUse"
)

// Decode implements agent.Adapter. The event is named in the payload's
// hookEventName or, failing that, guessed from its fields: a toolResult
// means postToolUse, a toolName preToolUse, else sessionStart.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	name := e.HookEventName
	if name == "" {
		switch {
		case e.ToolResult.ResultType != "":
			name = PostToolUse
		case e.ToolName != "":
			name = PreToolUse
		default:
			name = SessionStart
		}
	}
	// The run: Copilot CLI's session id when it sends one, else the
	// project directory.
	run := e.SessionID
	if run == "" {
		run = "copilot:" + e.Cwd
	}
	if e.Cwd == "" {
		return agent.Event{}, errors.New("the hook event has no cwd")
	}
	ev := agent.Event{Session: run, Cwd: e.Cwd}
	switch name {
	case SessionStart:
		ev.Kind, ev.Fresh = agent.Start, e.Source != "resume"
		return ev, nil
	case PreToolUse:
		ev.Kind = agent.Decide
	case PostToolUse:
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		switch e.ToolResult.ResultType {
		case "failure":
			ev.Outcome = veto.Failed
		case "denied":
			ev.Outcome = veto.Denied
		}
	default:
		return ev, fmt.Errorf("veto does not handle the %q hook event", name)
	}
	if e.ToolName == "" {
		return ev, errors.New("the tool event has no toolName")
	}
	args, err := agent.Object(e.ToolArgs, "toolArgs")
	id := e.ToolCallID
	if id == "" {
		id = fmt.Sprintf("copilot-%s-%s", e.Timestamp, e.ToolName)
	}
	ev.Call = veto.Call{ID: id, Tool: e.ToolName, Args: args, Cwd: e.Cwd, Run: veto.Run{Ref: run},
		Actor: veto.Actor{Kind: "agent", ID: Client.Actor}}
	return ev, err
}

// Deny implements agent.Adapter: {"permissionDecision":"deny",
// "permissionDecisionReason":…}, exit 0.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: nothing printed (or
// {"permissionDecision":"allow"}, approving).
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }
