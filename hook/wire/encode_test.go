package wire_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vetohq/veto/hook/wire"
)

// AppendRequest writes what encoding/json reads back as the same request,
// and what json.Marshal would have written, byte for byte but for the
// event, which is passed as it came (json.Marshal compacts it and escapes
// <, > and &).
func FuzzAppendRequest(f *testing.F) {
	f.Add("go:abc/def", "claude-code", "/tmp/veto.db", "/home/u", "", "", int64(1500), int64(1764000000000000000), true, false,
		[]byte(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`))
	f.Add("", "x\"y\\z", "a\nb\tc\b\f\rd\x00e\x1f", "é\u2028\u2029<>&", "\xff\xfe", "\xed\xa0\x80", int64(0), int64(0), false, true, []byte(` [1, 2 ,"x"] `))
	f.Fuzz(func(t *testing.T, build, client, state, home, pd, attended string, timeout, deadline int64, approve, status bool, event []byte) {
		if !json.Valid(event) {
			return // Ask refuses such an event before it writes anything
		}
		rq := wire.Request{V: 1, Build: build, Client: client, State: state, Approve: approve, TimeoutMS: timeout, DeadlineNS: deadline,
			ProjectDir: pd, Env: map[string]string{"HOME": home, "USER": client, "TMPDIR": ""}, Event: event, Status: status}
		if attended != "" {
			rq.ClientEnv = map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": attended, "AI_AGENT": home}
		}
		got := wire.AppendRequest(nil, &rq)
		if bytes.Count(got, []byte("\n")) != 1+bytes.Count(event, []byte("\n")) || got[len(got)-1] != '\n' {
			t.Fatalf("not one line: %q", got)
		}
		var back, want wire.Request
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q does not decode: %v", got, err)
		}
		marshalled, err := json.Marshal(rq)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(marshalled, &want); err != nil {
			t.Fatal(err)
		}
		// json.Marshal compacts a raw event and escapes <, > and & in it
		// (HTMLEscape); AppendRequest passes it as it came.
		var compact, escaped bytes.Buffer
		json.Compact(&compact, back.Event)
		json.HTMLEscape(&escaped, compact.Bytes())
		if !bytes.Equal(escaped.Bytes(), want.Event) {
			t.Fatalf("event %q, want %q", back.Event, want.Event)
		}
		back.Event, want.Event = nil, nil
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("decoded %+v\nwant    %+v", back, want)
		}
		// Byte for byte what json.Marshal writes, the event as it writes it.
		rq.Event = escaped.Bytes()
		if g := wire.AppendRequest(nil, &rq); !bytes.Equal(bytes.TrimSuffix(g, []byte("\n")), marshalled) {
			t.Fatalf("AppendRequest %s\njson.Marshal  %s", g, marshalled)
		}
	})
}
