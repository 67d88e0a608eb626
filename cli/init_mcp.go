package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// mcpConfig is where a client keeps its project's MCP servers.
var mcpConfig = map[string]string{"claude-code": ".mcp.json"}

// initMCP wraps (init) or unwraps (uninstall) every stdio server of a
// project's MCP configuration in veto mcp, keeping everything else: the
// server's command and arguments follow "--" in the gateway's, so
// uninstall gives them back as they were. A server reached over HTTP is
// left as it is (veto mcp --url does not carry its headers).
func initMCP(e *env, verb, client, dir string, dry bool) int {
	rel, ok := mcpConfig[client]
	if !ok {
		fmt.Fprintf(e.stderr, "veto %s %s: --mcp is for claude-code's .mcp.json\n", verb, client)
		return ExitUsage
	}
	path := filepath.Join(dir, rel)
	cfg, err := readSettings(path)
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
	servers, _ := cfg["mcpServers"].(map[string]any)
	var changed, skipped []string
	for _, name := range sortedKeys(servers) {
		s, ok := servers[name].(map[string]any)
		if !ok {
			continue
		}
		if verb == "init" {
			switch wrapMCP(s, name, self) {
			case "wrapped":
				changed = append(changed, name)
			case "skipped":
				skipped = append(skipped, name)
			}
		} else if unwrapMCP(s, self) {
			changed = append(changed, name)
		}
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	out = append(out, '\n')
	for _, name := range skipped {
		fmt.Fprintf(e.stderr, "veto %s: %s is not a stdio server; left as it is (run veto mcp --name %s --url URL in front of it yourself)\n", verb, name, name)
	}
	if dry {
		fmt.Fprintf(e.stdout, "# %s (dry run; nothing written)\n%s", path, out)
		return ExitAllow
	}
	if len(changed) == 0 {
		fmt.Fprintf(e.stdout, "%s: already as it should be; nothing changed\n", path)
		return ExitAllow
	}
	if err := writeSettings(path, out); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	if verb == "init" {
		fmt.Fprintf(e.stdout, "%s: veto mcp now decides every tool call of %s\n", path, strings.Join(changed, ", "))
	} else {
		fmt.Fprintf(e.stdout, "%s: veto mcp removed from %s\n", path, strings.Join(changed, ", "))
	}
	return ExitAllow
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// wrapped returns the server's own command and arguments when its entry
// runs veto mcp in front of it.
func wrapped(s map[string]any, self string) (command string, args []any, ok bool) {
	a, _ := s["args"].([]any)
	if len(a) < 2 || a[0] != "mcp" {
		return "", nil, false
	}
	if c, _ := s["command"].(string); c == "" || (c != self && filepath.Base(c) != "veto") {
		return "", nil, false
	}
	i := slices.Index(a, any("--"))
	if i < 0 || i+1 >= len(a) {
		return "", nil, false
	}
	command, ok = a[i+1].(string)
	return command, a[i+2:], ok
}

// wrapMCP puts veto mcp in front of one server's entry: "wrapped",
// "already", or "skipped" for a server that is not started by a command.
func wrapMCP(s map[string]any, name, self string) string {
	if _, _, ok := wrapped(s, self); ok {
		return "already"
	}
	command, _ := s["command"].(string)
	if t, _ := s["type"].(string); command == "" || (t != "" && t != "stdio") {
		return "skipped"
	}
	args := []any{"mcp", "--name", name, "--actor", "agent:claude-code", "--", command}
	if a, ok := s["args"].([]any); ok {
		args = append(args, a...)
	}
	s["command"], s["args"] = self, args
	return "wrapped"
}

// unwrapMCP gives a wrapped server its own command and arguments back.
func unwrapMCP(s map[string]any, self string) bool {
	command, args, ok := wrapped(s, self)
	if !ok {
		return false
	}
	s["command"] = command
	if len(args) > 0 {
		s["args"] = args
	} else {
		delete(s, "args")
	}
	return true
}
