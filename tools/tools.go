// Package tools holds the descriptors of the tools veto knows: each
// client's built-in tools, the reference MCP servers (filesystem, git,
// fetch) and the most used others (Context7, GitHub, Playwright,
// Puppeteer, Slack, memory, sequential thinking, Brave Search). A
// descriptor says which parameters are paths the tool writes or reads,
// URLs, commands or content, and what the tool can do; a parameter it
// gives no role is not a local file (a repository path on GitHub, a
// library id, a CSS selector). A tool without a descriptor is still
// checked: its path-like arguments are sniffed and judged as paths it
// might write.
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
		// AskUserQuestion asks the person (questions[].question, header,
		// options[].label and description, multiSelect): its text names no
		// file it touches, so none of it is sniffed as a path.
		d("AskUserQuestion", 0, nil),
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

// each returns descriptors of the named tools of a server, with the same
// capabilities and no parameter that is a local path.
func each(server string, caps veto.Capability, names ...string) []veto.Descriptor {
	out := make([]veto.Descriptor, 0, len(names))
	for _, n := range names {
		out = append(out, d("mcp__"+server+"__"+n, caps, nil))
	}
	return out
}

// MCPContext7 returns the descriptors of Context7's tools
// (@upstash/context7-mcp): they look libraries up on context7.com. A
// library id such as "/vercel/next.js" (context7CompatibleLibraryID,
// libraryId) is an id, not a path.
func MCPContext7(server string) []veto.Descriptor {
	return each(server, veto.CapNetwork, "resolve-library-id", "get-library-docs", "query-docs")
}

// MCPGitHub returns the descriptors of the GitHub MCP servers' tools
// (github-mcp-server, and the older @modelcontextprotocol/server-github,
// whose names it mostly kept; renamed tools keep their old names as
// aliases). Every one talks to the GitHub API and none touches a local
// file: a path such as "/docs/setup.md" (get_file_contents,
// create_or_update_file, push_files' files) names a file in the remote
// repository, and content is sent there. So no parameter has a local
// role, and each tool reaches the network, as the history rules must
// know: pushing a file after reading a secret is sending it.
func MCPGitHub(server string) []veto.Descriptor {
	return each(server, veto.CapNetwork,
		// repositories, files, branches, commits, releases, tags
		"get_file_contents", "create_or_update_file", "delete_file", "push_files", "get_repository_tree", "get_file_blame",
		"search_code", "search_repositories", "search_commits", "create_repository", "delete_repository", "fork_repository",
		"create_branch", "list_branches", "list_commits", "get_commit", "list_tags", "get_tag", "list_releases",
		"get_latest_release", "get_release_by_tag", "list_repository_collaborators", "star_repository", "unstar_repository",
		"list_starred_repositories",
		// issues
		"issue_read", "issue_write", "create_issue", "get_issue", "get_issue_comments", "update_issue", "list_issues",
		"search_issues", "add_issue_comment", "add_issue_comment_reaction", "add_issue_reaction", "sub_issue_write",
		"add_sub_issue", "remove_sub_issue", "reprioritize_sub_issue", "list_sub_issues", "list_issue_types", "list_issue_fields",
		"set_issue_fields", "update_issue_assignees", "update_issue_labels", "update_issue_state", "update_issue_type",
		"issue_dependency_read", "issue_dependency_write", "find_duplicate", "assign_copilot_to_issue",
		"assign_copilot_to_issue_with_intent", "get_label", "list_label", "label_write",
		// pull requests
		"pull_request_read", "create_pull_request", "update_pull_request", "update_pull_request_branch",
		"update_pull_request_draft_state", "merge_pull_request", "list_pull_requests", "search_pull_requests", "get_pull_request",
		"get_pull_request_files", "get_pull_request_diff", "get_pull_request_status", "get_pull_request_comments",
		"get_pull_request_reviews", "get_pull_request_review_comments", "pull_request_review_write", "create_pull_request_review",
		"create_pending_pull_request_review", "create_and_submit_pull_request_review", "submit_pending_pull_request_review",
		"delete_pending_pull_request_review", "add_comment_to_pending_review", "add_pull_request_review_comment",
		"add_pull_request_review_comment_reaction", "add_reply_to_pull_request_comment", "request_copilot_review",
		"request_pull_request_reviewers", "resolve_review_thread", "unresolve_review_thread",
		// actions and their old names
		"actions_get", "actions_list", "actions_run_trigger", "get_job_logs", "list_workflows", "list_workflow_runs",
		"list_workflow_jobs", "list_workflow_run_artifacts", "get_workflow", "get_workflow_run", "get_workflow_job",
		"get_workflow_run_usage", "get_workflow_run_logs", "get_workflow_job_logs", "download_workflow_run_artifact",
		"run_workflow", "rerun_workflow_run", "rerun_failed_jobs", "cancel_workflow_run", "delete_workflow_run_logs",
		// security
		"list_code_scanning_alerts", "get_code_scanning_alert", "get_code_quality_finding", "list_dependabot_alerts",
		"get_dependabot_alert", "list_secret_scanning_alerts", "get_secret_scanning_alert", "list_global_security_advisories",
		"get_global_security_advisory", "list_repository_security_advisories", "list_org_repository_security_advisories",
		// discussions, gists, notifications, projects, users, organisations
		"list_discussions", "get_discussion", "get_discussion_comments", "list_discussion_categories",
		"discussion_comment_write", "list_gists", "get_gist", "create_gist", "update_gist", "list_notifications",
		"get_notification_details", "dismiss_notification", "mark_all_notifications_read", "manage_notification_subscription",
		"manage_repository_notification_subscription", "projects_get", "projects_list", "projects_write", "list_projects",
		"list_project_fields", "list_project_items", "get_project", "get_project_field", "get_project_item", "add_project_item",
		"update_project_item", "delete_project_item", "get_me", "search_users", "search_orgs", "get_teams", "get_team_members")
}

