package eventlog

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/vetohq/veto"
)

// EncodeEvent returns the stored form of e: one JSON object, fields in a
// fixed order, empty fields left out. It is written by hand because it runs
// on every decision; DecodeEvent reads it back with encoding/json, and a
// fuzz test holds the two together.
func EncodeEvent(e veto.Event) ([]byte, error) {
	b := make([]byte, 0, 384) // decision events measured 270–290 bytes: room for longer ids, one allocation
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = appendField(b, "run", e.Run, true)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = appendField(b, "kind", string(e.Kind), true)
	b = append(b, `,"time":"`...)
	b = appendTime(b, e.Time)
	b = append(b, '"')
	b = appendField(b, "call_id", e.CallID, false)
	b = appendField(b, "tool", e.Tool, false)
	b = appendActor(b, "actor", e.Actor)
	b = appendField(b, "stage", string(e.Stage), false)
	b = appendField(b, "rule", e.Rule, false)
	b = appendField(b, "reason", e.Reason, false)
	b = appendField(b, "tool_denial", string(e.ToolDenial), false)
	if e.Risk != veto.RiskNone {
		txt, err := e.Risk.MarshalText()
		if err != nil {
			return nil, err
		}
		b = appendField(b, "risk", string(txt), true)
	}
	if e.Target != (veto.Target{}) {
		b = append(b, `,"target":{`...)
		n := len(b)
		b = appendField(b, "kind", string(e.Target.Kind), false)
		b = appendField(b, "id", e.Target.ID, false)
		if len(b) > n && b[n] == ',' {
			b = append(b[:n], b[n+1:]...)
		}
		b = append(b, '}')
	}
	b = appendField(b, "policy_rev", e.PolicyRev, false)
	if e.Patched {
		b = append(b, `,"patched":true`...)
	}
	b = appendField(b, "would_deny", e.WouldDeny, false)
	b = appendField(b, "would_reason", e.WouldReason, false)
	b = appendField(b, "outcome", string(e.Outcome), false)
	if e.Complete != nil {
		b = append(b, `,"complete":`...)
		b = strconv.AppendBool(b, *e.Complete)
	}
	b = appendField(b, "awaiting", string(e.Awaiting), false)
	b = appendField(b, "host", e.Host, false)
	if e.Fact != nil {
		b = append(b, `,"fact":`...)
		b = appendFact(b, e.Fact)
	}
	if len(e.Files) > 0 {
		b = append(b, `,"files":[`...)
		for i := range e.Files {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFact(b, &e.Files[i])
		}
		b = append(b, ']')
	}
	b = appendField(b, "args_hash", e.ArgsHash, false)
	if !e.Expires.IsZero() {
		b = append(b, `,"expires":"`...)
		b = appendTime(b, e.Expires)
		b = append(b, '"')
	}
	if e.Approval != 0 {
		b = append(b, `,"approval":`...)
		b = strconv.AppendUint(b, e.Approval, 10)
	}
	b = appendActor(b, "for", e.For)
	b = appendField(b, "prev", e.Prev, false)
	return append(b, '}'), nil
}

// appendActor appends a as the object field name, unless a is zero.
func appendActor(b []byte, name string, a veto.Actor) []byte {
	if a == (veto.Actor{}) {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, `":{`...)
	n := len(b)
	b = appendField(b, "kind", a.Kind, false)
	b = appendField(b, "id", a.ID, false)
	b = appendField(b, "agent", a.Agent, false)
	if len(b) > n && b[n] == ',' {
		b = append(b[:n], b[n+1:]...)
	}
	return append(b, '}')
}

func appendFact(b []byte, f *veto.FileFact) []byte {
	b = append(b, `{"path":`...)
	b = appendJSONString(b, f.Path)
	b = append(b, `,"exists":`...)
	b = strconv.AppendBool(b, f.Exists)
	if f.Dir {
		b = append(b, `,"dir":true`...)
	}
	if f.Size != 0 {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
	}
	if !f.ModTime.IsZero() {
		b = append(b, `,"mtime":"`...)
		b = appendTime(b, f.ModTime)
		b = append(b, '"')
	}
	b = appendField(b, "sha256", f.Hash, false)
	if f.Stamp != (veto.FileStamp{}) {
		b = append(b, `,"stamp":{"dev":`...)
		b = strconv.AppendUint(b, f.Stamp.Dev, 10)
		b = append(b, `,"ino":`...)
		b = strconv.AppendUint(b, f.Stamp.Ino, 10)
		b = append(b, `,"ctime_ns":`...)
		b = strconv.AppendInt(b, f.Stamp.Change, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendTime appends t as time.RFC3339Nano does. A UTC time, which is
// every time an event holds, takes a short path that formats only that.
func appendTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if t.Location() != time.UTC || year < 0 || year > 9999 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	hour, minute, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [9]byte
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z')
}

// appendField appends ,"name":"value"; an empty value is left out unless
// always is set.
func appendField(b []byte, name, value string, always bool) []byte {
	if value == "" && !always {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, value)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, as encoding/json would
// without HTML escaping: invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
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
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
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
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
