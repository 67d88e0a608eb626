package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// mcpEnv set, the test binary is a stdio MCP server named notes with one
// tool, save, which writes a note to a file: what the scenarios' MCP calls
// reach when veto lets them through.
const mcpEnv = "VETO_E2E_MCP"

// mcpLogEnv names a file the notes server appends a line to for every
// request it gets (the method, and a call's tool and path): the server's
// own word on what reached it. mcpDescEnv names a file that holds the
// save tool's description when it exists: the server reads it at each
// listing and watches it, and says its list changed when it does.
const (
	mcpLogEnv  = "VETO_E2E_MCP_LOG"
	mcpDescEnv = "VETO_E2E_MCP_DESC"
)

// saveDescription is the save tool's description unless mcpDescEnv's
// file says otherwise.
const saveDescription = "Save a note to a file."

// mcpServer answers JSON-RPC requests, one a line, on stdin.
func mcpServer() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 16<<20)
	var outMu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	send := func(v any) error {
		outMu.Lock()
		defer outMu.Unlock()
		return enc.Encode(v)
	}
	logf := func(format string, args ...any) {}
	if p := os.Getenv(mcpLogEnv); p != "" {
		logf = func(format string, args ...any) {
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
				fmt.Fprintf(f, format+"\n", args...)
				f.Close()
			}
		}
	}
	description := func() string { return saveDescription }
	if p := os.Getenv(mcpDescEnv); p != "" {
		description = func() string {
			if b, err := os.ReadFile(p); err == nil {
				return string(b)
			}
			return saveDescription
		}
		// The file watched: a change is told as MCP tells it.
		go func() {
			last, _ := os.ReadFile(p)
			for range time.Tick(100 * time.Millisecond) {
				now, _ := os.ReadFile(p)
				if !bytes.Equal(now, last) {
					last = now
					logf("sent notifications/tools/list_changed")
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				}
			}
		}()
	}
	for in.Scan() {
		var rq struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &rq) != nil {
			continue // noise
		}
		if rq.ID == nil {
			logf("%s", rq.Method) // a notification
			continue
		}
		if rq.Method != "tools/call" {
			logf("%s", rq.Method)
		}
		var result any
		var rpcErr map[string]any
		switch rq.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(rq.Params, &p)
			result = map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo": map[string]any{"name": "notes", "version": "1.0.0"}}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "save", "description": description(),
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
			logf("tools/call %s %s", p.Name, p.Arguments.Path)
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
		if send(reply) != nil {
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
