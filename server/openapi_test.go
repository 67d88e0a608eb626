package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vetohq/veto/server"
)

// openAPI is the part of an OpenAPI 3.1 document the test reads.
type openAPI struct {
	OpenAPI    string                                  `json:"openapi"`
	Paths      map[string]map[string]operation         `json:"paths"`
	Components struct{ Schemas map[string]jsonSchema } `json:"components"`
}

type operation struct {
	Security  []map[string][]string `json:"security"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema jsonSchema `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// jsonSchema is the subset of JSON Schema the document uses.
type jsonSchema struct {
	Ref        string                `json:"$ref"`
	Type       string                `json:"type"`
	Enum       []any                 `json:"enum"`
	Const      any                   `json:"const"`
	Required   []string              `json:"required"`
	Properties map[string]jsonSchema `json:"properties"`
	Items      *jsonSchema           `json:"items"`
	AllOf      []jsonSchema          `json:"allOf"`
}

func loadOpenAPI(t *testing.T) *openAPI {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPI
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	return &doc
}

// validate checks v against s; the error names the JSON path.
func (doc *openAPI) validate(s jsonSchema, v any, at string) error {
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
		ref, ok := doc.Components.Schemas[name]
		if !ok {
			return fmt.Errorf("%s: $ref %s is not defined", at, s.Ref)
		}
		return doc.validate(ref, v, at)
	}
	for _, sub := range s.AllOf {
		if err := doc.validate(sub, v, at); err != nil {
			return err
		}
	}
	if s.Const != nil && fmt.Sprint(s.Const) != fmt.Sprint(v) {
		return fmt.Errorf("%s: %v, want %v", at, v, s.Const)
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, s.Enum)
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", at, v)
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return fmt.Errorf("%s: required %q missing", at, r)
			}
		}
		for k, sub := range s.Properties {
			if pv, ok := m[k]; ok {
				if err := doc.validate(sub, pv, at+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an array", at, v)
		}
		if s.Items != nil {
			for i, e := range a {
				if err := doc.validate(*s.Items, e, at+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %T, want a string", at, v)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: %v, want an integer", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T, want a boolean", at, v)
		}
	}
	return nil
}

// TestOpenAPIDocumentsEveryRoute: the document and the handler's routes
// are the same set, and only the probes go without a token.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	var documented []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			open := op.Security != nil && len(op.Security) == 0
			probe := path == "/healthz" || path == "/readyz" || path == "/metrics"
			if open != probe {
				t.Errorf("%s %s: documented without a token = %v", method, path, open)
			}
		}
	}
	routes := server.Routes()
	slices.Sort(documented)
	slices.Sort(routes)
	if !slices.Equal(documented, routes) {
		t.Fatalf("documented %v\nserved     %v", documented, routes)
	}
}

