package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// mcpEnv set, the test binary is a stdio MCP server named notes with one
// tool, save, which writes a note to a file: what the scenarios' MCP calls
// reach when veto lets them through.
const mcpEnv = "VETO_E2E_MCP"

// mcpServer answers JSON-RPC requests, one a line, on stdin.
func mcpServer() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var rq struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &rq) != nil || rq.ID == nil {
			continue // a notification, or noise
		}
		var result any
		var rpcErr map[string]any
		switch rq.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(rq.Params, &p)
			result = map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "notes", "version": "1.0.0"}}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "save", "description": "Save a note to a file.",
				"inputSchema": map[string]any{"type": "object", "required": []string{"path", "text"},
					"properties": map[string]any{"path": map[string]any{"type": "string", "description": "the file's absolute path"},
						"text": map[string]any{"type": "string"}}},
			}}}
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Path string `json:"path"`
					Text string `json:"text"`
				} `json:"arguments"`
			}
			json.Unmarshal(rq.Params, &p)
			text, isErr := "saved "+p.Arguments.Path, false
			if p.Name != "save" || !filepath.IsAbs(p.Arguments.Path) {
				text, isErr = "want save, with an absolute path", true
			} else if err := os.WriteFile(p.Arguments.Path, []byte(p.Arguments.Text), 0o644); err != nil {
				text, isErr = err.Error(), true
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isErr}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "method not found"}
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": rq.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		if out.Encode(reply) != nil {
			return 1
		}
	}
	return 0
}

// mcpServers names the notes server, in the shape Claude Code's
// --mcp-config and Gemini CLI's mcpServers take.
func mcpServers(self string) map[string]any {
	return map[string]any{"notes": map[string]any{"type": "stdio", "command": self, "args": []string{},
		"env": map[string]string{mcpEnv: "1"}}}
}

// describeNotes tells veto, in the project's policy, what the notes
// server's save takes: veto guards an MCP tool's paths once a descriptor
// says which arguments are paths.
func describeNotes(t *testing.T, s *sandbox) {
	s.write("home/src/project/.veto/veto.yaml", `tools:
  mcp__notes__save:
    params: {path: path, text: content}
    capabilities: [writes]
`, 0o644)
}
