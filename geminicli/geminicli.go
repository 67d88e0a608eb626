// Package geminicli speaks Gemini CLI's hook protocol: BeforeTool decides,
// AfterTool observes, SessionStart opens the run. A hook that exits 2
// blocks the tool with stderr as the reason; veto also prints
// {"decision":"deny","reason":…}.
package geminicli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// Adapter is Gemini CLI's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

type event struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	Trigger       string          `json:"trigger"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolCallID    string          `json:"tool_call_id"`
	Timestamp     string          `json:"timestamp"`
	ToolResponse  struct {
		Error json.RawMessage `json:"error"`
	} `json:"tool_response"`
}

// Decode implements agent.Adapter.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if len(bytes.TrimSpace(b)) == 0 {
		return agent.Event{}, errors.New("empty input: want one hook event as JSON")
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return agent.Event{}, errors.New("the hook event is not valid JSON of the expected shape")
	}
	if e.SessionID == "" {
		return agent.Event{}, errors.New("the hook event has no session_id")
	}
	ev := agent.Event{Session: e.SessionID, Cwd: e.Cwd}
	switch e.HookEventName {
	case "SessionStart":
		ev.Kind, ev.Fresh = agent.Start, e.Trigger != "resume"
		return ev, nil
	case "BeforeTool":
		ev.Kind = agent.Decide
	case "AfterTool":
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		if len(e.ToolResponse.Error) > 0 && string(e.ToolResponse.Error) != "null" {
			ev.Outcome = veto.Failed
		}
	case "":
		return ev, errors.New("the hook event has no hook_event_name")
	default:
		return ev, fmt.Errorf("veto does not handle the %q hook event", e.HookEventName)
	}
	if e.ToolName == "" {
		return ev, errors.New("the tool event has no tool_name")
	}
	id := e.ToolCallID
	if id == "" {
		// Gemini CLI may not name the call: the name, time and input do.
		id = "gemini-" + fmt.Sprintf("%x", sum(e.ToolName, e.Timestamp, string(e.ToolInput)))
	}
	ev.Call = veto.Call{ID: id, Tool: e.ToolName, Cwd: e.Cwd, Run: veto.Run{Ref: e.SessionID},
		Actor: veto.Actor{Kind: "agent", ID: "gemini-cli"}}
	args, err := agent.Object(e.ToolInput, "tool_input")
	ev.Call.Args = args
	return ev, err
}

// Deny implements agent.Adapter.
func (Adapter) Deny(reason string) agent.Reply {
	reason = agent.Clip(reason)
	b, _ := json.Marshal(map[string]string{"decision": "deny", "reason": reason})
	return agent.Reply{Exit: 2, Stdout: string(b) + "\n", Stderr: reason + "\n"}
}

// Allow implements agent.Adapter.
func (Adapter) Allow(approve bool) agent.Reply {
	if approve {
		return agent.Reply{Stdout: `{"decision":"allow"}` + "\n"}
	}
	return agent.Reply{Stdout: "{}\n"}
}

// sum is FNV-1a over the parts, for call ids Gemini CLI does not give.
func sum(parts ...string) uint64 {
	var h uint64 = 14695981039346656037
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
		h ^= 0xff
	}
	return h
}
