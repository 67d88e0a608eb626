// Package codex speaks the Codex CLI's hooks, which are shaped as Claude
// Code's (session_id, cwd, hook_event_name, tool_name, tool_input,
// tool_use_id) and answered with a strict schema: a denial is exactly
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":
// "deny","permissionDecisionReason":…}}, and veto also exits 2.
package codex

import (
	"encoding/json"
	"strings"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/claudecode"
)

// Adapter is Codex's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

// Decode implements agent.Adapter. A shell command given as an argument
// vector becomes one command line; apply_patch's file headers become the
// paths it writes.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	ev, err := claudecode.Adapter{}.Decode(b)
	if err != nil || ev.Kind == agent.Start {
		return ev, err
	}
	ev.Call.Actor.ID = "codex"
	args := ev.Call.Args
	switch ev.Call.Tool {
	case "shell", "exec_command", "local_shell":
		if argv, ok := args["command"].([]any); ok {
			args["command"] = commandLine(argv)
		}
	case "apply_patch":
		patch, _ := args["input"].(string)
		if patch == "" {
			patch, _ = args["patch"].(string)
		}
		var paths []any
		for _, line := range strings.Split(patch, "\n") {
			for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
				if p, ok := strings.CutPrefix(line, h); ok {
					paths = append(paths, strings.TrimSpace(p))
				}
			}
		}
		args["paths"] = paths
	}
	return ev, nil
}

// commandLine joins an argument vector: "bash -lc SCRIPT" is the script;
// anything else is quoted word by word.
func commandLine(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, _ := a.(string)
		words = append(words, s)
	}
	if len(words) == 3 && (words[1] == "-lc" || words[1] == "-c") {
		return words[2]
	}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`|&;<>()*?[]{}~#!") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// Deny implements agent.Adapter.
func (Adapter) Deny(reason string) agent.Reply {
	reason = agent.Clip(reason)
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
	return agent.Reply{Exit: 2, Stdout: string(b) + "\n", Stderr: reason + "\n"}
}

// Allow implements agent.Adapter: nothing printed.
func (Adapter) Allow(bool) agent.Reply { return agent.Reply{} }
