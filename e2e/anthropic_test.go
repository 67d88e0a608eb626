package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// anthropic is a scripted model endpoint speaking the Anthropic Messages
// API: on each request of the agent's main loop (one that offers tools) it
// asks for the next call of its script, one tool_use a turn, streamed as
// the real API streams it; once the script is done it answers with text
// and end_turn. Every tool_result the client sends back is recorded by its
// tool_use id. Side requests (titles, summaries, quota checks) get a short
// text answer. Every request body is searched for the canaries.
type anthropic struct {
	script
	edited map[int]bool // the calls whose Edit is done (under script.mu)
}

// script is what every scripted endpoint keeps: the calls it asks for,
// the canaries it looks for, and what it saw.
type script struct {
	calls    []Call
	canaries map[string]string // name → text that must never reach the model

	mu       sync.Mutex
	results  map[string]ToolResult
	leaks    map[string]bool
	requests int
	main     int
	unknown  []string
	tools    []string // the tools the client offered, in its first main request
	schemas  []string // and their arguments (Anthropic's endpoint)
}

func newScript(calls []Call, canaries map[string]string) script {
	return script{calls: calls, canaries: canaries, results: map[string]ToolResult{}, leaks: map[string]bool{}}
}

// read reads a request's body, counts the request and looks for the
// canaries in it.
func (s *script) read(r *http.Request) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	for name, c := range s.canaries {
		if strings.Contains(string(body), c) {
			s.leaks[name] = true
		}
	}
	return body
}

// notScripted records a request the script has no answer for and
// answers it 404 with the API's own error body.
func (s *script) notScripted(w http.ResponseWriter, r *http.Request, errorBody string) {
	s.mu.Lock()
	s.unknown = append(s.unknown, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, errorBody)
}

// ToolResult is what the client sent back for one call.
type ToolResult struct {
	ID      string `json:"id"`
	IsError bool   `json:"is_error"`
	Content string `json:"content"`
}

func newAnthropic(calls []Call, canaries map[string]string) *anthropic {
	return &anthropic{script: newScript(calls, canaries)}
}

// callID is the tool_use id of the script's call i.
func callID(i int) string { return fmt.Sprintf("toolu_vetoe2e_%02d", i+1) }

type msgRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
	Text      string          `json:"text"`
}

func blocks(raw json.RawMessage) []block {
	var bs []block
	if json.Unmarshal(raw, &bs) == nil {
		return bs
	}
	return nil
}

// text is a tool_result's content: a string, or text blocks.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (a *anthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := a.read(r)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		a.notScripted(w, r, `{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}`)
		return
	}
	var rq msgRequest
	if err := json.Unmarshal(body, &rq); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	if rq.Model == "" {
		rq.Model = "claude-e2e"
	}
	if len(rq.Tools) == 0 {
		a.reply(w, rq, nil, "ok")
		return
	}
	// The main loop: the calls already asked for are the tool_use blocks
	// in the conversation; a retried request asks for the same call again.
	issued := 0
	a.mu.Lock()
	a.main++
	if a.tools == nil {
		for _, raw := range rq.Tools {
			var tool struct {
				Name   string `json:"name"`
				Schema struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				} `json:"input_schema"`
			}
			json.Unmarshal(raw, &tool)
			a.tools = append(a.tools, tool.Name)
			// Its arguments, the required ones first, for the log.
			var args []string
			for _, k := range tool.Schema.Required {
				args = append(args, k+"*")
			}
			for k := range tool.Schema.Properties {
				if !slices.Contains(tool.Schema.Required, k) {
					args = append(args, k)
				}
			}
			a.schemas = append(a.schemas, tool.Name+"("+strings.Join(args, " ")+")")
		}
	}
	for _, m := range rq.Messages {
		for _, b := range blocks(m.Content) {
			switch {
			case m.Role == "assistant" && b.Type == "tool_use":
				issued++
			case m.Role == "user" && b.Type == "tool_result":
				a.results[b.ToolUseID] = ToolResult{ID: b.ToolUseID, IsError: b.IsError, Content: text(b.Content)}
			}
		}
	}
	a.mu.Unlock()
	if issued >= len(a.calls) {
		a.reply(w, rq, nil, "Done.")
		return
	}
	a.edit(issued)
	// The call, and the calls after it marked With, in one message.
	var tus []toolUse
	for i := issued; i < len(a.calls) && (i == issued || a.calls[i].With); i++ {
		tus = append(tus, toolUse{ID: callID(i), Name: a.calls[i].Tool, Input: a.calls[i].Input})
	}
	a.reply(w, rq, tus, "")
}

// edit writes call i's Edit files, once, as someone outside the session
// would, and waits for the client to see them.
func (a *anthropic) edit(i int) {
	a.mu.Lock()
	todo := len(a.calls[i].Edit) > 0 && !a.edited[i]
	if todo {
		if a.edited == nil {
			a.edited = map[int]bool{}
		}
		a.edited[i] = true
	}
	a.mu.Unlock()
	if !todo {
		return
	}
	for path, content := range a.calls[i].Edit {
		os.WriteFile(path, []byte(content), 0o644)
	}
	time.Sleep(editSettle)
}

type toolUse struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// reply answers one request with tool_use blocks (tus) or a text,
// streamed as server-sent events when the request asks for a stream.
func (a *anthropic) reply(w http.ResponseWriter, rq msgRequest, tus []toolUse, txt string) {
	id := fmt.Sprintf("msg_vetoe2e_%d", a.requests)
	stop := "end_turn"
	if len(tus) > 0 {
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !rq.Stream {
		content := []any{map[string]any{"type": "text", "text": txt}}
		if len(tus) > 0 {
			content = nil
			for _, tu := range tus {
				content = append(content, map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": tu.Input})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": rq.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message",
		"role": "assistant", "model": rq.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	for i, tu := range tus {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}})
		// The input in two pieces, as the API sends it.
		in := string(tu.Input)
		half := len(in) / 2
		for _, part := range []string{in[:half], in[half:]} {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if len(tus) == 0 {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": txt}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 20}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// report is what the endpoint saw, for the test outside the namespace.
type report struct {
	Requests int                   `json:"requests"`
	Main     int                   `json:"main"`
	Unknown  []string              `json:"unknown"`
	Results  map[string]ToolResult `json:"results"`
	Leaks    []string              `json:"leaks"`
	Tools    []string              `json:"tools"`
	Schemas  []string              `json:"schemas,omitempty"`
}

func (s *script) report() report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := report{Requests: s.requests, Main: s.main, Unknown: s.unknown, Results: s.results, Tools: s.tools, Schemas: s.schemas}
	for name := range s.leaks {
		r.Leaks = append(r.Leaks, name)
	}
	return r
}
