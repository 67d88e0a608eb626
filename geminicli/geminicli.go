// Package geminicli speaks Gemini CLI's hook protocol: BeforeTool decides,
// AfterTool observes, SessionStart opens the run. A hook that exits 2
// blocks the tool with stderr as the reason; veto also prints
// {"decision":"deny","reason":…}.
package geminicli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is Gemini CLI's entry in the client table.
var Client = &clients.GeminiCLI

// Adapter is Gemini CLI's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

type event struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	Trigger       string          `json:"trigger"`
	Source        string          `json:"source"` // what Gemini CLI sends now for trigger
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolCallID    string          `json:"tool_call_id"`
	Timestamp     string          `json:"timestamp"`
	ToolResponse  struct {
		Error      json.RawMessage `json:"error"`
		LLMContent json.RawMessage `json:"llmContent"`
	} `json:"tool_response"`
}

// Decode implements agent.Adapter.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	if e.SessionID == "" {
		return agent.Event{}, errors.New("the hook event has no session_id")
	}
	ev := agent.Event{Session: e.SessionID, Cwd: e.Cwd}
	switch e.HookEventName {
	case "SessionStart":
		ev.Kind, ev.Fresh = agent.Start, e.Trigger != "resume" && e.Source != "resume"
		return ev, nil
	case "BeforeTool":
		ev.Kind = agent.Decide
	case "AfterTool":
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		if len(e.ToolResponse.Error) > 0 && string(e.ToolResponse.Error) != "null" {
			ev.Outcome = veto.Failed
		} else if e.ToolName == ShellTool && shellFailed(e.ToolResponse.LLMContent) {
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
		// Gemini CLI does not name the call. Its session, tool and input
		// do, the same in BeforeTool and AfterTool (their timestamps
		// differ), so a call's decision and what it did share an id; a
		// later call of the same tool with the same input shares it too,
		// and is decided again as another call.
		id = "gemini-" + fmt.Sprintf("%x", sum(e.SessionID, e.ToolName, string(canonicalJSON(e.ToolInput))))
	}
	ev.Call = veto.Call{ID: id, Tool: e.ToolName, Cwd: e.Cwd, Run: veto.Run{Ref: e.SessionID},
		Actor: veto.Actor{Kind: "agent", ID: Client.Actor}}
	args, err := agent.Object(e.ToolInput, "tool_input")
	ev.Call.Args = args
	return ev, err
}

// Deny implements agent.Adapter: exit 2, the reason on stderr and
// {"decision":"deny","reason":…}.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: {} (or {"decision":"allow"}, approving).
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }

// canonicalJSON is raw re-encoded with sorted keys and no spaces, so that
// the same input spelt two ways names one call; raw itself when it does
// not decode.
func canonicalJSON(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// ShellTool is Gemini CLI's shell tool. A command that ran and failed is
// no error to Gemini CLI: its exit code is only in the text the model
// reads ("Exit Code: 1", "Signal: 9").
const ShellTool = "run_shell_command"

// shellFailed reports whether a shell tool's llmContent (a string, or
// parts with text) says the command exited non-zero or was killed.
func shellFailed(content json.RawMessage) bool {
	var text string
	if err := json.Unmarshal(content, &text); err != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(content, &parts) != nil {
			return false
		}
		for _, p := range parts {
			text += p.Text + "\n"
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "Exit Code:"); ok {
			if v = strings.TrimSpace(v); v != "0" && v != "(none)" && v != "" {
				return true
			}
		}
		if v, ok := strings.CutPrefix(line, "Signal:"); ok {
			if v = strings.TrimSpace(v); v != "(none)" && v != "" && v != "0" {
				return true
			}
		}
	}
	return false
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