// TestOpenAPIMatchesLiveAnswers sends requests to the live handlers: each
// answer's status is one the document gives for its operation, and its
// body is valid by the documented schema.
func TestOpenAPIMatchesLiveAnswers(t *testing.T) {
	doc := loadOpenAPI(t)
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	read := s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
	cred := s.call("c2", "r1", "Read", map[string]any{"file_path": filepath.Join(w.home, ".ssh", "id_rsa")})
	observed := s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
	observed["outcome"] = "succeeded"
	bash := s.call("c3", "r1", "Bash", map[string]any{"command": "ls"})

	// A suspension to resume.
	_, sus := s.post("/v1/suspend", tok, map[string]any{"call": bash, "kind": "approval"})
	// Calls waiting for input: c4 answered on the page, c5 not.
	other := s.token("agent:other")
	hook := s.tokenAs("agent:claude-code", server.RoleAgent)
	input := func(id string) map[string]any {
		return map[string]any{"call": s.call(id, "r1", "Bash", map[string]any{"command": "ls"}), "kind": "input", "fields": []string{"command"}}
	}
	s.post("/v1/suspend", tok, input("c4"))
	s.post("/v1/suspend", tok, input("c5"))
	giveInput(t, s, tok, "r1", "c4", map[string]string{"command": "ls -l"})
	cases := []struct {
		method, path, route, token string
		body                       any
		status                     int
	}{
		{"POST", "/v1/decide", "/v1/decide", tok, read, 200},
		{"POST", "/v1/decide", "/v1/decide", tok, cred, 200},
		{"POST", "/v1/decide", "/v1/decide", tok, "{", 400},
		{"POST", "/v1/decide", "/v1/decide", "", read, 401},
		{"POST", "/v1/decide", "/v1/decide", tok, map[string]any{"tool": "Read", "actor": map[string]any{"id": "bob"}}, 403},
		{"POST", "/v1/observe", "/v1/observe", tok, observed, 200},
		{"POST", "/v1/observe", "/v1/observe", tok, read, 400},
		{"POST", "/v1/runs", "/v1/runs", tok, map[string]any{"ref": "r9", "fresh": true}, 200},
		{"POST", "/v1/runs", "/v1/runs", tok, map[string]any{"fresh": true}, 400},
		{"GET", "/v1/runs/r1/events", "/v1/runs/{run}/events", tok, nil, 200},
		{"GET", "/v1/runs/none/events", "/v1/runs/{run}/events", tok, nil, 404},
		{"POST", "/v1/suspend", "/v1/suspend", tok, map[string]any{"call": bash, "kind": "approval"}, 200},
		{"POST", "/v1/suspend", "/v1/suspend", tok, map[string]any{"kind": "approval"}, 400},
		{"POST", "/v1/suspend", "/v1/suspend", tok, input("c6"), 200},
		{"POST", "/v1/suspend", "/v1/suspend", other, input("c5"), 409},
		{"POST", "/v1/resume", "/v1/resume", tok, map[string]any{"suspension": sus["suspension"], "approved": true}, 200},
		{"GET", "/v1/inputs/r1/c4", "/v1/inputs/{run}/{call}", tok, nil, 200},
		{"GET", "/v1/inputs/r1/c4", "/v1/inputs/{run}/{call}", tok, nil, 404},
		{"GET", "/v1/inputs/r1/c5", "/v1/inputs/{run}/{call}", other, nil, 403},
		{"GET", "/v1/inputs/r1/c5?wait=2m", "/v1/inputs/{run}/{call}", tok, nil, 400},
		{"GET", "/v1/inputs/r1/c5", "/v1/inputs/{run}/{call}", "", nil, 401},
		{"POST", "/v1/resume", "/v1/resume", tok, map[string]any{"suspension": sus["suspension"]}, 400},
		{"GET", "/v1/policy", "/v1/policy", tok, nil, 200},
		{"GET", "/v1/policy", "/v1/policy", "", nil, 401},
		{"GET", "/v1/events?verdict=x", "/v1/events", tok, nil, 400},
		{"POST", "/v1/hooks/claude-code", "/v1/hooks/claude-code", "", "{}", 200},
		{"POST", "/v1/hooks/claude-code", "/v1/hooks/claude-code", hook, `{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/hostname"},"tool_use_id":"t"}`, 200},
		{"POST", "/v1/hooks/gemini-cli/command", "/v1/hooks/{client}/command", hook, `{"session_id":"s","cwd":"/","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"absolute_path":"/etc/hostname"}}`, 200},
		{"POST", "/v1/hooks/gemini-cli/command", "/v1/hooks/{client}/command", "", "{}", 200},
		{"POST", "/v1/hooks/nosuch/command", "/v1/hooks/{client}/command", hook, "{}", 404},
		// What a token's role does not open, and a place out of bounds.
		{"GET", "/v1/events", "/v1/events", hook, nil, 403},
		{"GET", "/v1/runs/r1/events", "/v1/runs/{run}/events", hook, nil, 403},
		{"GET", "/v1/approvals", "/v1/approvals", hook, nil, 403},
		{"GET", "/v1/policy", "/v1/policy", hook, nil, 403},
		{"POST", "/v1/suspend", "/v1/suspend", hook, map[string]any{"call": bash, "kind": "approval"}, 403},
		{"POST", "/v1/resume", "/v1/resume", hook, map[string]any{"suspension": sus["suspension"], "approved": true}, 403},
		{"GET", "/v1/inputs/r1/c5", "/v1/inputs/{run}/{call}", hook, nil, 403},
		{"POST", "/v1/approvals/r1/c1", "/v1/approvals/{run}/{call}", hook, map[string]any{"approve": true}, 403},
		{"POST", "/v1/decide", "/v1/decide", tok, map[string]any{"tool": "Read", "workspace": "/", "args": map[string]any{"file_path": "/etc/hostname"}}, 403},
		{"POST", "/v1/observe", "/v1/observe", tok, map[string]any{"call_id": "c9", "run": map[string]any{"ref": "r1"}, "tool": "Read", "cwd": "/", "outcome": "succeeded"}, 403},
		{"POST", "/v1/suspend", "/v1/suspend", tok, map[string]any{"call": map[string]any{"tool": "Read", "cwd": "/"}, "kind": "approval"}, 403},
		{"POST", "/v1/hooks/claude-code", "/v1/hooks/claude-code", tok, `{}`, 200},
		{"GET", "/healthz", "/healthz", "", nil, 200},
		{"GET", "/readyz", "/readyz", "", nil, 200},
		{"GET", "/metrics", "/metrics", "", nil, 200},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+strconv.Itoa(c.status), func(t *testing.T) {
			var rd io.Reader
			switch b := c.body.(type) {
			case nil:
			case string:
				rd = strings.NewReader(b)
			default:
				j, _ := json.Marshal(b)
				rd = strings.NewReader(string(j))
			}
			req, _ := http.NewRequest(c.method, s.url+c.path, rd)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, raw)
			}
			op, ok := doc.Paths[c.route][strings.ToLower(c.method)]
			if !ok {
				t.Fatalf("%s %s is not documented", c.method, c.route)
			}
			r, ok := op.Responses[strconv.Itoa(resp.StatusCode)]
			if !ok {
				t.Fatalf("status %d is not documented for %s %s", resp.StatusCode, c.method, c.route)
			}
			ctype, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
			media, ok := r.Content[ctype]
			if !ok {
				t.Fatalf("content type %s is not documented for %d", ctype, resp.StatusCode)
			}
			if ctype != "application/json" {
				return
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("not JSON: %s", raw)
			}
			if err := doc.validate(media.Schema, v, "body"); err != nil {
				t.Fatalf("%v\n%s", err, raw)
			}
		})
	}
}
