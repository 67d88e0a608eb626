package mcpgate

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/tools"
)

// ToolName is the name veto decides an upstream tool under, as a client
// names the tools of an MCP server it configured under server.
func ToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// knownImplementations maps what the reference servers call themselves
// (serverInfo.name) to their entry in tools.MCPServers, so that one
// configured under another name keeps its curated descriptors.
var knownImplementations = map[string]string{
	"secure-filesystem-server":   "filesystem",
	"memory-server":              "memory",
	"sequential-thinking-server": "sequential-thinking",
	"mcp-fetch":                  "fetch",
	"mcp-git":                    "git",
}

// Curated returns the curated descriptors of server's tools, under
// server's name, when the server is one tools.MCPServers describes: by
// the name it is configured under, or by what it calls itself.
func Curated(server, implementation string) []veto.Descriptor {
	for _, name := range []string{server, knownImplementations[implementation]} {
		for _, m := range tools.MCPServers {
			if name != "" && m.Name == name {
				return m.Descriptors(server)
			}
		}
	}
	return nil
}

// schemaProp is what a parameter's schema says of it.
type schemaProp struct {
	Type        any         `json:"type"`
	Format      string      `json:"format"`
	Description string      `json:"description"`
	Items       *schemaProp `json:"items"`
}

// Describe builds a descriptor for a tool veto has none for, from its input
// schema: a top-level string (or array of strings) parameter whose name,
// format or description says it is a URL, a command or a file path gets
// that role. A path is one the tool reads when the tool says it only
// reads (readOnlyHint), else one it writes. A schema that names no such
// parameter gives no descriptor (nil): veto then judges every path-like
// argument of the call as a file the tool may write, as for any tool it
// has no descriptor for.
func Describe(name string, t *mcp.Tool) *veto.Descriptor {
	var s struct {
		Properties map[string]schemaProp `json:"properties"`
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return nil
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	d := veto.Descriptor{Name: name, Params: map[string]veto.Role{}}
	for param, p := range s.Properties {
		if !stringy(p) {
			continue
		}
		switch roleOf(param, p) {
		case veto.RoleURL:
			d.Params[param] = veto.RoleURL
			d.Caps |= veto.CapNetwork
		case veto.RoleCommand:
			d.Params[param] = veto.RoleCommand
			d.Caps |= veto.CapExecutes
		case veto.RolePath:
			if readOnly {
				d.Params[param] = veto.RoleSourcePath
				d.Caps |= veto.CapReads
			} else {
				d.Params[param] = veto.RolePath
				d.Caps |= veto.CapWrites
			}
		}
	}
	if len(d.Params) == 0 {
		return nil
	}
	return &d
}

// stringy reports whether a parameter is a string or an array of strings,
// or does not say.
func stringy(p schemaProp) bool {
	if p.Type == nil || typeIs(p.Type, "string") {
		return true
	}
	return typeIs(p.Type, "array") && p.Items != nil && (p.Items.Type == nil || typeIs(p.Items.Type, "string"))
}

// typeIs reports whether a schema's type (one name or a list) is want.
func typeIs(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

// roleOf is the role a parameter's name, format or description gives it;
// "" for none.
func roleOf(param string, p schemaProp) veto.Role {
	n := strings.ToLower(param)
	desc := strings.ToLower(p.Description)
	switch strings.ToLower(p.Format) {
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		return veto.RoleURL
	}
	switch {
	case n == "url" || n == "uri" || n == "urls" || n == "href" || n == "endpoint" ||
		strings.HasSuffix(n, "_url") || strings.HasSuffix(n, "url") && len(n) > 3 && !strings.HasSuffix(n, "curl"):
		return veto.RoleURL
	case n == "command" || n == "cmd" || n == "shell_command" || n == "commandline" || n == "command_line" ||
		strings.HasSuffix(n, "_command"):
		return veto.RoleCommand
	case n == "path" || n == "paths" || n == "file" || n == "files" || n == "filename" || n == "filenames" ||
		n == "dir" || n == "directory" || n == "folder" || n == "source" || n == "destination" ||
		strings.HasSuffix(n, "path") || strings.HasSuffix(n, "paths") || strings.HasSuffix(n, "_file") ||
		strings.HasSuffix(n, "filename") || strings.HasSuffix(n, "_dir") || strings.HasSuffix(n, "directory"):
		return veto.RolePath
	}
	switch {
	case hasWord(desc, "url", "urls", "uri", "link"):
		return veto.RoleURL
	case hasWord(desc, "command", "shell"):
		return veto.RoleCommand
	case hasWord(desc, "path", "paths", "file", "files", "directory", "folder", "filename"):
		return veto.RolePath
	}
	return ""
}

// hasWord reports whether text holds one of the words, whole.
func hasWord(text string, words ...string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		for _, want := range words {
			if w == want {
				return true
			}
		}
	}
	return false
}
