// Package opencode speaks the protocol of veto's OpenCode plugin
// (integrations/opencode/veto.ts): OpenCode (npm opencode-ai) runs its
// plugins' tool.execute.before and tool.execute.after hooks around every
// tool call, and veto's plugin hands each to veto-hook opencode (or to
// veto serve) as one JSON object on stdin, reading the reply veto writes
// on stdout. tool_call decides, tool_result observes, session_start
// (OpenCode's session.created event) opens the run.
//
// The reply is the client table's (clients.OpenCode): the plugin lets a
// call run only on {"block":false} with exit 0, and throws (refusing the
// call, with the reason) on anything else. OpenCode gives a plugin no
// prompt to ask a person, so a question is refused.
package opencode

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is OpenCode's entry in the client table.
var Client = &clients.OpenCode

// Adapter is the OpenCode plugin's protocol.
type Adapter struct{}

var (
	_ agent.Adapter = Adapter{}
	_ agent.Asker   = Adapter{}
)

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

// Version is the protocol version the plugin sends ("v").
const Version = 1

// The events the plugin sends ("event").
const (
	SessionStart = "session_start" // OpenCode's session.created
	ToolCall     = "tool_call"     // tool.execute.before
	ToolResult   = "tool_result"   // tool.execute.after
)

type event struct {
	V          int             `json:"v"`
	Event      string          `json:"event"`
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	IsError    bool            `json:"isError"` // tool_result: a command that exited non-zero
}

// Decode implements agent.Adapter.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	if e.V != Version {
		return agent.Event{}, fmt.Errorf("the plugin speaks protocol version %d, veto %d: install it again (veto init opencode)", e.V, Version)
	}
	if e.SessionID == "" {
		return agent.Event{}, errors.New("the hook event has no sessionId")
	}
	ev := agent.Event{Session: e.SessionID, Cwd: e.Cwd}
	switch e.Event {
	case SessionStart:
		// OpenCode raises session.created for a new session only: a
		// continued one (opencode run --continue) sends no start.
		ev.Kind, ev.Fresh = agent.Start, true
		return ev, nil
	case ToolCall:
		ev.Kind = agent.Decide
	case ToolResult:
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		if e.IsError {
			ev.Outcome = veto.Failed
		}
	case "":
		return ev, errors.New("the hook event has no event name")
	default:
		return ev, fmt.Errorf("veto does not handle the %q event", e.Event)
	}
	if e.ToolName == "" {
		return ev, errors.New("the tool event has no toolName")
	}
	if e.ToolCallID == "" {
		return ev, errors.New("the tool event has no toolCallId")
	}
	ev.Call = veto.Call{ID: e.ToolCallID, Tool: e.ToolName, Cwd: e.Cwd, Run: veto.Run{Ref: e.SessionID},
		Actor: veto.Actor{Kind: "agent", ID: Client.Actor}}
	args, err := agent.Object(e.Input, "input")
	ev.Call.Args = args
	return ev, err
}

// Deny implements agent.Adapter: {"block":true,"reason":…}, exit 2.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: {"block":false}. The plugin cannot skip
// OpenCode's own permission prompts, so an approve is the same.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }

// Ask implements agent.Asker: OpenCode has no prompt a plugin can open,
// so a question is refused, the reason saying a person must answer it.
func (Adapter) Ask(ev *agent.Event, v veto.Verdict) (agent.Reply, bool) {
	if ev == nil || ev.Kind != agent.Decide {
		return agent.Reply{}, false
	}
	return agent.Deny(Client, agent.Reason(v)+" "+NoPrompt), true
}

// NoPrompt is what a refused question adds to veto's reason.
const NoPrompt = "OpenCode gives veto's plugin no prompt to ask a person, so the call is refused here: a person must answer veto's question first."
