package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/clients"
)

func TestObject(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want map[string]any
		err  string
	}{
		{``, nil, ""},
		{` null `, nil, ""},
		{`{"command":"ls","n":3}`, map[string]any{"command": "ls", "n": json.Number("3")}, ""},
		{`{}`, map[string]any{}, ""},
		{`"{\"file_path\":\"a.go\",\"limit\":1.5}"`, map[string]any{"file_path": "a.go", "limit": json.Number("1.5")}, ""},
		{`" {\"a\":{\"b\":[1,\"x\"]}} "`, map[string]any{"a": map[string]any{"b": []any{json.Number("1"), "x"}}}, ""},
		{`"null"`, nil, ""},
		{`[1,2]`, nil, "tool_input does not hold a JSON object"},
		{`7`, nil, "tool_input does not hold a JSON object"},
		{`true`, nil, "tool_input does not hold a JSON object"},
		{`"ls -la"`, nil, "tool_input does not hold a JSON object"},
		{`"{\"a\":"`, nil, "tool_input does not hold a JSON object"},
		{`"[\"ls\"]"`, nil, "tool_input does not hold a JSON object"},
		{`"{\"command\":\"ls\"} {\"command\":\"pwd\"}"`, nil, "tool_input holds more than one JSON object"},
		{`"{\"command\":\"ls\"} x"`, nil, "tool_input holds more than one JSON object"},
		{`"\"{}\""`, nil, "tool_input does not hold a JSON object"},
	} {
		got, err := Object(json.RawMessage(tc.raw), "tool_input")
		if msg := errString(err); msg != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Object(%s) = %#v, %q; want %#v, %q", tc.raw, got, msg, tc.want, tc.err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnmarshal(t *testing.T) {
	var v struct {
		A string `json:"a"`
	}
	for in, want := range map[string]string{
		``:                "empty input: want one hook event as JSON",
		" \n\t":           "empty input: want one hook event as JSON",
		`{"a":1}`:         "the hook event is not valid JSON of the expected shape",
		`{"a":"x"} {}`:    "the hook event is not valid JSON of the expected shape",
		`{"a":"x"`:        "the hook event is not valid JSON of the expected shape",
		`{"a":"secret"`:   "the hook event is not valid JSON of the expected shape",
		`{"a":"x"}`:       "",
		`{"a":"x","b":2}`: "",
	} {
		err := Unmarshal([]byte(in), &v)
		if got := errString(err); got != want {
			t.Errorf("Unmarshal(%q): %q, want %q", in, got, want)
		}
		if strings.Contains(errString(err), "secret") {
			t.Errorf("the error quotes the input: %v", err)
		}
	}
}

// The Claude-shaped decoding names the actor it is given and the project
// the client reports, and nothing of Claude Code's own.
func TestHookEventActor(t *testing.T) {
	h, err := DecodeHook([]byte(`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t","agent_type":"Plan"}`))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := h.Event("some-client", "")
	if err != nil {
		t.Fatal(err)
	}
	want := veto.Call{ID: "t", Tool: "Bash", Args: map[string]any{"command": "ls"}, Cwd: "/w",
		Actor: veto.Actor{Kind: "agent", ID: "some-client", Agent: "Plan"}, Run: veto.Run{Ref: "s"}}
	if ev.Kind != Decide || ev.Session != "s" || ev.ProjectDir != "" || !reflect.DeepEqual(ev.Call, want) {
		t.Fatalf("%+v", ev)
	}
}

func TestWriteClipsAndFills(t *testing.T) {
	r := clients.Reply{Exit: 2, Stdout: map[string]any{"a": clients.ReasonHere, "b": []any{clients.ReasonHere, 1}}, Stderr: true}
	got := Write(r, strings.Repeat("x", MaxReason+1))
	clipped := strings.Repeat("x", MaxReason) + "…"
	if got.Exit != 2 || got.Stderr != clipped+"\n" || got.Stdout != `{"a":"`+clipped+`","b":["`+clipped+`",1]}`+"\n" {
		t.Fatalf("%+v", got)
	}
	if got := Write(clients.Reply{}, "why"); got != (Reply{}) {
		t.Fatalf("an empty reply wrote %+v", got)
	}
	if Clip("short") != "short" {
		t.Fatal("Clip changed a short reason")
	}
}
