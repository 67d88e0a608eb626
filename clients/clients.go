// Package clients is the table of the agent clients veto speaks to: for
// each, the name commands take, how its hook replies are written, where
// and how its settings register a hook, the events it sends and the actor
// id its calls carry. Everything that lists clients (veto hook, veto-hook,
// veto init and uninstall, their help, the adapters' actor ids and
// replies) reads this table; nothing else names a client.
//
// The package links the standard library only: veto-hook, which must
// start fast, reads it too.
//
// Adding a client is its adapter package (on package agent, registering
// itself with agent.Register), its entry here and in All, one line in
// package adapters, its tests, and its section in docs/clients.md.
package clients

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Client is one agent client.
type Client struct {
	Name    string // what veto hook, veto-hook, init and uninstall take
	Display string // the client's own name, for help and docs
	Actor   string // the actor id of its calls (veto.Actor.ID)

	Deny    Reply // the reply that blocks a call
	Allow   Reply // the reply that lets a call go on, through the client's own prompts
	Approve Reply // the reply that allows a call for the user, skipping the client's prompt
	// Defer is the reply that holds a call for a person: the client
	// stops with the call pending and asks the hook again when it is
	// resumed (Claude Code's print mode). nil: the client has none, and
	// a call waiting for a person is refused with Deny.
	Defer *Reply
	// Prompt is the reply that has the client ask the person at its own
	// prompt (Claude Code's interactive permissionDecision "ask"); nil:
	// the client has none.
	Prompt *Reply
	// PermitAllow and PermitDeny answer the client's event before its own
	// prompt asks a person (Claude Code's PermissionRequest), for that
	// person; nil: the client has none.
	PermitAllow, PermitDeny *Reply
	// Rewrite and RewriteApprove let a call go on with the input veto
	// rewrote (InputHere stands for it): through the client's own
	// prompts, and for the user. nil: the client runs the model's input
	// whatever the hook says, and a call that is only safe rewritten (a
	// command run under veto exec) is refused.
	Rewrite, RewriteApprove *Reply

	Events   []Event // the hook events veto handles, in the order init registers them
	Settings Settings
	// Probe is a before-tool event as the client sends it, for a call
	// veto's default policy refuses whatever the run did before (reading
	// ~/.ssh/id_rsa); $CWD stands for the working directory, as JSON text.
	// veto doctor feeds it to the registered command and expects the
	// client's blocking form.
	Probe string // where and how init registers the hook
	Note  string // what the user must still do after init, said after it writes
}

// Event is one hook event a client sends.
type Event struct {
	Name    string
	Matcher string // the matcher init registers ("" : none, every tool or source)
	// Unregistered: veto decodes the event when it comes, but init does
	// not register it (Cursor's preToolUse, which overlaps the others).
	Unregistered bool
	// Timeout is the timeout init registers for this event (0: the
	// entry's): an event on which veto may wait for a person.
	Timeout time.Duration
}

// Settings is how a client's settings file holds hooks.
type Settings struct {
	Project string // the file, relative to the project directory
	User    string // the file, relative to the home directory ("" : no user settings)
	// UserDirEnv names a variable that, when set, is the directory of the
	// user's file instead of User's (Codex's $CODEX_HOME).
	UserDirEnv string
	// Grouped: each event holds {matcher, hooks: [entry]} groups (Claude
	// Code, Gemini CLI, Codex); else the entries themselves.
	Grouped    bool
	CommandKey string         // the entry's field holding the command
	Entry      map[string]any // the entry's other fields (type, timeout)
	// TimeoutKey is the entry's field that holds the client's timeout for
	// the hook, in TimeoutUnit ("" : the client's own default applies).
	TimeoutKey  string
	TimeoutUnit time.Duration
	Top         map[string]any // fields the file needs at its top level (version)
	// FailClosed are the fields of an entry that make the client block a
	// call when the hook itself fails: cannot start (a missing binary),
	// times out, or exits with a code the client does not read as a
	// denial. A client without one relies on veto's own answer being the
	// blocking form on every failure veto can see, and on veto's deadline
	// coming before the timeout registered here.
	FailClosed map[string]any
	// Extension: the project's and user's files are not settings but an
	// extension source veto writes whole (pi's .pi/extensions/veto.ts):
	// init writes it, uninstall removes it when it is veto's, and the
	// extension itself runs the hook command it names.
	Extension bool
	// Guard: the client runs the command through a shell and blocks only
	// on its denial (exit 2), letting the call run when the hook cannot
	// start (127), exits with a usage error (64) or is killed; init then
	// wraps the command in a POSIX shell that turns every exit but 0 and 2
	// into exit 2 with a reason (clients.Guard).
	Guard bool
}

