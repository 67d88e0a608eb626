// Package agent is what every client adapter shares: the hook event
// reduced to what veto needs, the reply a hook process gives (written from
// the client table, package clients), and the decoding of Claude-shaped
// events (Hook), which Claude Code and Codex send. Each adapter
// (claudecode, geminicli, copilotcli, cursor, codex) maps its client's
// protocol to these; none holds rule logic, and none imports another.
package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
)

// Kind is what a hook event asks of veto.
type Kind int

// The kinds of event.
const (
	Ignore  Kind = iota // nothing to do (an event veto does not handle)
	Start               // a session starts
	Decide              // a tool call is about to run
	Observe             // a tool call ran; Outcome says how
	// Permission: the client is about to ask a person at its own prompt
	// whether a call may run (Claude Code's PermissionRequest); the call
	// has no id.
	Permission
	// Config: the client's settings changed mid-session (Claude Code's
	// ConfigChange); ConfigSource and ConfigFile say which. An adapter
	// that is a ConfigGuard judges it; for any other there is no opinion.
	Config
)

// Event is a hook event reduced to what veto needs.
type Event struct {
	Kind       Kind
	Session    string
	Cwd        string
	ProjectDir string // the project the client reports, if any
	Fresh      bool   // Start: a new run (not a resume)
	// Transcript is the client's session transcript file, where it names
	// one (Claude Code's transcript_path): read only to see how a call
	// was asked for, never recorded.
	Transcript string
	// PermissionMode is the client's permission mode, where it says
	// (Claude Code's permission_mode).
	PermissionMode string
	Call           veto.Call
	Outcome        veto.Outcome // Observe
	// ConfigSource and ConfigFile are a Config event's: the settings
	// layer that changed (Claude Code's user_settings, project_settings,
	// local_settings, policy_settings or skills) and the file that holds
	// its new content, where the client names one.
	ConfigSource, ConfigFile string
	// Twin, when set, is the client that sent this event to another
	// client's hook and whose own registration of veto, where the project
	// or the user has one, the client runs first (Copilot CLI runs its own
	// hooks, then those of .claude/settings.json): that registration
	// decides and observes the call, and this event answers with its
	// decision instead of deciding the call a second time.
	Twin *clients.Client
}

// Reply is what the hook process does: its exit code and what it prints.
type Reply struct {
	Exit   int
	Stdout string
	Stderr string
}

// Adapter speaks one client's hook protocol.
type Adapter interface {
	// Decode reads one hook event.
	Decode(b []byte) (Event, error)
	// Deny is the reply that blocks the call, with the reason the model reads.
	Deny(reason string) Reply
	// Allow is the reply that lets the call go on (approve: veto answers
	// for the user and skips the client's own prompt, where it has one).
	Allow(approve bool) Reply
}

// Asker is an adapter whose client can put a call to a person: Ask is the
// reply that holds the call for one, or has the client's own prompt ask
// one, about the question v; false when the client cannot here, and the
// call is then refused with Deny as any question is.
type Asker interface {
	Ask(ev *Event, v veto.Verdict) (Reply, bool)
}

// Permitter is an adapter whose client asks a person at its own prompt
// and lets a hook answer for them (Claude Code's PermissionRequest):
// Permit is that answer, allow or deny with the reason the model reads.
type Permitter interface {
	Permit(allow bool, reason string) Reply
}

// Prompter is an adapter whose client, given a question (Ask), asks a
// person at its own prompt and runs the call only when they say yes
// (Claude Code, interactive): its report that it ran the call is then
// the person's answer. Prompted reports whether the observation ev is
// such a report, where veto put a question to the client's prompt, and
// names the client (veto.PromptActor).
type Prompter interface {
	Prompted(ev *Event) (client string, ok bool)
}

// MaxReason keeps every reply under the clients' limits (Claude Code:
// 10,000 characters).
const MaxReason = clients.MaxReason

// Clip shortens a reason to MaxReason.
func Clip(s string) string { return clients.Clip(s) }

// MaxEvent is the most bytes a hook event may have.
const MaxEvent = clients.MaxEvent

// Write is the reply r of a client's table entry, with reason (clipped).
func Write(r clients.Reply, reason string) Reply {
	exit, stdout, stderr := r.Write(reason)
	return Reply{Exit: exit, Stdout: stdout, Stderr: stderr}
}

// Deny is the table's denial of client c, with reason.
func Deny(c *clients.Client, reason string) Reply { return Write(c.Deny, reason) }

// Allow is the table's allow of client c, or its approve.
func Allow(c *clients.Client, approve bool) Reply {
	if approve {
		return Write(c.Approve, "")
	}
	return Write(c.Allow, "")
}

// Unmarshal reads one hook event's JSON into v, with the errors every
// adapter gives: empty input, and bytes that are not one JSON value of
// v's shape. The message never quotes the input.
func Unmarshal(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty input: want one hook event as JSON")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("the hook event is not valid JSON of the expected shape")
	}
	return nil
}

// Object reads a tool's input: a JSON object, or (as some clients send
// it) a JSON string holding one. Numbers stay json.Number. Empty or null
// is no arguments.
func Object(raw json.RawMessage, field string) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%s is not JSON", field)
		}
		raw = []byte(s)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s does not hold a JSON object", field)
	}
	// One object and nothing after it: a client that parses the string
	// whole would not run what trailing bytes hold.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s holds more than one JSON object", field)
	}
	return m, nil
}

// Rewriter is an adapter whose client runs the tool input a hook rewrote
// (Claude Code's updatedInput): AllowWith lets the call go on with args in
// place of the model's input, through the client's own prompts or, with
// approve, for the user. A call veto patched (a default timeout, a command
// run under veto exec) reaches only such a client with the patch; the
// rules offer a patch the call is only safe with to it alone
// (veto.Call.Rewrites).
type Rewriter interface {
	AllowWith(args map[string]any, approve bool) Reply
}

// AllowWith is the table's rewrite of client c with args; false when the
// client has none.
func AllowWith(c *clients.Client, args map[string]any, approve bool) (Reply, bool) {
	r := c.Rewrite
	if approve {
		r = c.RewriteApprove
	}
	if r == nil {
		return Reply{}, false
	}
	exit, stdout, stderr := r.WriteInput(args)
	if stdout == "" {
		return Reply{}, false
	}
	return Reply{Exit: exit, Stdout: stdout, Stderr: stderr}, true
}