// MCPPlaywright returns the descriptors of Playwright MCP's tools
// (@playwright/mcp). The browser reaches the network for most of them;
// three parameters are local files: browser_file_upload reads its paths
// and sends them to the page, and the filename of a screenshot, a PDF or
// a saved snapshot (or console or network log) is a file written. The
// server puts a relative filename in its output directory, which veto
// does not know; it is judged relative to the call's working directory,
// and an absolute one where it points. browser_evaluate and
// browser_run_code run code in the browser, whose text is content.
func MCPPlaywright(server string) []veto.Descriptor {
	p := "mcp__" + server + "__"
	saves := func(name string) veto.Descriptor {
		return d(p+name, veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"filename": path})
	}
	out := []veto.Descriptor{
		d(p+"browser_navigate", veto.CapNetwork, map[string]veto.Role{"url": url}),
		d(p+"browser_tab_new", veto.CapNetwork, map[string]veto.Role{"url": url}),
		d(p+"browser_file_upload", veto.CapReads|veto.CapNetwork, map[string]veto.Role{"paths": source}),
		d(p+"browser_evaluate", veto.CapExecutes|veto.CapNetwork, map[string]veto.Role{"function": content}),
		d(p+"browser_run_code", veto.CapExecutes|veto.CapNetwork, map[string]veto.Role{"code": content}),
		saves("browser_take_screenshot"), saves("browser_pdf_save"), saves("browser_snapshot"),
		saves("browser_console_messages"), saves("browser_network_requests"),
	}
	// What acts on the page (a click can submit a form, typing sends text).
	out = append(out, each(server, veto.CapNetwork, "browser_navigate_back", "browser_navigate_forward", "browser_click",
		"browser_type", "browser_hover", "browser_drag", "browser_select_option", "browser_press_key", "browser_fill_form",
		"browser_handle_dialog", "browser_tabs", "browser_tab_select", "browser_tab_close", "browser_mouse_click_xy",
		"browser_mouse_move_xy", "browser_mouse_drag_xy", "browser_install")...)
	// What only looks at or arranges the browser.
	return append(out, each(server, 0, "browser_close", "browser_resize", "browser_wait_for", "browser_tab_list")...)
}

