// Package claudeagentsdk speaks the protocol of veto's Claude Agent SDK
// module (integrations/claude-agent-sdk/veto.ts): a program built on the
// SDK (npm @anthropic-ai/claude-agent-sdk) registers the module's hook
// callbacks, and the module hands each hook input to veto-hook
// claude-agent-sdk (or to veto serve) as one JSON object on stdin,
// reading the reply veto writes on stdout.
//
// The hook inputs are Claude Code's hook payloads (the SDK runs the
// Claude Code CLI, which raises them), so they are decoded as Claude
// Code's are (agent.DecodeHook), with two fields of the module's own:
// veto_protocol, its version, and veto_can_ask, set when the host gave a
// canUseTool that can put a call to a person. One event is the module's
// alone: PermissionDenied with veto_answer "refused", a person's refusal
// at the host's canUseTool of a call veto asked about.
//
// The reply is the client table's (clients.ClaudeAgentSDK): the module
// lets a call go on only on {"block":false} with exit 0, and blocks on
// anything else.
package claudeagentsdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is the SDK's entry in the client table.
var Client = &clients.ClaudeAgentSDK

// Adapter is the module's protocol.
type Adapter struct{}

var (
	_ agent.Adapter = Adapter{}
	_ agent.Asker   = Adapter{}
)

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

// Version is the protocol version the module sends (veto_protocol).
const Version = 1

// PermissionDenied is the module's event for a person's refusal at the
// host's canUseTool (with veto_answer "refused").
const PermissionDenied = "PermissionDenied"

// askMode is what Decode puts in Event.PermissionMode when the host can
// ask a person (veto_can_ask).
const askMode = "veto:can-ask"

type extra struct {
	Protocol  int    `json:"veto_protocol"`
	CanAsk    bool   `json:"veto_can_ask"`
	Answer    string `json:"veto_answer"`
	EventName string `json:"hook_event_name"`
}

// Decode implements agent.Adapter: SessionStart, PreToolUse, PostToolUse
// and PostToolUseFailure as Claude Code's (agent.Hook), and the module's
// PermissionDenied, an observation, denied.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var x extra
	if err := agent.Unmarshal(b, &x); err != nil {
		return agent.Event{}, err
	}
	if x.Protocol != Version {
		return agent.Event{}, fmt.Errorf("the module speaks protocol version %d, veto %d: install it again (veto init claude-agent-sdk)", x.Protocol, Version)
	}
	if x.EventName == PermissionDenied {
		return denied(b, x)
	}
	h, err := agent.DecodeHook(b)
	if err != nil {
		return agent.Event{}, err
	}
	switch h.HookEventName {
	case agent.SessionStart, agent.PreToolUse, agent.PostToolUse, agent.PostToolUseFailure:
	default:
		return agent.Event{}, fmt.Errorf("veto does not handle the %q hook event from the SDK's module", h.HookEventName)
	}
	// The permission mode is the SDK's own; veto reads only whether the
	// host can ask a person.
	h.PermissionMode = ""
	ev, err := h.Event(Client.Actor, "")
	if err != nil {
		return ev, err
	}
	if ev.Kind == agent.Decide && x.CanAsk {
		ev.PermissionMode = askMode
	}
	return ev, nil
}

// denied reads the module's PermissionDenied: the call veto asked about,
// refused by the person at the host's canUseTool.
func denied(b []byte, x extra) (agent.Event, error) {
	if x.Answer != "refused" {
		return agent.Event{}, fmt.Errorf("veto does not know the answer %q (only a refusal is recorded from the SDK's module)", x.Answer)
	}
	var h agent.Hook
	if err := json.Unmarshal(b, &h); err != nil {
		return agent.Event{}, errors.New("the hook event is not valid JSON of the expected shape")
	}
	if h.SessionID == "" {
		return agent.Event{}, errors.New("the hook event has no session_id")
	}
	if h.ToolName == "" || h.ToolUseID == "" {
		return agent.Event{}, errors.New("the tool event has no tool_name or tool_use_id")
	}
	h.HookEventName, h.PermissionMode = agent.PostToolUse, ""
	ev, err := h.Event(Client.Actor, "")
	ev.Outcome = veto.Denied
	return ev, err
}

// Deny implements agent.Adapter: {"block":true,"reason":…}, exit 2.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: {"block":false}. The module lets the
// call go on through the host's own permission flow (its permissionMode,
// its canUseTool), approved or not.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }

// Ask implements agent.Asker: where the host gave a canUseTool, the
// module has the SDK ask it (permissionDecision "ask"), showing veto's
// question; without one the question is refused.
func (Adapter) Ask(ev *agent.Event, v veto.Verdict) (agent.Reply, bool) {
	if ev == nil || ev.Kind != agent.Decide || ev.PermissionMode != askMode {
		return agent.Reply{}, false
	}
	return agent.Write(*Client.Prompt, PromptReason(v)), true
}

// PromptReason is what the host's canUseTool is shown: the tool, the
// rule, the reason code and its sentence. Never argument text.
func PromptReason(v veto.Verdict) string {
	s := "veto asks a person about this " + v.Tool + " call"
	if v.Rule != "" {
		s += fmt.Sprintf(" (rule %s, reason %s)", v.Rule, v.Reason)
	}
	return s + ": " + v.Message
}