// GuardScript is the POSIX shell program around a guarded command: it
// runs its arguments ($0 the program, then the rest) on the hook's input
// and passes on exit 0 and 2, veto's answers; any other exit becomes 2,
// the client's blocking form, with the reason on stderr. It holds no
// single quote and no backslash, so it is one single-quoted word to every
// shell a client may run it in (sh, bash, zsh, fish).
const GuardScript = `"$0" "$@"; e=$?; [ $e -eq 0 ] || [ $e -eq 2 ] || { echo "veto: its hook exited $e instead of answering (a missing program, a wrong client name or a crash), so the call is blocked; veto doctor says why." >&2; exit 2; }; exit $e`

// GuardPrefix is what a guarded command starts with; the hook command
// itself follows.
const GuardPrefix = "/bin/sh -c '" + GuardScript + "' "

// Guarded is command wrapped in the guard.
func Guarded(command string) string { return GuardPrefix + command }

// Unguarded is a command without the guard (a command without it as it is).
func Unguarded(command string) string { return strings.TrimPrefix(command, GuardPrefix) }

// Reply is how one kind of reply is written. Stdout is the JSON value
// printed, with a newline (nil: nothing); ReasonHere in it stands for the
// reason. Stderr: the reason and a newline go to stderr.
type Reply struct {
	Exit   int
	Stdout any
	Stderr bool
}

type reasonMark struct{}

// ReasonHere marks where a Reply's Stdout holds the reason.
var ReasonHere any = reasonMark{}

type inputMark struct{}

// InputHere marks where a Reply's Stdout holds the tool's input as veto
// rewrote it.
var InputHere any = inputMark{}

// WriteInput is Write with input wherever InputHere stands.
func (r Reply) WriteInput(input map[string]any) (exit int, stdout, stderr string) {
	if r.Stdout != nil {
		b, err := json.Marshal(fillInput(r.Stdout, input))
		if err != nil {
			return 0, "", ""
		}
		stdout = string(b) + "\n"
	}
	return r.Exit, stdout, ""
}

func fillInput(v any, input map[string]any) any {
	switch v := v.(type) {
	case inputMark:
		return input
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = fillInput(x, input)
		}
		return m
	}
	return v
}

// MaxReason keeps every reply under the clients' limits (Claude Code:
// 10,000 characters).
const MaxReason = 4000

// MaxEvent is the most bytes a hook event may have.
const MaxEvent = 16 << 20

// Clip shortens a reason to MaxReason bytes, at the start of a character.
func Clip(s string) string {
	if len(s) <= MaxReason {
		return s
	}
	n := MaxReason
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Write is the reply with reason, clipped: the exit code and what goes to
// stdout and stderr. JSON objects' keys are written in sorted order.
func (r Reply) Write(reason string) (exit int, stdout, stderr string) {
	reason = Clip(reason)
	if r.Stdout != nil {
		b, err := json.Marshal(fill(r.Stdout, reason))
		if err != nil {
			panic("clients: a reply that does not encode: " + err.Error())
		}
		stdout = string(b) + "\n"
	}
	if r.Stderr {
		stderr = reason + "\n"
	}
	return r.Exit, stdout, stderr
}

// fill is v with reason wherever ReasonHere stands.
func fill(v any, reason string) any {
	switch v := v.(type) {
	case reasonMark:
		return reason
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = fill(x, reason)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = fill(x, reason)
		}
		return s
	}
	return v
}

// obj is a JSON object, for the table's shapes.
type obj = map[string]any