// MCPPuppeteer returns the descriptors of the reference Puppeteer MCP
// server's tools (@modelcontextprotocol/server-puppeteer). A screenshot's
// name names an image the server keeps in memory (screenshot://name), not
// a file; selectors are CSS. puppeteer_navigate has none: its
// launchOptions may name local files and programs (a user data
// directory, an executable) inside an object no role reaches, so its
// arguments stay sniffed, each path-like one judged as a write; its url
// is found as an undescribed tool's URLs are.
func MCPPuppeteer(server string) []veto.Descriptor {
	return append([]veto.Descriptor{
		d("mcp__"+server+"__puppeteer_evaluate", veto.CapExecutes|veto.CapNetwork, map[string]veto.Role{"script": content}),
		d("mcp__"+server+"__puppeteer_screenshot", 0, nil),
	}, each(server, veto.CapNetwork, "puppeteer_click", "puppeteer_fill", "puppeteer_select", "puppeteer_hover")...)
}

// MCPSlack returns the descriptors of the reference Slack MCP server's
// tools (@modelcontextprotocol/server-slack): each calls Slack's API.
func MCPSlack(server string) []veto.Descriptor {
	return each(server, veto.CapNetwork, "slack_list_channels", "slack_post_message", "slack_reply_to_thread",
		"slack_add_reaction", "slack_get_channel_history", "slack_get_thread_replies", "slack_get_users", "slack_get_user_profile")
}

// MCPMemory returns the descriptors of the reference memory MCP server's
// tools (@modelcontextprotocol/server-memory): a knowledge graph kept in
// the server's own file, which no call names. Entity names and
// observations are text.
func MCPMemory(server string) []veto.Descriptor {
	return each(server, 0, "create_entities", "create_relations", "add_observations", "delete_entities",
		"delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes")
}

// MCPSequentialThinking returns the descriptor of the reference
// sequential-thinking server's one tool, which only records thoughts.
func MCPSequentialThinking(server string) []veto.Descriptor {
	return each(server, 0, "sequentialthinking")
}

// MCPBraveSearch returns the descriptors of Brave Search's MCP tools
// (@modelcontextprotocol/server-brave-search and @brave/brave-search-mcp-server).
func MCPBraveSearch(server string) []veto.Descriptor {
	return each(server, veto.CapNetwork, "brave_web_search", "brave_local_search", "brave_image_search",
		"brave_video_search", "brave_news_search", "brave_summarizer")
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
		// pi's edit shares the name (Copilot CLI comes first in the
		// table): its edits[], oldText and newText are content too.
		// OpenCode's too: filePath, oldString and newString.
		d("edit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"path": path, "old_str": content, "new_str": content,
			"edits": content, "oldText": content, "newText": content, "filePath": path, "oldString": content, "newString": content}),
		d("glob", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("grep", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("web_fetch", veto.CapNetwork, map[string]veto.Role{"url": url}),
	}
}

