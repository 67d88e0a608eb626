package veto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

func FuzzDecodeCall(f *testing.F) {
	for _, s := range []string{
		`{"tool":"Read","args":{"file_path":"README.md"}}`,
		`{"tool":"Bash","args":{"command":"ls","timeout":1e3},"run":{"ref":"r","retries":1},"history":{"observations":[{"call_id":"a","tool":"Read","outcome":"failed"}]}}`,
		`{"tool":"x","args":[1,2]}`,
		`{"tool":"x","actor":{"kind":"user","id":"u","agent":"a"},"cwd":"/","time":"2026-01-01T00:00:00Z"}`,
		`{"tool":""}`, `{}`, `[]`, `null`, `{"tool":"x"} {}`, `{"tool":"x","args":{"a":{"b":{"c":[[[[]]]]}}}}`,
	} {
		f.Add([]byte(s))
	}
	limits := veto.DefaultLimits
	limits.MaxDepth = 6
	fx := newFixture(f, veto.Config{Limits: limits})
	f.Fuzz(func(t *testing.T, b []byte) {
		c1, err1 := veto.DecodeCall(b, limits)
		c2, err2 := veto.DecodeCall(b, limits)
		if (err1 == nil) != (err2 == nil) {
			t.Fatal("decoding is not deterministic")
		}
		if err1 != nil {
			if _, ok := err1.(*veto.FieldError); !ok {
				t.Fatalf("error %T is not a FieldError", err1)
			}
			return
		}
		if c1.Tool == "" {
			t.Fatal("decoded a call without a tool")
		}
		e1, _ := veto.EncodeCall(&c1)
		e2, _ := veto.EncodeCall(&c2)
		if string(e1) != string(e2) {
			t.Fatal("decoding is not deterministic")
		}
		// Round trip: the encoded form decodes to the same call.
		c3, err := veto.DecodeCall(e1, limits)
		if err != nil {
			t.Fatalf("re-decoding an encoded call: %v", err)
		}
		if e3, _ := veto.EncodeCall(&c3); string(e3) != string(e1) {
			t.Fatalf("round trip changed the call:\n%s\n%s", e1, e3)
		}
		// Deciding it never panics, and twice gives the same answer.
		c1.ID, c2.ID = "fz", "fz"
		c1.Run.Ref, c2.Run.Ref = "", ""
		v1, v2 := fx.g.Decide(ctx, &c1), fx.g.Decide(ctx, &c2)
		if v1.Allowed != v2.Allowed || v1.Reason != v2.Reason || v1.Stage != v2.Stage {
			t.Fatalf("same call, two verdicts: %+v / %+v", v1, v2)
		}
	})
}

// FuzzBounds builds argument trees of fuzzed shape and checks the verdict
// against an independent count: past any bound, deny bounds_exceeded;
// within all of them, allow.
func FuzzBounds(f *testing.F) {
	f.Add(uint8(1), uint16(10), uint8(2), uint16(3))
	f.Add(uint8(4), uint16(64), uint8(4), uint16(8))
	f.Add(uint8(5), uint16(65), uint8(1), uint16(1))
	f.Add(uint8(9), uint16(0), uint8(0), uint16(70))
	f.Add(uint8(2), uint16(40), uint8(20), uint16(2))
	limits := veto.Limits{MaxArgBytes: 512, MaxDepth: 5, MaxString: 64, MaxNodes: 30, MaxName: 256, MaxPath: 4096, MaxHistory: 1 << 20}
	fx := newFixture(f, veto.Config{Limits: limits})
	f.Fuzz(func(t *testing.T, depth uint8, strLen uint16, width uint8, keyLen uint16) {
		depth, width = depth%12, width%40
		strLen, keyLen = strLen%200, keyLen%200+1
		key := strings.Repeat("k", int(keyLen))
		leaf := make([]any, width)
		for i := range leaf {
			leaf[i] = strings.Repeat("s", int(strLen))
		}
		var v any = leaf
		for range depth {
			v = map[string]any{key: v}
		}
		args := map[string]any{"a": v}

		// The independent count: the argument object is depth 1.
		maxDepth := 1 + int(depth) + 1 // args, depth maps, the leaf array
		nodes := 1 + int(depth) + 1 + int(width)
		bytes := 1 + int(depth)*int(keyLen) + int(width)*int(strLen)
		longest := 1 // the key "a"
		if depth > 0 {
			longest = max(longest, int(keyLen))
		}
		if width > 0 {
			longest = max(longest, int(strLen))
		}
		over := maxDepth > limits.MaxDepth || nodes > limits.MaxNodes || bytes > limits.MaxArgBytes || longest > limits.MaxString

		c := call("mcp__x__y", args)
		got := fx.g.Decide(ctx, c)
		if over != (got.Reason == veto.ReasonBoundsExceeded) || over == got.Allowed {
			b, _ := json.Marshal(args)
			t.Fatalf("depth %d nodes %d bytes %d longest %d over=%v; verdict allowed=%v reason %s (%s) args %.200s",
				maxDepth, nodes, bytes, longest, over, got.Allowed, got.Reason, got.Message, b)
		}
	})
}