// The clients.
var (
	ClaudeCode = Client{
		Name: "claude-code", Display: "Claude Code", Actor: "claude-code",
		// Exit 2 blocks, stderr the reason the model reads; any other
		// non-zero exit lets the call run.
		Deny:  Reply{Exit: 2, Stderr: true},
		Allow: Reply{},
		Approve: Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"permissionDecision": "allow", "permissionDecisionReason": "veto: allowed by policy"}}},
		// Print mode only (2.1.89 and later): the session ends with the
		// call pending, and claude -p --resume asks the hook again.
		Defer: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"permissionDecision": "defer", "permissionDecisionReason": ReasonHere}}},
		// Interactive: Claude Code shows its own prompt, with the reason,
		// even under bypassPermissions; its PermissionRequest hook may
		// answer for the person first.
		Prompt: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"permissionDecision": "ask", "permissionDecisionReason": ReasonHere}}},
		PermitAllow: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PermissionRequest",
			"decision": obj{"behavior": "allow"}}}},
		// updatedInput replaces the whole tool input (2.0.10 and later).
		Rewrite: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"updatedInput": InputHere}}},
		RewriteApprove: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"permissionDecision": "allow", "permissionDecisionReason": "veto: allowed by policy, under veto exec", "updatedInput": InputHere}}},
		PermitDeny: &Reply{Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PermissionRequest",
			"decision": obj{"behavior": "deny", "message": ReasonHere}}}},
		Events: []Event{{Name: "SessionStart"}, {Name: "PreToolUse", Matcher: "*"}, {Name: "PostToolUse", Matcher: "*"},
			{Name: "PostToolUseFailure", Matcher: "*"},
			// veto waits here for a person's answer on its page, while
			// Claude Code's own prompt asks the one at the terminal.
			{Name: "PermissionRequest", Matcher: "*", Timeout: 10 * time.Minute},
			// A settings change mid-session: veto blocks one that removes
			// or weakens this registration (exit 2 keeps the settings the
			// session had).
			{Name: "ConfigChange"}},
		Settings: Settings{Project: ".claude/settings.json", User: ".claude/settings.json", Grouped: true, CommandKey: "command",
			Entry: obj{"type": "command", "timeout": json.Number("5")}, TimeoutKey: "timeout", TimeoutUnit: time.Second,
			// Claude Code 2.1.295 and later: a hook that cannot start, times
			// out or exits unexpectedly blocks the call; older versions
			// ignore the field.
			FailClosed: obj{"onFailure": "block"}},
		Probe: `{"session_id":"veto-doctor","cwd":$CWD,"hook_event_name":"PreToolUse","tool_name":"Read",` +
			`"tool_input":{"file_path":"~/.ssh/id_rsa"},"tool_use_id":"veto-doctor-1"}`,
	}
	GeminiCLI = Client{
		Name: "gemini-cli", Display: "Gemini CLI", Actor: "gemini-cli",
		Deny:    Reply{Exit: 2, Stdout: obj{"decision": "deny", "reason": ReasonHere}, Stderr: true},
		Allow:   Reply{Stdout: obj{}},
		Approve: Reply{Stdout: obj{"decision": "allow"}},
		Events:  []Event{{Name: "SessionStart"}, {Name: "BeforeTool", Matcher: ".*"}, {Name: "AfterTool", Matcher: ".*"}},
		Settings: Settings{Project: ".gemini/settings.json", User: ".gemini/settings.json", Grouped: true, CommandKey: "command",
			Entry: obj{"type": "command", "name": "veto", "timeout": json.Number("5000")}, TimeoutKey: "timeout", TimeoutUnit: time.Millisecond},
		Probe: `{"session_id":"veto-doctor","cwd":$CWD,"hook_event_name":"BeforeTool","tool_name":"read_file",` +
			`"tool_input":{"absolute_path":"~/.ssh/id_rsa"},"tool_call_id":"veto-doctor-1"}`,
	}
	CopilotCLI = Client{
		Name: "copilot-cli", Display: "GitHub Copilot CLI", Actor: "copilot-cli",
		Deny:    Reply{Stdout: obj{"permissionDecision": "deny", "permissionDecisionReason": ReasonHere}},
		Allow:   Reply{},
		Approve: Reply{Stdout: obj{"permissionDecision": "allow"}},
		// Its "Hook permission request" dialog, interactive; refused
		// where it cannot ask (-p, autopilot), measured in 1.0.102.
		Prompt: &Reply{Stdout: obj{"permissionDecision": "ask", "permissionDecisionReason": ReasonHere}},
		Events: []Event{{Name: "sessionStart"}, {Name: "preToolUse"}, {Name: "postToolUse"}},
		// init writes the repository's hooks (Copilot CLI's docs name a
		// user directory too, ~/.copilot/hooks, which init does not write);
		// Copilot CLI loads them once the folder is trusted. 1.0.102 refuses the call on a hook that errors (a
		// missing program, any non-zero exit) and lets it run on one that
		// times out (measured in e2e).
		Settings: Settings{Project: ".github/hooks/veto.json", CommandKey: "bash",
			Entry: obj{"type": "command", "timeoutSec": json.Number("5")}, TimeoutKey: "timeoutSec", TimeoutUnit: time.Second, Top: obj{"version": json.Number("1")}},
		Probe: `{"timestamp":1764584200000,"cwd":$CWD,"toolName":"bash","toolArgs":"{\"command\":\"cat ~/.ssh/id_rsa\"}"}`,
	}
	Cursor = Client{
		Name: "cursor", Display: "Cursor", Actor: "cursor",
		Deny: Reply{Stdout: obj{"continue": true, "permission": "deny", "user_message": ReasonHere,
			"agent_message": ReasonHere}},
		Allow:   Reply{Stdout: obj{"continue": true, "permission": "allow"}},
		Approve: Reply{Stdout: obj{"continue": true, "permission": "allow"}},
		Events: []Event{{Name: "beforeShellExecution"}, {Name: "beforeReadFile"}, {Name: "beforeMCPExecution"},
			{Name: "preToolUse", Unregistered: true}, {Name: "afterFileEdit"}},
		Settings: Settings{Project: ".cursor/hooks.json", User: ".cursor/hooks.json", CommandKey: "command",
			Top: obj{"version": json.Number("1")}, FailClosed: obj{"failClosed": true}},
		Probe: `{"conversation_id":"veto-doctor","generation_id":"1","hook_event_name":"beforeReadFile",` +
			`"workspace_roots":[$CWD],"file_path":"~/.ssh/id_rsa","content":"","attachments":[]}`,
	}
	// Codex's events and hooks.json are shaped as Claude Code's; "*"
	// matches every tool, no matcher every session source, the timeout is
	// in seconds. Codex has no failure event: a failed call reports as
	// PostToolUse. Its strict schema takes exactly this denial.
	Codex = Client{
		Name: "codex", Display: "Codex", Actor: "codex",
		Deny: Reply{Exit: 2, Stdout: obj{"hookSpecificOutput": obj{"hookEventName": "PreToolUse",
			"permissionDecision": "deny", "permissionDecisionReason": ReasonHere}}, Stderr: true},
		Allow:   Reply{},
		Approve: Reply{},
		Events:  []Event{{Name: "SessionStart"}, {Name: "PreToolUse", Matcher: "*"}, {Name: "PostToolUse", Matcher: "*"}},
		Settings: Settings{Project: ".codex/hooks.json", User: ".codex/hooks.json", UserDirEnv: "CODEX_HOME", Grouped: true,
			CommandKey: "command", Entry: obj{"type": "command", "timeout": json.Number("5")}, TimeoutKey: "timeout", TimeoutUnit: time.Second,
			// Codex 0.171.0 runs the command with $SHELL -lc and lets the
			// call run on any exit but 2 (measured in e2e).
			Guard: true},
		Probe: `{"session_id":"veto-doctor","cwd":$CWD,"hook_event_name":"PreToolUse","tool_name":"shell",` +
			`"tool_input":{"command":["bash","-lc","cat ~/.ssh/id_rsa"]},"tool_use_id":"veto-doctor-1"}`,
		Note: "Codex runs a new or changed hook only once it is trusted: open /hooks in Codex and trust veto's (a project's hooks also need the project trusted).",
	}
)

