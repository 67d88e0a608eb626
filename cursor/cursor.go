// Package cursor speaks Cursor's hook protocol: beforeShellExecution,
// beforeReadFile, beforeMCPExecution and preToolUse decide; afterFileEdit
// observes. The reply is {"permission":"deny","user_message":…,
// "agent_message":…}. The run is the conversation.
package cursor

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is Cursor's entry in the client table.
var Client = &clients.Cursor

// Adapter is Cursor's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

type event struct {
	HookEventName  string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	GenerationID   string          `json:"generation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Cwd            string          `json:"cwd"`
	Command        string          `json:"command"`
	FilePath       string          `json:"file_path"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// Decode implements agent.Adapter. Each event becomes the call Claude
// Code's tools would make, so the same descriptors and rules apply:
// beforeShellExecution is Bash, beforeReadFile is Read.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	var e event
	if err := agent.Unmarshal(b, &e); err != nil {
		return agent.Event{}, err
	}
	if e.ConversationID == "" {
		return agent.Event{}, errors.New("the hook event has no conversation_id")
	}
	cwd := e.Cwd
	project := ""
	if len(e.WorkspaceRoots) > 0 {
		project = e.WorkspaceRoots[0]
		if cwd == "" {
			cwd = project
		}
	}
	ev := agent.Event{Kind: agent.Decide, Session: e.ConversationID, Cwd: cwd, ProjectDir: project}
	c := veto.Call{Cwd: cwd, Workspace: project, Run: veto.Run{Ref: e.ConversationID}, Actor: veto.Actor{Kind: "agent", ID: Client.Actor}}
	switch e.HookEventName {
	case "beforeShellExecution":
		c.Tool, c.Args = "Bash", map[string]any{"command": e.Command}
	case "beforeReadFile":
		c.Tool, c.Args = "Read", map[string]any{"file_path": e.FilePath}
	case "afterFileEdit":
		ev.Kind, ev.Outcome = agent.Observe, veto.Succeeded
		c.Tool, c.Args = "Edit", map[string]any{"file_path": e.FilePath}
	case "beforeMCPExecution", "preToolUse":
		if e.ToolName == "" {
			return ev, errors.New("the tool event has no tool_name")
		}
		c.Tool = e.ToolName
		args, err := agent.Object(e.ToolInput, "tool_input")
		if err != nil {
			return ev, err
		}
		c.Args = args
	case "":
		return ev, errors.New("the hook event has no hook_event_name")
	default:
		return agent.Event{Kind: agent.Ignore}, nil
	}
	c.ID = e.ToolUseID
	if c.ID == "" {
		c.ID = fmt.Sprintf("cursor-%s-%s", e.GenerationID, e.HookEventName)
		if e.HookEventName == "afterFileEdit" {
			c.ID = fmt.Sprintf("cursor-edit-%s-%s", e.GenerationID, e.FilePath)
		}
	}
	ev.Call = c
	return ev, nil
}

// Deny implements agent.Adapter: {"permission":"deny",…} with the reason
// for the user and for the agent, exit 0.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: {"continue":true,"permission":"allow"}.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }
