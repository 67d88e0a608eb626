package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// responses is a scripted model endpoint speaking the OpenAI Responses API
// (POST /v1/responses, streamed as server-sent events), as Codex calls it
// through a model_providers entry: on each request that offers tools it
// asks for the script's next call as one function_call item; once done, a
// message. The outputs the client sends back are recorded by call id.
type responses struct{ script }

func newResponses(calls []Call, canaries map[string]string) *responses {
	return &responses{newScript(calls, canaries)}
}

type respRequest struct {
	Model string `json:"model"`
	Input []struct {
		Type   string          `json:"type"`
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

func (a *responses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := a.read(r)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		a.notScripted(w, r, `{"error":{"message":"not scripted","type":"invalid_request_error"}}`)
		return
	}
	var rq respRequest
	if err := json.Unmarshal(body, &rq); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`)
		return
	}
	issued := 0
	a.mu.Lock()
	if len(rq.Tools) > 0 {
		a.main++
	}
	if a.tools == nil {
		for _, t := range rq.Tools {
			name := t.Name
			if name == "" {
				name = t.Type
			}
			a.tools = append(a.tools, name)
		}
	}
	for _, it := range rq.Input {
		switch it.Type {
		case "function_call", "custom_tool_call", "local_shell_call":
			issued++
		case "function_call_output", "custom_tool_call_output":
			var out string
			if json.Unmarshal(it.Output, &out) != nil {
				out = string(it.Output)
			}
			// Codex's output is text; a call a hook stopped says so.
			a.results[it.CallID] = ToolResult{ID: it.CallID, Content: out,
				IsError: strings.Contains(out, "blocked by PreToolUse hook")}
		}
	}
	a.mu.Unlock()
	var item map[string]any
	if len(rq.Tools) == 0 || issued >= len(a.calls) {
		item = map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", a.requests),
			"content": []any{map[string]any{"type": "output_text", "text": "Done."}}}
	} else {
		c := a.calls[issued]
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", a.requests), "call_id": callID(issued),
			"name": c.Tool, "arguments": string(c.Input)}
		// An MCP tool, mcp__SERVER__TOOL, is offered as the function TOOL
		// in the namespace mcp__SERVER.
		if rest, ok := strings.CutPrefix(c.Tool, "mcp__"); ok {
			if server, tool, ok := strings.Cut(rest, "__"); ok {
				item["namespace"], item["name"] = "mcp__"+server, tool
			}
		}
	}
	id := fmt.Sprintf("resp_vetoe2e_%d", a.requests)
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if fl != nil {
			fl.Flush()
		}
	}
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens": 20,
		"output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 120}}})
}
