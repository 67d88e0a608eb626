package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/vetohq/veto/hook/wire"
)

// ParseResponse reads every answer the server writes, and whatever it
// reads, encoding/json reads the same.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		`{"build":"go:x","exit":0,"stdout":"","stderr":""}` + "\n",
		`{"mismatch":true,"build":"go:y","exit":0,"stdout":"","stderr":""}`,
		`{"exit":2,"stdout":"{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\"}}\n","stderr":"blocked \u003c\u0026\u003e é \ud83d\ude00 \ud800 \/"}`,
		` { "exit" : -1 , "stdout" : null } `, `{"exit":1e2}`, `{"exit":01}`, `{"Exit":1}`, `{"extra":[1]}`, `{}`, `{"stdout":"a` + "\xff" + `b"}`,
		`{"exit":99999999999999999999}`, `{"stderr":"\ud83d\u0041"}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"exit":3,"stdout":"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := wire.ParseResponse(b)
		if err != nil {
			return // stricter than encoding/json: handed elsewhere
		}
		var want wire.Response
		if jerr := json.Unmarshal(b, &want); jerr != nil {
			t.Fatalf("ParseResponse read %q as %+v, encoding/json refuses it: %v", b, got, jerr)
		}
		if got != want {
			t.Fatalf("ParseResponse read %q as %+v, encoding/json as %+v", b, got, want)
		}
		// What the server writes of it, it reads back.
		out, _ := json.Marshal(want)
		if again, err := wire.ParseResponse(out); err != nil || again != want {
			t.Fatalf("ParseResponse(%s) = %+v, %v; want %+v", out, again, err, want)
		}
	})
}
