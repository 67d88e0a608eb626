package wire

import (
	"sort"
	"strconv"
	"unicode/utf8"
)

// AppendRequest appends rq as one line of JSON, the bytes encoding/json
// decodes back to rq (FuzzAppendRequest holds the two together), without
// its reflection: veto-hook pays for every instruction at every call, and
// encoding/json's first use of a type costs more than the exchange. The
// event is written as it is: the caller has proved it valid JSON
// (json.Valid), so it cannot end the request early or add fields to it.
func AppendRequest(b []byte, rq *Request) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(rq.V), 10)
	b = append(b, `,"build":`...)
	b = appendString(b, rq.Build)
	b = append(b, `,"client":`...)
	b = appendString(b, rq.Client)
	b = append(b, `,"state":`...)
	b = appendString(b, rq.State)
	b = append(b, `,"approve":`...)
	b = strconv.AppendBool(b, rq.Approve)
	b = append(b, `,"timeout_ms":`...)
	b = strconv.AppendInt(b, rq.TimeoutMS, 10)
	if rq.DeadlineNS != 0 {
		b = append(b, `,"deadline_ns":`...)
		b = strconv.AppendInt(b, rq.DeadlineNS, 10)
	}
	b = append(b, `,"project_dir":`...)
	b = appendString(b, rq.ProjectDir)
	b = append(b, `,"env":`...)
	b = appendMap(b, rq.Env)
	if len(rq.ClientEnv) > 0 {
		b = append(b, `,"client_env":`...)
		b = appendMap(b, rq.ClientEnv)
	}
	b = append(b, `,"event":`...)
	if rq.Event == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, rq.Event...)
	}
	if rq.Status {
		b = append(b, `,"status":true`...)
	}
	return append(b, "}\n"...)
}

// appendMap appends m as a JSON object, its keys sorted as encoding/json
// sorts them; a nil map is null, as encoding/json writes it.
func appendMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string as encoding/json writes it:
// quotes, backslashes, control characters, <, >, &, U+2028 and U+2029
// escaped, and each byte that is not valid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
