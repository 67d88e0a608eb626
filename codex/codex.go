// Package codex speaks the Codex CLI's hooks, which are shaped as Claude
// Code's (session_id, cwd, hook_event_name, tool_name, tool_input,
// tool_use_id) and answered with a strict schema: a denial is exactly
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":
// "deny","permissionDecisionReason":…}}, and veto also exits 2.
package codex

import (
	"path"
	"strings"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/shell"
)

// Client is Codex's entry in the client table.
var Client = &clients.Codex

// Adapter is Codex's hook protocol.
type Adapter struct{}

var _ agent.Adapter = Adapter{}

func init() { agent.Register(Client, func(agent.Env) agent.Adapter { return Adapter{} }) }

// Decode implements agent.Adapter. A shell command given as an argument
// vector becomes one command line; apply_patch's file headers become the
// paths it writes, wherever Codex puts the patch (input, patch, or
// command, as it does now). A shell command that runs apply_patch, which
// Codex applies itself, is that apply_patch call.
func (Adapter) Decode(b []byte) (agent.Event, error) {
	h, err := agent.DecodeHook(b)
	if err != nil {
		return agent.Event{}, err
	}
	ev, err := h.Event(Client.Actor, "")
	if err != nil || ev.Kind == agent.Start {
		return ev, err
	}
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
		if alone, runs := runsApplyPatch(line); runs {
			paths := patchPaths(line)
			if !alone {
				// Inside a compound command, after a cd, or with its patch on
				// standard input or in a file, veto cannot tell what the patch
				// writes, nor judge the rest: an empty path, which resolves to
				// nothing, refuses the call.
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
		if args == nil {
			// No tool_input: a patch that names no file.
			args = map[string]any{}
			ev.Call.Args = args
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
// applypatch), and whether that is all it does, on a patch it holds: the
// program alone with a here-document, or with the patch as one
// single-quoted argument. It runs when the name stands where a command
// starts, or anywhere in a line that holds a patch; grep apply_patch src
// runs nothing.
func runsApplyPatch(line string) (alone, runs bool) {
	hasPatch := strings.Contains(line, "*** Begin Patch")
	for _, name := range []string{"apply_patch", "applypatch"} {
		if hasPatch && patchAlone(line, name) {
			return true, true
		}
		for i := 0; i < len(line); {
			j := strings.Index(line[i:], name)
			if j < 0 {
				break
			}
			at, end := i+j, i+j+len(name)
			i = end
			if at > 0 && wordByte(line[at-1]) || end < len(line) && wordByte(line[end]) {
				continue // part of another word
			}
			if hasPatch || commandPosition(line[:at]) {
				runs = true
			}
		}
	}
	return false, runs
}

func wordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// commandPosition reports whether a word after before starts a command.
func commandPosition(before string) bool {
	before = strings.TrimRight(before, " \t")
	if before == "" {
		return true
	}
	switch before[len(before)-1] {
	case '\n', ';', '&', '|', '(', '`', '{':
		return true
	}
	return false
}

// patchAlone reports whether line is name and nothing else but its patch:
// "name <<[-]['"]DELIM['"]", the patch, DELIM alone on its line, and
// nothing after; or "name '…'" with no other quote.
func patchAlone(line, name string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t\n"), name)
	if !ok || rest == "" || rest[0] != ' ' && rest[0] != '\t' && rest[0] != '<' {
		return false
	}
	rest = strings.TrimLeft(rest, " \t")
	if body, ok := strings.CutPrefix(rest, "'"); ok {
		inner, tail, ok := strings.Cut(body, "'")
		return ok && strings.Contains(inner, "*** Begin Patch") && strings.TrimSpace(tail) == ""
	}
	rest, ok = strings.CutPrefix(rest, "<<")
	if !ok {
		return false
	}
	tabs := strings.HasPrefix(rest, "-")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "-"), " \t")
	head, body, ok := strings.Cut(rest, "\n")
	if !ok {
		return false
	}
	delim := strings.TrimSpace(head)
	if len(delim) >= 2 && (delim[0] == '\'' || delim[0] == '"') && delim[len(delim)-1] == delim[0] {
		delim = delim[1 : len(delim)-1]
	}
	if delim == "" || strings.ContainsAny(delim, " \t'\"$`\\<>|;&()") {
		return false
	}
	lines := strings.Split(body, "\n")
	for k, l := range lines {
		if tabs {
			l = strings.TrimLeft(l, "\t")
		}
		if l == delim {
			return strings.TrimSpace(strings.Join(lines[k+1:], "\n")) == ""
		}
	}
	return false
}

// commandLine joins an argument vector: a shell's -c or -lc script
// ("bash -lc SCRIPT") is the script; any other vector is its words, each
// quoted as the shell needs (shell.ArgvLine), so that "python3 -c CODE"
// is python3 given CODE, not CODE run as a shell line.
func commandLine(argv []any) string {
	words := make([]string, 0, len(argv))
	for _, a := range argv {
		s, _ := a.(string)
		words = append(words, s)
	}
	if len(words) == 3 && (words[1] == "-lc" || words[1] == "-c") && isShell(words[0]) {
		return words[2]
	}
	return shell.ArgvLine(words)
}

// isShell reports whether a program is a POSIX-like shell, whose -c
// operand is a shell script.
func isShell(prog string) bool {
	switch path.Base(prog) {
	case "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash":
		return true
	}
	return false
}

// Deny implements agent.Adapter: the strict hookSpecificOutput denial, the
// reason on stderr too, and exit 2.
func (Adapter) Deny(reason string) agent.Reply { return agent.Deny(Client, reason) }

// Allow implements agent.Adapter: nothing printed.
func (Adapter) Allow(approve bool) agent.Reply { return agent.Allow(Client, approve) }
