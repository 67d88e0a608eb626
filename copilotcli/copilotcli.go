// Package copilotcli speaks GitHub Copilot CLI's hook protocol:
// preToolUse decides (toolArgs arrives as a JSON string, or in 1.0.102 as
// an object), postToolUse
// observes, sessionStart opens the run. The reply is
// {"permissionDecision":"deny","permissionDecisionReason":…}.
package copilotcli

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is Copilot CLI's entry in the client table.
var Client = &clients.CopilotCLI

// Adapter is Copilot CLI's hook protocol.
type Adapter struct {
	// Version is $COPILOT_CLI_BINARY_VERSION, which Copilot CLI sets for
	// its hooks: whether it puts a question to the person (see Ask).
	Version string
}

var _ agent.Adapter = Adapter{}

func init() {
	agent.Register(Client, func(env agent.Env) agent.Adapter {
		return Adapter{Version: env.Vars["COPILOT_CLI_BINARY_VERSION"]}
	})
}

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
		Text       string `json:"textResultForLlm"`
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
		if e.ToolName == ShellTool && ev.Outcome == veto.Succeeded && shellFailed(e.ToolResult.Text) {
			ev.Outcome = veto.Failed
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
		// Copilot CLI 1.0.102 does not name the call, and its preToolUse
		// and postToolUse timestamps differ. Its session, tool and
		// arguments name it the same in both (measured in e2e), so a
		// call's decision and what it did share an id; a later call of the
		// same tool with the same arguments shares it too, and is decided
		// again as another call. Without a session, the timestamp.
		id = fmt.Sprintf("copilot-%s-%s", e.Timestamp, e.ToolName)
		if e.SessionID != "" {
			id = fmt.Sprintf("copilot-%x", sum(e.SessionID, e.ToolName, string(canonicalArgs(e.ToolArgs))))
		}
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

// ShellTool is Copilot CLI's shell tool. A command that ran and failed is
// a "success" to Copilot CLI 1.0.102: its exit code is only in the text
// the model reads, which ends "<shellId: N completed with exit code M>"
// (measured in e2e).
const ShellTool = "bash"

var exitMark = regexp.MustCompile(`<shellId: [^<>]*completed with exit code (-?[0-9]+)>\s*$`)

// shellFailed reports whether a shell tool's text ends with Copilot
// CLI's mark of a non-zero exit. Only the last line counts: the command's
// own output comes before it.
func shellFailed(text string) bool {
	m := exitMark.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	code, err := strconv.Atoi(m[1])
	return err != nil || code != 0
}

// canonicalArgs is toolArgs re-encoded with sorted keys and no spaces:
// the object Copilot CLI sends, or the object a JSON string holds, so
// that the same arguments spelt two ways name one call; raw itself when
// it does not decode.
func canonicalArgs(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	if s, ok := v.(string); ok {
		if json.Unmarshal([]byte(s), &v) != nil {
			return []byte(s)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// sum hashes the parts, each length-prefixed, to 16 bytes.
func sum(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return h.Sum(nil)[:16]
}
