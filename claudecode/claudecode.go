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
	"fmt"
	"strings"

	"github.com/vetohq/veto"
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
	_ agent.Adapter = Adapter{}
	_ agent.Asker   = Adapter{}
)

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

// Reason is what the model reads about a denial: the rule, the reason
// code, one sentence of why, what to do instead and the policy key that
// changes the answer, as the rule declared them. Never argument text.
func Reason(v veto.Verdict) string {
	var b strings.Builder
	b.WriteString("veto blocked this ")
	b.WriteString(v.Tool)
	b.WriteString(" call")
	if v.Ask {
		b.WriteString(" until a person approves it")
	}
	if v.Rule != "" {
		fmt.Fprintf(&b, " (rule %s, reason %s)", v.Rule, v.Reason)
	} else {
		fmt.Fprintf(&b, " (%s)", v.Reason)
	}
	b.WriteString(": ")
	b.WriteString(v.Message)
	if v.Advice.Instead != "" {
		b.WriteString(" Instead: ")
		b.WriteString(v.Advice.Instead)
	}
	if v.Ask {
		// A question: the same call passes once a person approves it.
		b.WriteString(" Do not work around it; once the user has approved it, make the same call again.")
		return b.String()
	}
	b.WriteString(" Do not retry it or work around it; ")
	hint := v.Advice.Policy
	if hint == "" && v.Stage == veto.StageRule && v.Rule != "" {
		hint = "the rule " + v.Rule
	}
	if hint != "" {
		b.WriteString("ask the user to do it, or to change veto's policy (" + hint + ").")
	} else {
		b.WriteString("ask the user how to proceed.")
	}
	return b.String()
}