// Codex returns the descriptors of the Codex CLI's tools, as its adapter
// presents them (a shell command as one line, apply_patch's files as
// paths). A command still given as an argument vector is judged as that
// program with those words (shell.CommandText).
func Codex() []veto.Descriptor {
	return []veto.Descriptor{
		d("shell", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("exec_command", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("local_shell", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("apply_patch", veto.CapWrites, map[string]veto.Role{"paths": path, "input": content, "patch": content}),
	}
}

// Pi returns the descriptors of pi's built-in tools (read, bash, edit,
// write, and the read-only grep, find and ls), as its tool_call event
// names them. bash, edit and grep share Copilot CLI's names and roles.
func Pi() []veto.Descriptor {
	return []veto.Descriptor{
		// OpenCode's read and write share the names: filePath is its path.
		d("read", veto.CapReads, map[string]veto.Role{"path": source, "filePath": source}),
		d("bash", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("edit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"path": path, "edits": content, "oldText": content, "newText": content}),
		d("write", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"path": path, "filePath": path, "content": content}),
		d("grep", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("find", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("ls", veto.CapReads, map[string]veto.Role{"path": source}),
	}
}

// OpenCode returns the descriptors of OpenCode's built-in tools, as its
// tool.execute.before hook names them (read, write, edit and bash share
// pi's and Copilot CLI's names, whose descriptions hold OpenCode's
// parameters too). apply_patch (offered to some models) is left to the
// sniffer: its files are inside patchText.
func OpenCode() []veto.Descriptor {
	return []veto.Descriptor{
		d("read", veto.CapReads, map[string]veto.Role{"filePath": source}),
		d("write", veto.CapWrites|veto.CapOverwrites, map[string]veto.Role{"filePath": path, "content": content}),
		d("edit", veto.CapWrites|veto.CapEdits, map[string]veto.Role{"filePath": path, "oldString": content, "newString": content}),
		d("bash", veto.CapExecutes, map[string]veto.Role{"command": command}),
		d("glob", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("grep", veto.CapReads|veto.CapSearchesTree, map[string]veto.Role{"path": source}),
		d("list", veto.CapReads, map[string]veto.Role{"path": source}),
		d("webfetch", veto.CapNetwork, map[string]veto.Role{"url": url}),
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
	&clients.Pi:         Pi,
	&clients.OpenCode:   OpenCode,
	// The SDK's tools are Claude Code's: it runs the Claude Code CLI.
	&clients.ClaudeAgentSDK: ClaudeCode,
}

// ForClient returns the descriptors of a client's own tools (nil for a
// client veto has none for).
func ForClient(c *clients.Client) []veto.Descriptor {
	if f := ofClient[c]; f != nil {
		return f()
	}
	return nil
}

// MCPServers are the MCP servers Defaults describes, by the name a client
// shows them under (mcp__NAME__tool): the name their documentation
// configures them with, and for those Claude Code installs as plugins,
// the plugin's name (plugin_PLUGIN_SERVER).
var MCPServers = []struct {
	Name        string
	Descriptors func(server string) []veto.Descriptor
}{
	{"filesystem", MCPFilesystem},
	{"git", MCPGit},
	{"fetch", MCPFetch},
	{"context7", MCPContext7},
	{"plugin_context7_context7", MCPContext7},
	{"github", MCPGitHub},
	{"plugin_github_github", MCPGitHub},
	{"playwright", MCPPlaywright},
	{"plugin_playwright_playwright", MCPPlaywright},
	{"puppeteer", MCPPuppeteer},
	{"slack", MCPSlack},
	{"memory", MCPMemory},
	{"sequential-thinking", MCPSequentialThinking},
	{"brave-search", MCPBraveSearch},
}

// Defaults returns every descriptor veto knows: every client's tools, in
// the table's order, then the MCP servers of MCPServers under their
// usual names. A tool two clients name alike is described once, by the
// first (Copilot CLI's glob and web_fetch are Gemini CLI's; a test holds
// the two descriptions together).
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
	for _, m := range MCPServers {
		all = append(all, m.Descriptors(m.Name)...)
	}
	return append(all, Supervised()...)
}

// The tools of veto exec: what a supervised command does, as veto
// decides it (docs/exec.md). No client offers them; a decision of one is
// a program started, a file opened, moved or removed, a connection made.
const (
	ExecRun     = "exec.run"     // a program started: command, its argv as one simple command
	ExecRead    = "exec.read"    // a file opened for reading: path
	ExecWrite   = "exec.write"   // a file opened for writing, created, removed, or a directory made: path
	ExecMove    = "exec.move"    // a file renamed or linked: from (moved away) and to (written)
	ExecConnect = "exec.connect" // a connection: url, as tcp://ADDRESS:PORT or unix:PATH
)

// Supervised returns the descriptors of veto exec's tools.
func Supervised() []veto.Descriptor {
	return []veto.Descriptor{
		d(ExecRun, veto.CapExecutes, map[string]veto.Role{"command": command}),
		d(ExecRead, veto.CapReads, map[string]veto.Role{"path": source}),
		d(ExecWrite, veto.CapWrites, map[string]veto.Role{"path": path}),
		d(ExecMove, veto.CapWrites, map[string]veto.Role{"from": moved, "to": path}),
		d(ExecConnect, veto.CapNetwork, map[string]veto.Role{"url": url}),
	}
}
