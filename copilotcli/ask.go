package copilotcli

import (
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// Copilot CLI knows a preToolUse hook's permissionDecision "ask". Measured
// in 1.0.102 (e2e, under tmux): interactive, with or without
// --allow-all-tools, it shows the hook's reason in a "Hook permission
// request" dialog and runs the call only on the person's yes (then
// postToolUse comes, as for any call); on a no the model reads "Denied by
// user via preToolUse hook prompt: …" and no hook event comes. Where it
// cannot ask (-p; --autopilot, which needs --yolo) it refuses the call
// ("Denied by preToolUse hook (unable to ask user for confirmation)").
// No mode ran the call unasked. Its payload does not say which mode it
// is in, so veto asks only a Copilot CLI it knows does that, by
// COPILOT_CLI_BINARY_VERSION, and refuses the question otherwise.

// MinAskVersion is the first Copilot CLI veto puts a question to.
var MinAskVersion = [3]int{1, 0, 102}

var (
	_ agent.Asker    = Adapter{}
	_ agent.Prompter = Adapter{}
)

// Ask implements agent.Asker: "ask", with veto's question as the reason
// the dialog shows, for a Copilot CLI known to ask or refuse.
func (a Adapter) Ask(ev *agent.Event, v veto.Verdict) (agent.Reply, bool) {
	if ev == nil || ev.Kind != agent.Decide || !askKnown(a.Version) {
		return agent.Reply{}, false
	}
	return agent.Write(*Client.Prompt, PromptReason(v)), true
}

// Prompted implements agent.Prompter: Copilot CLI reports a call it ran
// (postToolUse); a call veto asked about ran only on the person's yes.
func (a Adapter) Prompted(ev *agent.Event) (string, bool) {
	if ev == nil || ev.Kind != agent.Observe || !askKnown(a.Version) {
		return "", false
	}
	return Client.Name, true
}

// PromptReason is what Copilot CLI's dialog shows the person: the rule,
// the reason code and its sentence. Never argument text (the dialog
// shows the arguments itself).
func PromptReason(v veto.Verdict) string {
	var b strings.Builder
	b.WriteString("veto asks a person about this ")
	b.WriteString(v.Tool)
	b.WriteString(" call")
	if v.Rule != "" {
		b.WriteString(" (rule " + v.Rule + ", reason " + v.Reason + ")")
	}
	b.WriteString(": ")
	b.WriteString(v.Message)
	return b.String()
}

// askKnown reports whether version (1.0.102) is MinAskVersion or later.
func askKnown(version string) bool { return agent.VersionAtLeast(version, ".", MinAskVersion) }
