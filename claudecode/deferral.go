package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// Claude Code's print mode (claude -p) can hold a call for a person: a
// PreToolUse hook that answers permissionDecision "defer" ends the session
// with the call pending, and claude -p --resume asks the hook about the
// same call (the same tool_use_id) again, where veto finds the person's
// approval. Where Claude Code does not honour defer it ignores it, and the
// call goes through its own permission flow: under bypassPermissions, or
// for a tool its rules allow, the call would run. So veto defers only
// where it can see defer is honoured, and refuses the call otherwise:
//
//   - the session is unattended: CLAUDE_CODE_SESSION_ATTENDED=0, which
//     Claude Code sets itself for its hooks (an interactive session is
//     always attended, and ignores defer);
//   - the client is Claude Code 2.1.89 or later, by AI_AGENT
//     (claude-code_2-1-332_harness), the first to know defer;
//   - the call was asked for alone: the transcript's entry that holds its
//     tool_use holds no other (defer is ignored for a call with siblings
//     in its message).

// MinDeferVersion is the first Claude Code that honours defer.
var MinDeferVersion = [3]int{2, 1, 89}

// MinPromptEveryMode is the first Claude Code whose dialog was seen to
// show a hook's "ask" in every permission mode (2.1.332, under tmux:
// acceptEdits, plan, auto and dontAsk besides default and
// bypassPermissions, for a Write and for a Bash file command acceptEdits
// would pass unasked; TestMeasureClaudeCodeAskModes). An older one is
// asked in default and bypassPermissions only, where it was seen first.
var MinPromptEveryMode = [3]int{2, 1, 332}

// promptMode reports whether Claude Code (by AI_AGENT) in permission mode
// mode puts a hook's "ask" to the person at its dialog.
func promptMode(agentEnv, mode string) bool {
	switch mode {
	case "default", "bypassPermissions":
		return deferKnown(agentEnv)
	case "acceptEdits", "plan", "auto", "dontAsk":
		return versionAtLeast(agentEnv, MinPromptEveryMode)
	}
	return false
}

// maxTail is how much of a transcript's end is read to find a call's
// entry: it is written just before the hook runs.
const maxTail = 8 << 20

// Ask implements agent.Asker. Print mode: the defer reply where Claude
// Code holds the call for a person. Interactive: Claude Code's own prompt
// asks the person at the terminal (permissionDecision "ask", shown even
// under bypassPermissions), and veto's PermissionRequest hook answers for
// them when they answer on veto's page first; only in the permission
// modes where that was seen (promptMode).
func (a Adapter) Ask(ev *agent.Event, v veto.Verdict) (agent.Reply, bool) {
	if !deferKnown(a.Agent) || ev == nil || ev.Kind != agent.Decide {
		return agent.Reply{}, false
	}
	switch a.Attended {
	case "0":
		if !askedAloneSoon(ev.Transcript, ev.Call.ID) {
			return agent.Reply{}, false
		}
		return agent.Write(*Client.Defer, agent.Reason(v)), true
	case "1":
		if !promptMode(a.Agent, ev.PermissionMode) {
			return agent.Reply{}, false
		}
		return agent.Write(*Client.Prompt, PromptReason(v)), true
	}
	return agent.Reply{}, false
}

var _ agent.Prompter = Adapter{}

// Prompted implements agent.Prompter. Claude Code, interactive (attended,
// a version that knows defer and ask), runs a call veto answered "ask"
// only once the person said yes at its permission dialog (or a
// PermissionRequest hook allowed it: veto's own only with an answer on
// the page, recorded already). Measured in 2.1.332: yes sends PostToolUse
// with the call's tool_use_id and the input that ran; no (the dialog's
// No, or Esc) sends no hook event at all. The observation's permission
// mode is one veto asks in, or acceptEdits, which the dialog's second
// yes switches to; in any other mode veto refused the question (exit 2)
// and Claude Code did not run the call.
func (a Adapter) Prompted(ev *agent.Event) (string, bool) {
	if ev == nil || ev.Kind != agent.Observe || a.Attended != "1" || !deferKnown(a.Agent) {
		return "", false
	}
	if ev.PermissionMode == "acceptEdits" || promptMode(a.Agent, ev.PermissionMode) {
		return Client.Name, true
	}
	return "", false
}

