package wire_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/vetohq/veto/hook/wire"
)

// FuzzParseRequest: what ParseRequest reads, encoding/json reads the
// same; what it refuses the server does not answer (veto-hook then hands
// the event to veto hook). ReadRequest reads it from a stream, a byte at
// a time, and stops at its end.
func FuzzParseRequest(f *testing.F) {
	full := wire.AppendRequest(nil, &wire.Request{V: 1, Build: "go:a/b", Client: "claude-code", State: "/s/veto.db", Approve: true,
		TimeoutMS: 1500, DeadlineNS: 1764000000000000000, ProjectDir: "/p", Env: map[string]string{"HOME": "/h", "USER": "u\"\\\n<é"},
		ClientEnv: map[string]string{"AI_AGENT": "x"}, Event: []byte(`{"tool_input":{"command":"ls\n}"},"a":[1,{"b":"]"}]}`)})
	for _, s := range []string{
		string(full),
		`{"v":1,"event":null}`, `{"v":1,"event":"x\"}"}`, `{"v":1,"event": 12 ,"status":true}`, `{"v":1,"event":[1,2` + "\n" + `,3]}`,
		`{"env":{"A":"1"},"env":{"B":"2"}}`, `{"env":{"A":"1"},"env":null}`, `{"env":{"A":null}}`, `{"V":1}`, `{"v":1.0}`, `{"v":01}`,
		`{"timeout_ms":9223372036854775808}`, `{"v":-0}`, `{"event":{"a":}}`, `{"event":tru}`, `{"event":"\ud800"}`, `{}`, ` { } `,
		`{"build":"a` + "\xff" + `"}`, `{"client":"\u00e9\ud83d\ude00"}`, `{"approve":null,"build":null}`, `{"event":{"a":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := wire.ParseRequest(b)
		if err != nil {
			return
		}
		var want wire.Request
		if jerr := json.Unmarshal(b, &want); jerr != nil {
			t.Fatalf("ParseRequest read %q as %+v, encoding/json refuses it: %v", b, got, jerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseRequest read %q as %+v, encoding/json as %+v", b, got, want)
		}
		stream := append(append([]byte(nil), b...), "\n{\"v\":2}"...)
		again, err := wire.ReadRequest(iotest.OneByteReader(bytes.NewReader(stream)), 1<<20)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("ReadRequest(%q) = %+v, %v; want %+v", stream, again, err, got)
		}
	})
}

// FuzzAppendResponse: the server's answer is the bytes encoding/json
// writes for it, which veto-hook reads back.
func FuzzAppendResponse(f *testing.F) {
	f.Add(false, "go:x", 0, "", "")
	f.Add(true, "", 2, "{\"a\":\"<&>\"}\n", "blocked \u2028 é \xff \x00")
	f.Fuzz(func(t *testing.T, mismatch bool, build string, exit int, stdout, stderr string) {
		rs := wire.Response{Mismatch: mismatch, Build: build, Exit: exit, Stdout: stdout, Stderr: stderr}
		got := wire.AppendResponse(nil, &rs)
		var want bytes.Buffer
		json.NewEncoder(&want).Encode(rs)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("AppendResponse(%+v) = %q, encoding/json writes %q", rs, got, want.Bytes())
		}
		back, err := wire.ParseResponse(got)
		if err != nil {
			t.Fatalf("veto-hook cannot read %q: %v", got, err)
		}
		if utf8.ValidString(build) && utf8.ValidString(stdout) && utf8.ValidString(stderr) && back != rs {
			t.Fatalf("AppendResponse(%+v) = %q, read back as %+v", rs, got, back)
		}
	})
}

// A request is read to its closing brace, not to the end of a line: an
// event may be written over several lines, and veto-hook keeps the
// connection open after it. One longer than the limit, one that is not an
// object, or one with a key or value Request has not, is refused.
func TestReadRequest(t *testing.T) {
	rq := wire.Request{V: 1, Build: "go:b", Client: "claude-code", Env: map[string]string{"HOME": "/h"}, Event: []byte("{\n  \"a\": \"}\",\n  \"b\": [1]\n}")}
	line := wire.AppendRequest(nil, &rq)
	got, err := wire.ReadRequest(iotest.OneByteReader(bytes.NewReader(append(line, "garbage"...))), 1<<20)
	if err != nil || !reflect.DeepEqual(got, rq) {
		t.Fatalf("ReadRequest = %+v, %v; want %+v", got, err, rq)
	}
	if _, err := wire.ReadRequest(strings.NewReader(string(line)), len(line)-2); err == nil {
		t.Fatal("a request over the limit was read")
	}
	for _, bad := range []string{"[1]", `{"v":1`, `{"v":1,"extra":2}`, `{"v":"1"}`, `{"event":{"a":1]}`, `{"env":{"A":1}}`} {
		if got, err := wire.ReadRequest(strings.NewReader(bad), 1<<20); err == nil {
			t.Errorf("ReadRequest(%q) = %+v, want an error", bad, got)
		}
	}
}
