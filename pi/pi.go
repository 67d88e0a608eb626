// Package pi speaks the protocol of veto's pi extension
// (integrations/pi/veto.ts): pi (npm @mariozechner/pi-coding-agent) raises
// session_start, tool_call and tool_result in its extensions, and veto's
// extension hands each to veto-hook pi (or to veto serve) as one JSON
// object on stdin, reading the reply veto writes on stdout. tool_call
// decides, tool_result observes, session_start opens the run; an answer
// event records a person's refusal at pi's own confirm dialog.
//
// The reply is the client table's (clients.Pi): the extension lets a call
// run only on {"block":false} with exit 0, and blocks on anything else.
package pi

import (
	"errors"
	"fmt"

	"encoding/json"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is pi's entry in the client table.
var Client = &clients.Pi

// Adapter is the pi extension's protocol.
type Adapter struct{}

var (
	_ agent.Adapter = Adapter{}
	_ agent.Asker   = Adapter{}
)

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

// Version is the protocol version the extension sends ("v").
const Version = 1

// The events the extension sends ("event").
const (
	SessionStart = "session_start"
	ToolCall     = "tool_call"
	ToolResult   = "tool_result"
	// Answer: the person at pi's confirm dialog refused a call veto asked
	// about; recorded as the call's observation, denied.
	Answer = "answer"
)

// uiMode is what Decode puts in Event.PermissionMode when pi has a UI
// that can ask the person (ctx.hasUI: interactive and RPC mode).
const uiMode = "ui"

type event struct {
	V          int             `json:"v"`
	Event      string          `json:"event"`
	SessionID  string          `json:"sessionId"`
	Cwd        string          `json:"cwd"`
	Reason     string          `json:"reason"`  // session_start: startup, new, resume, fork, reload
	Resumed    bool            `json:"resumed"` // session_start: the session already holds messages
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	IsError    bool            `json:"isError"` // tool_result
	HasUI      bool            `json:"hasUI"`   // tool_call
	Answer     string          `json:"answer"`  // answer: "refused"
}

// Decode implements agent.Adapter.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	if e.V != Version {
		return agent.Event{}, fmt.Errorf("the extension speaks protocol version %d, veto %d: install it again (veto init pi)", e.V, Version)
	}
	if e.SessionID == "" {
		return agent.Event{}, errors.New("the hook event has no sessionId")
	}
	ev := agent.Event{Session: e.SessionID, Cwd: e.Cwd}
	switch e.Event {
	case SessionStart:
		ev.Kind = agent.Start
		ev.Fresh = (e.Reason == "startup" || e.Reason == "new") && !e.Resumed
		return ev, nil
	case ToolCall:
		ev.Kind = agent.Decide
		if e.HasUI {
			ev.PermissionMode = uiMode
		}
	case ToolResult:
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		if e.IsError {
			ev.Outcome = veto.Failed
		}
	case Answer:
		if e.Answer != "refused" {
			return ev, fmt.Errorf("veto does not know the answer %q (only a refusal is recorded from pi)", e.Answer)
		}
		ev.Kind, ev.Outcome = agent.Observe, veto.Denied
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

// Allow implements agent.Adapter: {"block":false}. pi has no prompt of its
// own, so an approve is the same.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }

// Ask implements agent.Asker: where pi has a UI (ctx.hasUI), the extension
// asks the person with pi's confirm dialog, showing veto's question;
// without one (print and JSON mode) the question is refused.
func (Adapter) Ask(ev *agent.Event, v veto.Verdict) (agent.Reply, bool) {
	if ev == nil || ev.Kind != agent.Decide || ev.PermissionMode != uiMode {
		return agent.Reply{}, false
	}
	return agent.Write(*Client.Prompt, PromptReason(v)), true
}

// PromptReason is what pi's confirm dialog shows the person: the tool, the
// rule, the reason code and its sentence. Never argument text.
func PromptReason(v veto.Verdict) string {
	s := "veto asks a person about this " + v.Tool + " call"
	if v.Rule != "" {
		s += fmt.Sprintf(" (rule %s, reason %s)", v.Rule, v.Reason)
	}
	return s + ": " + v.Message
}