// PromptReason is what Claude Code's prompt shows the person about a
// question: the rule, the reason code and its sentence, and where else to
// answer. Never argument text.
func PromptReason(v veto.Verdict) string {
	var b strings.Builder
	b.WriteString("veto asks a person about this ")
	b.WriteString(v.Tool)
	b.WriteString(" call")
	if v.Rule != "" {
		fmt.Fprintf(&b, " (rule %s, reason %s)", v.Rule, v.Reason)
	}
	b.WriteString(": ")
	b.WriteString(v.Message)
	b.WriteString(" Answer here, or on veto's page (veto ui).")
	return b.String()
}

// Permit implements agent.Permitter: the PermissionRequest hook's answer
// for the person.
func (Adapter) Permit(allow bool, reason string) agent.Reply {
	if allow {
		return agent.Write(*Client.PermitAllow, "")
	}
	return agent.Write(*Client.PermitDeny, reason)
}

// deferKnown reports whether AI_AGENT names a Claude Code that knows
// defer.
func deferKnown(agentEnv string) bool { return versionAtLeast(agentEnv, MinDeferVersion) }

// versionAtLeast reports whether AI_AGENT names a Claude Code of version
// min or later.
func versionAtLeast(agentEnv string, min [3]int) bool {
	rest, ok := strings.CutPrefix(agentEnv, "claude-code_")
	if !ok {
		return false
	}
	ver, _, _ := strings.Cut(rest, "_")
	return agent.VersionAtLeast(ver, "-", min)
}

// transcriptLag is how long the call's entry may take to reach the
// transcript after the hook was started: Claude Code writes it as the
// call is asked for, and under load the hook can start first.
const transcriptLag = 750 * time.Millisecond

// askedAloneSoon reports whether the transcript shows the call asked
// alone (askedIn), looking again for transcriptLag while its entry is not
// there yet.
func askedAloneSoon(path, id string) bool {
	until := time.Now().Add(transcriptLag)
	for {
		found, alone, read := askedIn(path, id)
		if found || !read || time.Now().After(until) {
			return found && alone
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// askedIn finds, near the end of the transcript at path, the assistant
// entry with tool_use id, and whether it holds no other tool_use beside
// it; read is false when the transcript cannot be read at all (no path,
// not a regular file; but true while it does not exist: it may be written
// soon). A line that does not parse is passed over.
func askedIn(path, id string) (found, alone, read bool) {
	if path == "" || id == "" || !strings.HasPrefix(path, "/") {
		return false, false, false
	}
	f, err := os.Open(path)
	if err != nil {
		// Not there yet, perhaps: Claude Code creates the file as it
		// writes the session's first entries.
		return false, false, errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false, false, false
	}
	// The entry is written just before the hook runs: the last 64 KiB
	// nearly always hold it; a longer tail only when they do not.
	for tail := int64(64 << 10); ; tail *= 8 {
		tail = min(tail, maxTail)
		off := max(fi.Size()-tail, 0)
		b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
		if err != nil {
			return false, false, false
		}
		if found, alone := entryOf(b, id, off > 0); found || off == 0 || tail == maxTail {
			return found, alone, true
		}
	}
}

// entryOf finds the last assistant entry of a transcript's tail b with
// tool_use id (cut: b's first line may be a part of one), and whether it
// holds no other tool_use.
func entryOf(b []byte, id string, cut bool) (found, alone bool) {
	if id == "" {
		return false, false
	}
	quoted, _ := json.Marshal(id)
	lines := bytes.Split(b, []byte("\n"))
	if cut && len(lines) > 0 {
		lines = lines[1:]
	}
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if !bytes.Contains(line, quoted) {
			continue
		}
		var entry struct {
			Type    string `json:"type"`
			Message struct {
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &entry) != nil || entry.Type != "assistant" {
			continue
		}
		uses, mine := 0, false
		for _, c := range entry.Message.Content {
			if c.Type == "tool_use" {
				uses++
				mine = mine || c.ID == id
			}
		}
		if mine {
			return true, uses == 1
		}
	}
	return false, false
}
