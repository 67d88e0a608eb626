// Package tools holds the descriptors of the tools veto knows: Claude
// Code's built-in tools and the reference MCP servers (filesystem, git,
// fetch). A descriptor says which parameters are paths the tool writes or
// reads, URLs, commands or content, and what the tool can do. A tool
// without a descriptor is still checked: its path-like arguments are
// sniffed and judged as paths it might write.
package tools

import (
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
)

const (
	path    = veto.RolePath
	source  = veto.RoleSourcePath
	moved   = veto.RoleMoved
	url     = veto.RoleURL
	command = veto.RoleCommand
	content = veto.RoleContent
)

func d(name string, caps veto.Capability, params map[string]veto.Role) veto.Descriptor {
	return veto.Descriptor{Name: name, Caps: caps, Params: params}
}

// ClaudeCode returns the descriptors of Claude Code's built-in tools.
func ClaudeCode() []veto.Descriptor {
	return []veto.Descriptor{
		d("Read", veto.CapReads, map[string]veto.Role{"file_path": source}),
		d("Write", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"file_path": path, "content": content}),
		d("Edit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"file_path": path, "old_string": content, "new_string": content}),
		d("MultiEdit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"file_path": path, "edits": content}),
		d("NotebookEdit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"notebook_path": path, "new_source": content}),
		d("Glob", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("Grep", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("LS", veto.CapReads, map[string]veto.Role{"path": source}),
		d("WebFetch", veto.CapNetwork, map[string]veto.Role{"url": url}),
		d("WebSearch", veto.CapNetwork, nil),
		d("Bash", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("BashOutput", 0, nil),
		d("KillShell", 0, nil),
		d("Agent", 0, nil),
		d("Task", 0, nil),
		d("TodoWrite", 0, nil),
		d("ExitPlanMode", 0, nil),
	}
}

// MCPFilesystem returns the descriptors of the reference filesystem MCP
// server's tools, as a client names them when the server is configured
// under the given name: mcp__<server>__<tool>.
func MCPFilesystem(server string) []veto.Descriptor {
	p := "mcp__" + server + "__"
	return []veto.Descriptor{
		d(p+"read_file", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"read_text_file", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"read_media_file", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"read_multiple_files", veto.CapReads, map[string]veto.Role{"paths": source}),
		d(p+"write_file", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"path": path, "content": content}),
		d(p+"edit_file", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"path": path, "edits": content}),
		d(p+"create_directory", veto.CapWrites, map[string]veto.Role{"path": path}),
		d(p+"list_directory", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"list_directory_with_sizes", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"directory_tree", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"move_file", veto.CapWrites|veto.CapOverwrites|veto.CapContentFromSource, map[string]veto.Role{"source": moved, "destination": path}),
		d(p+"search_files", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d(p+"get_file_info", veto.CapReads, map[string]veto.Role{"path": source}),
		d(p+"list_allowed_directories", 0, nil),
	}
}

// MCPGit returns the descriptors of the reference git MCP server's tools.
// Tools that change the repository write its directory; the rest read it.
func MCPGit(server string) []veto.Descriptor {
	p := "mcp__" + server + "__"
	read := func(name string) veto.Descriptor {
		return d(p+name, veto.CapReads, map[string]veto.Role{"repo_path": source})
	}
	write := func(name string, extra map[string]veto.Role) veto.Descriptor {
		params := map[string]veto.Role{"repo_path": path}
		for k, v := range extra {
			params[k] = v
		}
		return d(p+name, veto.CapWrites, params)
	}
	return []veto.Descriptor{
		read("git_status"), read("git_diff_unstaged"), read("git_diff_staged"), read("git_diff"),
		read("git_log"), read("git_show"), read("git_branch"),
		write("git_commit", nil),
		write("git_add", map[string]veto.Role{"files": source}),
		write("git_reset", nil),
		write("git_create_branch", nil),
		write("git_checkout", nil),
		write("git_init", nil),
	}
}

// MCPFetch returns the descriptor of the reference fetch MCP server's tool.
func MCPFetch(server string) []veto.Descriptor {
	return []veto.Descriptor{d("mcp__"+server+"__fetch", veto.CapNetwork, map[string]veto.Role{"url": url})}
}

// GeminiCLI returns the descriptors of Gemini CLI's built-in tools.
func GeminiCLI() []veto.Descriptor {
	return []veto.Descriptor{
		d("run_shell_command", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("read_file", veto.CapReads, map[string]veto.Role{"absolute_path": source, "file_path": source}),
		d("read_many_files", veto.CapReads, map[string]veto.Role{"paths": source}),
		d("write_file", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"file_path": path, "content": content}),
		d("replace", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"file_path": path, "old_string": content, "new_string": content}),
		d("list_directory", veto.CapReads, map[string]veto.Role{"path": source, "dir_path": source}),
		d("glob", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source, "dir_path": source}),
		d("search_file_content", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source, "dir_path": source}),
		d("web_fetch", veto.CapNetwork, map[string]veto.Role{"prompt": content, "url": url}),
		d("google_web_search", veto.CapNetwork, nil),
		d("save_memory", 0, nil),
		d("write_todos", 0, nil),
	}
}

// CopilotCLI returns the descriptors of GitHub Copilot CLI's tools.
func CopilotCLI() []veto.Descriptor {
	return []veto.Descriptor{
		d("bash", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("view", veto.CapReads, map[string]veto.Role{"path": source}),
		d("create", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"path": path, "file_text": content}),
		d("edit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"path": path, "old_str": content, "new_str": content}),
		d("glob", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("grep", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("web_fetch", veto.CapNetwork, map[string]veto.Role{"url": url}),
	}
}

// Codex returns the descriptors of the Codex CLI's tools, as its adapter
// presents them (a shell command as one line, apply_patch's files as
// paths).
func Codex() []veto.Descriptor {
	return []veto.Descriptor{
		d("shell", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("exec_command", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("local_shell", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("apply_patch", veto.CapWrites, map[string]veto.Role{"paths": path, "input": content, "patch": content}),
	}
}

// ofClient are the descriptors of each client's own tools, by its entry
// in the client table. Cursor's events become Claude Code's calls (Bash,
// Read, Edit), so its tools are Claude Code's.
var ofClient = map[*clients.Client]func() []veto.Descriptor{
	&clients.ClaudeCode: ClaudeCode,
	&clients.GeminiCLI:  GeminiCLI,
	&clients.CopilotCLI: CopilotCLI,
	&clients.Cursor:     ClaudeCode,
	&clients.Codex:      Codex,
}

// ForClient returns the descriptors of a client's own tools (nil for a
// client veto has none for).
func ForClient(c *clients.Client) []veto.Descriptor {
	if f := ofClient[c]; f != nil {
		return f()
	}
	return nil
}

// Defaults returns every descriptor veto knows: every client's tools, in
// the table's order, then the reference MCP servers under their usual
// names (filesystem, git, fetch). A tool two clients name alike is
// described once, by the first (Copilot CLI's glob and web_fetch are
// Gemini CLI's; a test holds the two descriptions together).
func Defaults() []veto.Descriptor {
	var all []veto.Descriptor
	seen := map[string]bool{}
	for _, c := range clients.All {
		for _, d := range ForClient(c) {
			if !seen[d.Name] {
				seen[d.Name] = true
				all = append(all, d)
			}
		}
	}
	all = append(all, MCPFilesystem("filesystem")...)
	all = append(all, MCPGit("git")...)
	all = append(all, MCPFetch("fetch")...)
	return all
}
