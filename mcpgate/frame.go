package mcpgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// MaxFrame bounds one JSON-RPC frame, either way: a longer one is refused
// whole, never cut (the go-sdk's own bound for a line of stdio).
const MaxFrame = 16 << 20

// MaxDepth bounds how deeply a frame's JSON nests: a deeper one is
// refused whole.
const MaxDepth = 128

// frameKind is what a frame is, read from its top-level members only.
type frameKind int

const (
	kindRequest      frameKind = iota + 1 // method and id
	kindNotification                      // method, no id
	kindResponse                          // id and result or error, no method
	kindBatch                             // a JSON array
)

// frame is one JSON-RPC message as the gateway classifies it: the raw
// bytes of the members it reads, every other byte left as it came.
type frame struct {
	kind   frameKind
	method string
	id     json.RawMessage // as written; nil when absent
	idKey  string          // the id compared: "s:" + the string, or "n:" + the number
	params json.RawMessage
	result json.RawMessage
	err    json.RawMessage
	items  []json.RawMessage // a batch's elements
}

var (
	errFrameInvalid   = errors.New("mcpgate: the frame is not one JSON-RPC message")
	errFrameTooLarge  = errors.New("mcpgate: the frame is over the size bound")
	errFrameTooDeep   = errors.New("mcpgate: the frame nests over the depth bound")
	errFrameDuplicate = errors.New("mcpgate: the frame names a member twice")
)

// parseFrame classifies one frame. It refuses (and the gateway never
// passes on) a frame that is not JSON, is over MaxFrame or MaxDepth,
// names a top-level member twice (which two readers could take
// differently), or is no JSON-RPC message: an object with a method
// (string) or an id and a result or error, or an array of values.
func parseFrame(b []byte) (*frame, error) {
	if len(b) > MaxFrame {
		return nil, errFrameTooLarge
	}
	if !json.Valid(b) {
		return nil, errFrameInvalid
	}
	if depthOver(b, MaxDepth) {
		return nil, errFrameTooDeep
	}
	v := bytes.TrimSpace(b)
	if len(v) > 0 && v[0] == '[' {
		items, err := elements(v)
		if err != nil || len(items) == 0 {
			return nil, errFrameInvalid
		}
		return &frame{kind: kindBatch, items: items}, nil
	}
	m, err := members(v)
	if err != nil {
		return nil, err
	}
	f := &frame{}
	var rawMethod json.RawMessage
	for _, mb := range m {
		switch mb.key {
		case "method":
			rawMethod = mb.value
		case "id":
			f.id = mb.value
		case "params":
			f.params = mb.value
		case "result":
			f.result = mb.value
		case "error":
			f.err = mb.value
		}
	}
	if f.id != nil {
		if f.idKey, err = idKey(f.id); err != nil {
			return nil, err
		}
	}
	switch {
	case rawMethod != nil:
		if err := json.Unmarshal(rawMethod, &f.method); err != nil || f.method == "" || f.result != nil || f.err != nil {
			return nil, errFrameInvalid
		}
		f.kind = kindNotification
		if f.id != nil {
			f.kind = kindRequest
		}
	case f.id != nil && (f.result != nil) != (f.err != nil):
		f.kind = kindResponse
	default:
		return nil, errFrameInvalid
	}
	return f, nil
}

// idKey is how an id is compared: a string by its value, a number by its
// value when it is a whole number a float64 holds exactly (a reader that
// writes 1.0 back as 1 answers the same id), else as written. null and
// every other value is no id the gateway can match.
func idKey(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errFrameInvalid
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errFrameInvalid
		}
		return "s:" + s, nil
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err == nil && f == float64(int64(f)) && f > -(1<<53) && f < 1<<53 {
			return "n:" + strconv.FormatInt(int64(f), 10), nil
		}
		return "n:" + string(raw), nil
	}
	return "", errFrameInvalid
}

// member is one member of an object: its key, unescaped, and its value
// as written.
type member struct {
	key   string
	value json.RawMessage
}

// members splits one JSON object (valid JSON) into its members, refusing
// one that names a key twice, however the key is escaped.
func members(v []byte) ([]member, error) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, errFrameInvalid
	}
	i++
	var out []member
	for {
		i = skipSpace(v, i)
		if i >= len(v) {
			return nil, errFrameInvalid
		}
		if v[i] == '}' {
			return out, nil
		}
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
		if i >= len(v) || v[i] != '"' {
			return nil, errFrameInvalid
		}
		end := skipValue(v, i)
		rawKey := v[i:end]
		var key string
		if bytes.IndexByte(rawKey, '\\') < 0 {
			key = string(rawKey[1 : len(rawKey)-1])
		} else if err := json.Unmarshal(rawKey, &key); err != nil {
			return nil, errFrameInvalid
		}
		i = skipSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			return nil, errFrameInvalid
		}
		i = skipSpace(v, i+1)
		end = skipValue(v, i)
		if end <= i {
			return nil, errFrameInvalid
		}
		for _, m := range out {
			if m.key == key {
				return nil, errFrameDuplicate
			}
		}
		out = append(out, member{key: key, value: v[i:end]})
		i = end
	}
}

// elements splits one JSON array (valid JSON) into its values.
func elements(v []byte) ([]json.RawMessage, error) {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil, errFrameInvalid
	}
	i++
	var out []json.RawMessage
	for {
		i = skipSpace(v, i)
		if i >= len(v) {
			return nil, errFrameInvalid
		}
		if v[i] == ']' {
			return out, nil
		}
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
		end := skipValue(v, i)
		if end <= i {
			return nil, errFrameInvalid
		}
		out = append(out, v[i:end])
		i = end
	}
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value starting at i in valid JSON.
func skipValue(v []byte, i int) int {
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '"':
		for j := i + 1; j < len(v); j++ {
			switch v[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(v)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = skipValue(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	}
	j := i
	for j < len(v) && !(v[j] == ',' || v[j] == '}' || v[j] == ']' || v[j] == ' ' || v[j] == '\t' || v[j] == '\n' || v[j] == '\r') {
		j++
	}
	return j
}

// depthOver reports whether valid JSON nests deeper than max.
func depthOver(v []byte, max int) bool {
	depth := 0
	for j := 0; j < len(v); j++ {
		switch v[j] {
		case '"':
			for j++; j < len(v) && v[j] != '"'; j++ {
				if v[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// callParams is a tools/call's params as the gateway decides them.
type callParams struct {
	name string
	args json.RawMessage // nil when absent
	rest []member        // every other member (_meta, a progress token, …), passed on as written
}

// parseCallParams reads a tools/call's params: an object whose name is a
// string, and no member named twice.
func parseCallParams(raw json.RawMessage) (callParams, error) {
	var p callParams
	m, err := members(raw)
	if err != nil {
		return p, err
	}
	named := false
	for _, mb := range m {
		switch mb.key {
		case "name":
			if err := json.Unmarshal(mb.value, &p.name); err != nil {
				return p, errFrameInvalid
			}
			named = true
		case "arguments":
			p.args = mb.value
		default:
			p.rest = append(p.rest, mb)
		}
	}
	if !named {
		return p, errFrameInvalid
	}
	return p, nil
}

// isErrorResult reports whether a tools/call result says isError: true;
// a result that is no object counts as failed.
func isErrorResult(raw json.RawMessage) bool {
	m, err := members(raw)
	if err != nil {
		return true
	}
	for _, mb := range m {
		if mb.key == "isError" {
			return !bytes.Equal(bytes.TrimSpace(mb.value), []byte("false"))
		}
	}
	return false
}