// Pi is pi (npm @mariozechner/pi-coding-agent), an agent runtime whose
// extensions answer its tool_call event: veto's extension
// (integrations/pi/veto.ts) sends each event to veto-hook pi (or to veto
// serve) and blocks the call unless the reply is exactly the allow. The
// replies are JSON for that extension: a denial {"block":true,"reason"},
// exit 2; an allow {"block":false}; a question for the person at pi's
// own confirm dialog {"ask":true,"block":true,"reason"}, which an
// extension that does not know "ask" reads as a denial.
var Pi = Client{
	Name: "pi", Display: "pi", Actor: "pi",
	Deny:    Reply{Exit: 2, Stdout: obj{"block": true, "reason": ReasonHere}},
	Allow:   Reply{Stdout: obj{"block": false}},
	Approve: Reply{Stdout: obj{"block": false}},
	Prompt:  &Reply{Stdout: obj{"block": true, "ask": true, "reason": ReasonHere}},
	Events:  []Event{{Name: "session_start"}, {Name: "tool_call"}, {Name: "tool_result"}},
	Settings: Settings{Project: ".pi/extensions/veto.ts", User: ".pi/agent/extensions/veto.ts", CommandKey: "hook",
		Extension: true},
	Probe: `{"v":1,"event":"tool_call","sessionId":"veto-doctor","cwd":$CWD,"toolName":"read",` +
		`"toolCallId":"veto-doctor-1","input":{"path":"~/.ssh/id_rsa"}}`,
}

