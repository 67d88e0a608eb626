// Package claudecode speaks Claude Code's hook protocol: it reads one hook
// event from stdin's bytes, says what veto must do with it, and writes the
// reply in the form Claude Code obeys. It holds no rule logic.
//
// Claude Code blocks a tool call when a PreToolUse hook exits 2 (stderr is
// the reason the model reads); any other non-zero exit, a crash or a
// timeout lets the call run. So every failure here is turned into exit 2.
// An allow prints nothing: Claude Code's own permission prompts still run,
// unless the policy says veto approves. The replies are the client table's
// (package clients); the decoding of Claude-shaped events is package
// agent's, which Codex shares.
package claudecode

import (
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// Client is Claude Code's entry in the client table.
var Client = &clients.ClaudeCode

// Adapter is Claude Code's hook protocol.
type Adapter struct {
	ProjectDir string // $CLAUDE_PROJECT_DIR
	// Attended and Agent are $CLAUDE_CODE_SESSION_ATTENDED and $AI_AGENT,
	// as Claude Code sets them for its hooks: whether a call can be held
	// for a person (see Ask).
	Attended, Agent string
}

var (
	_ agent.Adapter   = Adapter{}
	_ agent.Asker     = Adapter{}
	_ agent.Permitter = Adapter{}
)

// Claude Code's adapter is registered with package agent; the two
// variables it reads (see Ask) come from the client's environment.
func init() {
	agent.Register(Client, func(env agent.Env) agent.Adapter {
		return Adapter{ProjectDir: env.ProjectDir, Attended: env.Vars["CLAUDE_CODE_SESSION_ATTENDED"], Agent: env.Vars["AI_AGENT"]}
	})
}

// Decode implements agent.Adapter: SessionStart (startup and clear open a
// fresh run; resume and compact go on), PreToolUse, PostToolUse
// (succeeded) and PostToolUseFailure (failed; cancelled when interrupted).
func (a Adapter) Decode(b []byte) (agent.Event, error) {
	h, err := agent.DecodeHook(b)
	if err != nil {
		return agent.Event{}, err
	}
	return h.Event(Client.Actor, a.ProjectDir)
}

// Deny implements agent.Adapter: exit 2 with the reason on stderr.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: nothing printed, so Claude Code's own
// permission flow runs; with approve, veto answers allow for the user.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }

var _ agent.Rewriter = Adapter{}

// AllowWith implements agent.Rewriter: the call goes on with args as its
// input (updatedInput), through Claude Code's own prompts, or for the user
// with approve.
func (a Adapter) AllowWith(args map[string]any, approve bool) agent.Reply {
	if r, ok := agent.AllowWith(Client, args, approve); ok {
		return r
	}
	return a.Deny("veto could not write the rewritten call, so it is blocked.")
}

var _ agent.Hosted = Adapter{}

// Host implements agent.Hosted: other clients run the hooks of Claude
// Code's settings too (Copilot CLI does), and veto answers their payloads
// as theirs (agent.Sender).
func (Adapter) Host() *clients.Client { return Client }
