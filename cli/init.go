package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const initDescription = `Register veto with an agent client, or remove it.

  veto init claude-code [--project | --user] [--dir DIR] [--dry-run]
  veto uninstall claude-code [--project | --user] [--dir DIR] [--dry-run]

init adds veto to the client's settings for SessionStart, PreToolUse (every tool),
PostToolUse and PostToolUseFailure, with the absolute path of this veto binary. It keeps
every other setting and hook, and running it twice changes nothing. --project (the
default) writes .claude/settings.json in DIR (default: the current directory); --user
writes ~/.claude/settings.json. uninstall removes only what init added.`

// claudeEvents are the hook events veto registers for, with their matcher
// ("" for events without one).
var claudeEvents = []struct{ name, matcher string }{
	{"SessionStart", ""}, {"PreToolUse", "*"}, {"PostToolUse", "*"}, {"PostToolUseFailure", "*"},
}

func runInit(ctx context.Context, e *env, args []string) int      { return initOrUninstall(e, "init", args) }
func runUninstall(ctx context.Context, e *env, args []string) int { return initOrUninstall(e, "uninstall", args) }

func initOrUninstall(e *env, verb string, args []string) int {
	fs := newFlags(e, verb, "claude-code [--project | --user] [--dir DIR] [--dry-run]", initDescription)
	user := fs.Bool("user", false, "the user's settings (~/.claude/settings.json)")
	fs.Bool("project", true, "the project's settings (.claude/settings.json in --dir)")
	dir := fs.String("dir", ".", "the project directory, with --project")
	dry := fs.Bool("dry-run", false, "print the settings that would be written, and write nothing")
	if len(args) == 0 || args[0] != "claude-code" {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if code, done := parse(e, fs, args); done {
				return code
			}
		}
		fmt.Fprintf(e.stderr, "veto %s: want a client: claude-code\n", verb)
		return ExitUsage
	}
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	path := filepath.Join(*dir, ".claude", "settings.json")
	if *user {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintf(e.stderr, "veto %s: no home directory: %v\n", verb, err)
			return ExitDeny
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	settings, err := readSettings(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %s: %v\n", verb, path, err)
		return ExitDeny
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: cannot find this veto binary: %v\n", verb, err)
		return ExitDeny
	}
	command := shellQuote(self) + " hook claude-code"
	var changed bool
	if verb == "init" {
		changed = addClaudeHooks(settings, command)
	} else {
		changed = removeClaudeHooks(settings)
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	out = append(out, '\n')
	if *dry {
		fmt.Fprintf(e.stdout, "# %s (dry run; nothing written)\n%s", path, out)
		return ExitAllow
	}
	if !changed {
		fmt.Fprintf(e.stdout, "%s: already as it should be; nothing changed\n", path)
		return ExitAllow
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	tmp := path + ".veto-tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	if verb == "init" {
		fmt.Fprintf(e.stdout, "%s: veto now answers SessionStart, PreToolUse, PostToolUse and PostToolUseFailure (%s)\n", path, command)
	} else {
		fmt.Fprintf(e.stdout, "%s: veto's hooks removed\n", path)
	}
	return ExitAllow
}

// readSettings reads a settings file as a JSON object; a missing file is
// an empty one.
func readSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errors.New("not a JSON object; fix or move it first")
	}
	return m, nil
}

// isVeto reports whether a hook entry is one veto init added.
func isVeto(h any) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	c, _ := m["command"].(string)
	return strings.HasSuffix(c, " hook claude-code")
}

func addClaudeHooks(settings map[string]any, command string) bool {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	changed := false
	for _, ev := range claudeEvents {
		groups, _ := hooks[ev.name].([]any)
		present := false
		for _, g := range groups {
			gm, _ := g.(map[string]any)
			list, _ := gm["hooks"].([]any)
			for _, h := range list {
				if isVeto(h) && h.(map[string]any)["command"] == command {
					present = true
				}
			}
		}
		if present {
			continue
		}
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": json.Number("5")}}}
		if ev.matcher != "" {
			group["matcher"] = ev.matcher
		}
		hooks[ev.name] = append(groups, group)
		changed = true
	}
	settings["hooks"] = hooks
	return changed
}

func removeClaudeHooks(settings map[string]any) bool {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		return false
	}
	changed := false
	for _, ev := range claudeEvents {
		groups, _ := hooks[ev.name].([]any)
		var kept []any
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			if !ok {
				kept = append(kept, g)
				continue
			}
			list, _ := gm["hooks"].([]any)
			var rest []any
			for _, h := range list {
				if isVeto(h) {
					changed = true
					continue
				}
				rest = append(rest, h)
			}
			if len(rest) == 0 && len(list) > 0 {
				continue // the group held only veto
			}
			gm["hooks"] = rest
			kept = append(kept, gm)
		}
		if _, had := hooks[ev.name]; had {
			if len(kept) == 0 {
				delete(hooks, ev.name)
			} else {
				hooks[ev.name] = kept
			}
		}
	}
	if len(hooks) == 0 {
		delete(settings, "hooks")
	}
	return changed
}

// shellQuote quotes a path for the hook command line when it needs it.
func shellQuote(s string) string {
	if !strings.ContainsAny(s, " \t'\"$`\\!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
