package agent

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
)

// Hook is a hook event in the shape Claude Code sends, which Codex
// follows: snake_case fields, the event in hook_event_name, the call's
// input in tool_input and its id in tool_use_id.
type Hook struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	Source         string          `json:"source"` // SessionStart: startup, resume, clear, compact; ConfigChange: the settings layer
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"`
	AgentType      string          `json:"agent_type"`
	IsInterrupt    bool            `json:"is_interrupt"`
	FilePath       string          `json:"file_path"` // ConfigChange: the changed settings' file
}

// The Claude-shaped events veto handles.
const (
	SessionStart       = "SessionStart"
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	PermissionRequest  = "PermissionRequest"
	ConfigChange       = "ConfigChange"
)

// DecodeHook reads a Claude-shaped event. Fields veto does not use are
// ignored (clients add them over time); the ones it uses must have their
// types, and an event must name its session and, for a tool, the tool and
// the call.
func DecodeHook(b []byte) (Hook, error) {
	var h Hook
	if err := Unmarshal(b, &h); err != nil {
		return h, err
	}
	switch h.HookEventName {
	case SessionStart, PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
	case ConfigChange:
		if h.SessionID == "" {
			return h, errors.New("the hook event has no session_id")
		}
		return h, nil
	case "":
		return h, errors.New("the hook event has no hook_event_name")
	default:
		return h, fmt.Errorf("veto does not handle the %q hook event", h.HookEventName)
	}
	if h.SessionID == "" {
		return h, errors.New("the hook event has no session_id")
	}
	switch {
	case h.HookEventName == PermissionRequest && h.ToolName == "":
		return h, errors.New("the permission request has no tool_name")
	case h.HookEventName != SessionStart && h.HookEventName != PermissionRequest && (h.ToolName == "" || h.ToolUseID == ""):
		return h, errors.New("the tool event has no tool_name or tool_use_id")
	}
	return h, nil
}

// Event is what veto does with h, its call made by the agent actor (the
// client's actor id); projectDir is the project the client reports. The
// run is the session: SessionStart from startup or clear (or no source)
// opens a fresh one, resume and compact go on with it. A subagent acts in
// the same run and is named in the actor. PostToolUseFailure is a failed
// call, or a cancelled one when the user interrupted it.
func (h Hook) Event(actor, projectDir string) (Event, error) {
	ev := Event{Session: h.SessionID, Cwd: h.Cwd, ProjectDir: projectDir, Transcript: h.TranscriptPath, PermissionMode: h.PermissionMode}
	switch h.HookEventName {
	case SessionStart:
		ev.Kind = Start
		ev.Fresh = h.Source == "startup" || h.Source == "clear" || h.Source == ""
		return ev, nil
	case ConfigChange:
		ev.Kind, ev.ConfigSource, ev.ConfigFile = Config, h.Source, h.FilePath
		return ev, nil
	case PreToolUse:
		ev.Kind = Decide
	case PermissionRequest:
		ev.Kind = Permission
	default:
		ev.Kind, ev.Outcome = Observe, veto.Succeeded
		if h.HookEventName == PostToolUseFailure {
			ev.Outcome = veto.Failed
			if h.IsInterrupt {
				ev.Outcome = veto.Cancelled
			}
		}
	}
	c := veto.Call{ID: h.ToolUseID, Tool: h.ToolName, Cwd: h.Cwd, Workspace: projectDir,
		Actor: veto.Actor{Kind: "agent", ID: actor, Agent: h.AgentType},
		Run:   veto.Run{Ref: h.SessionID}}
	if h.AgentType == "" && h.AgentID != "" {
		c.Actor.Agent = "subagent"
	}
	args, err := Object(h.ToolInput, "tool_input")
	c.Args = args
	ev.Call = c
	return ev, err
}
