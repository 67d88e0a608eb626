package wire

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// The server's half of the exchange, without encoding/json's reflection:
// on a server woken for each call, decoding the request by reflection
// cost more than a tenth of its work (perf, 2026-12-04). veto-hook links
// none of it.

var errRequest = errors.New("wire: not a request this server reads")

// ReadRequest reads one request from r: a JSON object, read up to its
// closing brace and no further (veto-hook sends nothing after it and
// waits for the answer), of at most max bytes, and parsed as
// ParseRequest parses it.
func ReadRequest(r io.Reader, max int) (Request, error) {
	buf := make([]byte, 0, 4096)
	var s objectScan
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= max {
				return Request{}, errRequest
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), max)])
		if n > 0 {
			if end := s.feed(buf[len(buf) : len(buf)+n]); end >= 0 {
				return ParseRequest(buf[:len(buf)+end])
			} else if s.bad {
				return Request{}, errRequest
			}
			buf = buf[:len(buf)+n]
		}
		if err != nil {
			return Request{}, err
		}
		if len(buf) >= max {
			return Request{}, errRequest
		}
	}
}

// objectScan finds where a JSON object ends, fed its bytes as they come:
// the depth of brackets outside strings. It does not validate; the
// parser does.
type objectScan struct {
	started, str, esc, bad bool
	depth                  int
}

// feed returns the index in b just past the object's closing brace, or
// -1 when it has not come yet (or bad is set: no object starts here).
func (s *objectScan) feed(b []byte) int {
	for i, c := range b {
		switch {
		case !s.started:
			switch c {
			case ' ', '\t', '\n', '\r':
			case '{':
				s.started, s.depth = true, 1
			default:
				s.bad = true
				return -1
			}
		case s.str:
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.str = false
			}
		case c == '"':
			s.str = true
		case c == '{' || c == '[':
			s.depth++
		case c == '}' || c == ']':
			s.depth--
			if s.depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// ParseRequest reads one request, a JSON object of Request's fields, as
// encoding/json would (FuzzParseRequest holds the two together). It is
// stricter: a key Request does not have, in any spelling, a value of
// another type, a null inside env or client_env, or anything but white
// space after the object is an error (the server then does not answer,
// and veto-hook hands the event to veto hook).
func ParseRequest(b []byte) (Request, error) {
	var rq Request
	p := parser{b: b}
	ok := p.object(func(key string) bool {
		if key == "event" {
			// json.RawMessage: the value's bytes as they are, null too.
			v, ok := p.rawValue()
			rq.Event = append(json.RawMessage(nil), v...)
			return ok
		}
		if !p.lit("null") {
			return p.field(&rq, key)
		}
		switch key {
		case "env":
			rq.Env = nil
		case "client_env":
			rq.ClientEnv = nil
		case "v", "build", "client", "state", "approve", "timeout_ms", "deadline_ns", "project_dir", "status":
			// encoding/json leaves the field as it was
		default:
			return false
		}
		return true
	})
	if !ok || p.end() != nil {
		return rq, errRequest
	}
	return rq, nil
}

// field reads the value of one of Request's fields but event.
func (p *parser) field(rq *Request, key string) bool {
	switch key {
	case "v":
		n, ok := p.int()
		rq.V = n
		return ok
	case "timeout_ms":
		n, ok := p.int64()
		rq.TimeoutMS = n
		return ok
	case "deadline_ns":
		n, ok := p.int64()
		rq.DeadlineNS = n
		return ok
	case "approve":
		v, ok := p.bool()
		rq.Approve = v
		return ok
	case "status":
		v, ok := p.bool()
		rq.Status = v
		return ok
	case "build", "client", "state", "project_dir":
		s, ok := p.str()
		switch key {
		case "build":
			rq.Build = s
		case "client":
			rq.Client = s
		case "state":
			rq.State = s
		default:
			rq.ProjectDir = s
		}
		return ok
	case "env", "client_env":
		m := map[string]string{}
		if key == "env" && rq.Env != nil {
			m = rq.Env // encoding/json adds to a map it has
		} else if key == "client_env" && rq.ClientEnv != nil {
			m = rq.ClientEnv
		}
		if !p.strings(m) {
			return false
		}
		if key == "env" {
			rq.Env = m
		} else {
			rq.ClientEnv = m
		}
		return true
	}
	return false
}

// strings reads a JSON object of strings into m.
func (p *parser) strings(m map[string]string) bool {
	return p.object(func(k string) bool {
		v, ok := p.str()
		m[k] = v
		return ok
	})
}

// rawValue reads one JSON value and returns its bytes, checked valid by
// encoding/json's scanner (json.Valid, which reflects nothing).
func (p *parser) rawValue() ([]byte, bool) {
	start := p.i
	if p.i >= len(p.b) {
		return nil, false
	}
	switch p.b[p.i] {
	case '{', '[':
		var s objectScan
		s.started, s.depth = true, 1
		end := s.feed(p.b[p.i+1:])
		if end < 0 {
			return nil, false
		}
		p.i += 1 + end
	case '"':
		esc := false
		for p.i++; ; p.i++ {
			if p.i >= len(p.b) {
				return nil, false
			}
			switch c := p.b[p.i]; {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				p.i++
				return p.b[start:p.i], json.Valid(p.b[start:p.i])
			}
		}
	default:
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			}
			p.i++
		}
	done:
	}
	v := p.b[start:p.i]
	return v, json.Valid(v)
}

// AppendResponse appends rs as one line of JSON, the bytes encoding/json
// writes for it (FuzzAppendResponse holds the two together).
func AppendResponse(b []byte, rs *Response) []byte {
	b = append(b, '{')
	if rs.Mismatch {
		b = append(b, `"mismatch":true,`...)
	}
	if rs.Build != "" {
		b = append(b, `"build":`...)
		b = appendString(b, rs.Build)
		b = append(b, ',')
	}
	b = append(b, `"exit":`...)
	b = strconv.AppendInt(b, int64(rs.Exit), 10)
	b = append(b, `,"stdout":`...)
	b = appendString(b, rs.Stdout)
	b = append(b, `,"stderr":`...)
	b = appendString(b, rs.Stderr)
	return append(b, "}\n"...)
}
