// Package codex speaks the Codex CLI's hooks, which are shaped as Claude
// Code's (session_id, cwd, hook_event_name, tool_name, tool_input,
// tool_use_id) and answered with a strict schema: a denial is exactly
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":
// "deny","permissionDecisionReason":…}}, and veto also exits 2.
package codex

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/claudecode"
)

// Adapter is Codex's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

// Decode implements agent.Adapter. A shell command given as an argument
// vector becomes one command line; apply_patch's file headers become the
// paths it writes, wherever Codex puts the patch (input, patch, or
// command, as it does now). A shell command that runs apply_patch, which
// Codex applies itself, is that apply_patch call.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	ev, err := claudecode.Adapter{}.Decode(b)
	if err != nil || ev.Kind == agent.Start {
		return ev, err
	}
	ev.Call.Actor.ID = "codex"
	args := ev.Call.Args
	switch ev.Call.Tool {
	case "shell", "exec_command", "local_shell", "Bash":
		if argv, ok := args["command"].([]any); ok {
			args["command"] = commandLine(argv)
		}
		// The command runs in its workdir when it names one: its relative
		// paths, and a patch's headers, are relative to that.
		if wd, ok := args["workdir"].(string); ok && wd != "" {
			if path.IsAbs(wd) {
				ev.Call.Cwd = wd
			} else if ev.Call.Cwd != "" {
				ev.Call.Cwd = path.Join(ev.Call.Cwd, wd)
			}
		}
		line, _ := args["command"].(string)
		if ran, first := runsApplyPatch(line); ran {
			paths := patchPaths(line)
			if !first {
				// After a cd, or inside a compound command, the directory the
				// headers are relative to is not known: an empty path, which
				// resolves to nothing, refuses the call.
				paths = append(paths, "")
			}
			ev.Call.Tool = "apply_patch"
			ev.Call.Args = map[string]any{"input": line, "paths": paths}
		}
	case "apply_patch":
		var patch string
		for _, k := range []string{"input", "patch", "command"} {
			switch v := args[k].(type) {
			case string:
				patch += v + "\n"
			case []any:
				for _, e := range v {
					s, _ := e.(string)
					patch += s + "\n"
				}
			}
		}
		args["paths"] = patchPaths(patch)
	}
	return ev, nil
}

// patchPaths returns the files a patch's headers name. Codex trims each
// line before it reads a header, and so does this.
func patchPaths(patch string) []any {
	paths := []any{}
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, h); ok {
				paths = append(paths, strings.TrimSpace(p))
			}
		}
	}
	return paths
}

// runsApplyPatch reports whether the command line runs apply_patch (or
// applypatch) on a patch, anywhere, and whether as its very first word. A
// line with no patch in it (grep apply_patch …) runs none.
func runsApplyPatch(line string) (ran, first bool) {
	if !strings.Contains(line, "*** Begin Patch") {
		return false, false
	}
	for _, name := range []string{"apply_patch", "applypatch"} {
		for i := 0; i < len(line); {
			j := strings.Index(line[i:], name)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(name)
			before := at == 0 || strings.ContainsRune(" \t\n;&|(`$'\"", rune(line[at-1]))
			after := end == len(line) || strings.ContainsRune(" \t\n<;&|)'\"", rune(line[end]))
			if before && after {
				if strings.TrimSpace(line[:at]) == "" {
					return true, true
				}
				ran = true
			}
			i = end
		}
	}
	return ran, false
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
