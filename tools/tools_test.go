package tools

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
)

// Every client of the table has its tools here, and Defaults names each
// tool once.
func TestEveryClientHasTools(t *testing.T) {
	for _, c := range clients.All {
		if len(ForClient(c)) == 0 {
			t.Errorf("%s: no tool descriptors", c.Name)
		}
	}
	if len(ofClient) != len(clients.All) {
		t.Errorf("%d clients with tools, %d in the table", len(ofClient), len(clients.All))
	}
	seen := map[string]bool{}
	for _, d := range Defaults() {
		if seen[d.Name] {
			t.Errorf("%s: described twice", d.Name)
		}
		seen[d.Name] = true
	}
}

// A tool that two clients name alike is described once, by the first
// client: the other's description must say no more than that one (the
// same capabilities, its parameters among the first's, in the same roles).
func TestSharedToolNamesAgree(t *testing.T) {
	first := map[string]veto.Descriptor{}
	for _, c := range clients.All {
		for _, d := range ForClient(c) {
			kept, ok := first[d.Name]
			if !ok {
				first[d.Name] = d
				continue
			}
			if kept.Caps != d.Caps {
				t.Errorf("%s (%s): capabilities %v, the kept description %v", d.Name, c.Name, d.Caps, kept.Caps)
			}
			for _, p := range slices.Sorted(maps.Keys(d.Params)) {
				if kept.Params[p] != d.Params[p] {
					t.Errorf("%s (%s): parameter %s is %v, in the kept description %v", d.Name, c.Name, p, d.Params[p], kept.Params[p])
				}
			}
		}
	}
}

// The MCP servers' descriptors: every name is mcp__SERVER__tool under a
// server of MCPServers; a tool whose parameters are all remote or text
// has no role; the parameters that are local files keep theirs.
func TestMCPServersDescribeTheirLocalFiles(t *testing.T) {
	byName := map[string]veto.Descriptor{}
	for _, d := range Defaults() {
		byName[d.Name] = d
	}
	for _, m := range MCPServers {
		ds := m.Descriptors(m.Name)
		if len(ds) == 0 {
			t.Errorf("%s: no tools", m.Name)
		}
		for _, d := range ds {
			if !strings.HasPrefix(d.Name, "mcp__"+m.Name+"__") || len(d.Name) == len("mcp__"+m.Name+"__") {
				t.Errorf("%s: tool %q is not mcp__%s__TOOL", m.Name, d.Name, m.Name)
			}
		}
	}
	// Remote servers: no local role anywhere, and they reach the network.
	for _, server := range []string{"context7", "github", "slack", "brave-search"} {
		for _, d := range Defaults() {
			if strings.HasPrefix(d.Name, "mcp__"+server+"__") && (len(d.Params) != 0 || !d.Has(veto.CapNetwork)) {
				t.Errorf("%s: params %v, caps %v; want none, and network", d.Name, d.Params, d.Caps)
			}
		}
	}
	for _, name := range []string{"mcp__github__create_or_update_file", "mcp__github__get_file_contents", "mcp__github__push_files",
		"mcp__github__search_code", "mcp__github__create_issue", "mcp__context7__resolve-library-id", "mcp__context7__get-library-docs",
		"mcp__memory__create_entities", "mcp__sequential-thinking__sequentialthinking", "mcp__brave-search__brave_web_search",
		"mcp__slack__slack_post_message", "mcp__puppeteer__puppeteer_click", "mcp__plugin_playwright_playwright__browser_click"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("%s: not described", name)
		}
	}
	// Local files keep their roles.
	for _, c := range []struct {
		tool, param string
		role        veto.Role
	}{
		{"mcp__playwright__browser_file_upload", "paths", veto.RoleSourcePath},
		{"mcp__playwright__browser_take_screenshot", "filename", veto.RolePath},
		{"mcp__playwright__browser_pdf_save", "filename", veto.RolePath},
		{"mcp__playwright__browser_snapshot", "filename", veto.RolePath},
		{"mcp__playwright__browser_navigate", "url", veto.RoleURL},
		{"mcp__filesystem__write_file", "path", veto.RolePath},
		{"mcp__filesystem__move_file", "source", veto.RoleMoved},
		{"mcp__git__git_add", "files", veto.RoleSourcePath},
		{"mcp__fetch__fetch", "url", veto.RoleURL},
	} {
		if got := byName[c.tool].Params[c.param]; got != c.role {
			t.Errorf("%s.%s: role %q, want %q", c.tool, c.param, got, c.role)
		}
	}
	// puppeteer_navigate's launchOptions may name local files inside an
	// object no role reaches: it stays undescribed, and so sniffed.
	if _, ok := byName["mcp__puppeteer__puppeteer_navigate"]; ok {
		t.Error("puppeteer_navigate is described")
	}
}
