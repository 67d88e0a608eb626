package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// gemini is a scripted model endpoint speaking the Gemini API
// (generateContent, streamGenerateContent with alt=sse, countTokens), as
// Gemini CLI calls it through GOOGLE_GEMINI_BASE_URL: on each request that
// offers function declarations it asks for the script's next call as one
// functionCall; once done, text. The functionResponses the client sends
// back are recorded in order, as the calls' results.
type gemini struct{ script }

func newGemini(calls []Call, canaries map[string]string) *gemini {
	return &gemini{newScript(calls, canaries)}
}

type gemRequest struct {
	Contents []struct {
		Role  string    `json:"role"`
		Parts []gemPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type gemPart struct {
	Text         string `json:"text"`
	FunctionCall *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string                     `json:"id"`
		Name     string                     `json:"name"`
		Response map[string]json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

func (g *gemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := g.read(r)
	path := r.URL.Path
	model, method, _ := strings.Cut(path[strings.LastIndexByte(path, '/')+1:], ":")
	if r.Method != http.MethodPost || !strings.Contains(path, "/models/") {
		method = ""
	}
	switch method {
	case "countTokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":100}`)
		return
	case "generateContent", "streamGenerateContent":
	default:
		g.notScripted(w, r, `{"error":{"code":404,"message":"not scripted","status":"NOT_FOUND"}}`)
		return
	}
	stream := method == "streamGenerateContent"
	var rq gemRequest
	if err := json.Unmarshal(body, &rq); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`)
		return
	}
	var declared []string
	for _, t := range rq.Tools {
		for _, f := range t.FunctionDeclarations {
			declared = append(declared, f.Name)
		}
	}
	if len(declared) == 0 {
		// A side request (the next speaker, a routing choice, a summary):
		// a JSON text that answers the ones Gemini CLI parses.
		g.reply(w, stream, model, nil, `{"reasoning":"scripted","next_speaker":"user","model_choice":"flash"}`)
		return
	}
	issued, answered := 0, 0
	g.mu.Lock()
	g.main++
	if g.tools == nil {
		g.tools = declared
	}
	for _, c := range rq.Contents {
		for _, p := range c.Parts {
			switch {
			case c.Role == "model" && p.FunctionCall != nil:
				issued++
			case p.FunctionResponse != nil:
				// The results in the order of the calls.
				_, isErr := p.FunctionResponse.Response["error"]
				content, _ := json.Marshal(p.FunctionResponse.Response)
				var out string
				if json.Unmarshal(p.FunctionResponse.Response["output"], &out) == nil && !isErr {
					content = []byte(out)
				}
				id := callID(answered)
				g.results[id] = ToolResult{ID: id, IsError: isErr, Content: string(content)}
				answered++
			}
		}
	}
	g.mu.Unlock()
	if issued >= len(g.calls) {
		g.reply(w, stream, model, nil, "Done.")
		return
	}
	c := g.calls[issued]
	g.reply(w, stream, model, &toolUse{ID: callID(issued), Name: c.Tool, Input: c.Input}, "")
}

func (g *gemini) reply(w http.ResponseWriter, stream bool, model string, call *toolUse, text string) {
	part := map[string]any{"text": text}
	if call != nil {
		part = map[string]any{"functionCall": map[string]any{"id": call.ID, "name": call.Name, "args": call.Input}}
	}
	b, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  model,
		"responseId":    fmt.Sprintf("vetoe2e-%d", g.requests),
	})
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}