// OpenCode is OpenCode (npm opencode-ai), whose plugins run around every
// tool call: veto's plugin (integrations/opencode/veto.ts), in the
// project's .opencode/plugins, sends each call to veto-hook opencode (or
// to veto serve) from tool.execute.before and throws, refusing the call
// with veto's reason, unless the reply is exactly the allow; its
// tool.execute.after records the result. The replies are pi's: a denial
// {"block":true,"reason"}, exit 2; an allow {"block":false}. OpenCode
// gives a plugin no prompt of its own: a question is refused.
var OpenCode = Client{
	Name: "opencode", Display: "OpenCode", Actor: "opencode",
	Deny:    Reply{Exit: 2, Stdout: obj{"block": true, "reason": ReasonHere}},
	Allow:   Reply{Stdout: obj{"block": false}},
	Approve: Reply{Stdout: obj{"block": false}},
	Events:  []Event{{Name: "session_start"}, {Name: "tool_call"}, {Name: "tool_result"}},
	Settings: Settings{Project: ".opencode/plugins/veto.ts", User: ".config/opencode/plugins/veto.ts", CommandKey: "hook",
		Extension: true},
	Probe: `{"v":1,"event":"tool_call","sessionId":"veto-doctor","cwd":$CWD,"toolName":"read",` +
		`"toolCallId":"veto-doctor-1","input":{"filePath":"~/.ssh/id_rsa"}}`,
}

// ClaudeAgentSDK is a program built on the Claude Agent SDK (npm
// @anthropic-ai/claude-agent-sdk): veto's module
// (integrations/claude-agent-sdk/veto.ts) gives the host PreToolUse,
// PostToolUse, PostToolUseFailure and SessionStart hook callbacks and a
// canUseTool, and sends each hook input, which is Claude Code's hook
// payload, to veto-hook claude-agent-sdk (or to veto serve). Its own row,
// not Claude Code's: the calls are the host program's (its actor), the
// answer is read by the module in the host's process, not by the Claude
// Code CLI (so none of Claude Code's exit codes, defers or prompts apply),
// and there is no settings file, only the module init writes. The
// replies are pi's: a denial {"block":true,"reason"}, exit 2; an allow
// {"block":false}; a question for the host's canUseTool
// {"ask":true,"block":true,"reason"}.
var ClaudeAgentSDK = Client{
	Name: "claude-agent-sdk", Display: "Claude Agent SDK", Actor: "claude-agent-sdk",
	Deny:    Reply{Exit: 2, Stdout: obj{"block": true, "reason": ReasonHere}},
	Allow:   Reply{Stdout: obj{"block": false}},
	Approve: Reply{Stdout: obj{"block": false}},
	Prompt:  &Reply{Stdout: obj{"block": true, "ask": true, "reason": ReasonHere}},
	Events: []Event{{Name: "SessionStart"}, {Name: "PreToolUse"}, {Name: "PostToolUse"}, {Name: "PostToolUseFailure"},
		// The module's own: the person refused at the host's canUseTool a
		// call veto asked about.
		{Name: "PermissionDenied", Unregistered: true}},
	Settings: Settings{Project: "veto-claude-agent-sdk.ts", CommandKey: "hook", Extension: true},
	Probe: `{"veto_protocol":1,"session_id":"veto-doctor","cwd":$CWD,"hook_event_name":"PreToolUse","tool_name":"Read",` +
		`"tool_input":{"file_path":"~/.ssh/id_rsa"},"tool_use_id":"veto-doctor-1"}`,
}

// All are the clients, in the order help and docs list them.
var All = []*Client{&ClaudeCode, &GeminiCLI, &CopilotCLI, &Cursor, &Codex, &Pi, &OpenCode, &ClaudeAgentSDK}

// Lookup returns the client of a name, nil for an unknown one.
func Lookup(name string) *Client {
	i := slices.IndexFunc(All, func(c *Client) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	return All[i]
}

// Names are the clients' names, in All's order.
func Names() []string {
	names := make([]string, len(All))
	for i, c := range All {
		names[i] = c.Name
	}
	return names
}

// List joins the names for a sentence: "a, b or c".
func List(names []string, and string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + and + " " + names[len(names)-1]
}

// EventNames are the names of the events c handles; registered only:
// those init registers.
func (c *Client) EventNames(registered bool) []string {
	var names []string
	for _, e := range c.Events {
		if !registered || !e.Unregistered {
			names = append(names, e.Name)
		}
	}
	return names
}
