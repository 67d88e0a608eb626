package veto

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Limits bound what a decision will look at. Past a bound the call is
// denied bounds_exceeded; nothing is ever truncated.
type Limits struct {
	MaxArgBytes int // total bytes of argument keys and string and number values
	MaxDepth    int // nesting of objects and arrays; the argument object itself is depth 1
	MaxString   int // one string value or key
	MaxNodes    int // values in the argument tree
	MaxName     int // tool name, call id, run ref, actor fields, target id
	MaxPath     int // cwd and workspace
	MaxHistory  int // observations a run may hold, this call included
}

// DefaultLimits are the bounds used when Config.Limits is zero.
var DefaultLimits = Limits{
	MaxArgBytes: 1 << 20,
	MaxDepth:    32,
	MaxString:   512 << 10,
	MaxNodes:    50_000,
	MaxName:     256,
	MaxPath:     4096,
	MaxHistory:  1 << 20,
}

// boundsError names which bound a call exceeded, in words that hold no
// argument text.
type boundsError struct{ what string }

func (e *boundsError) Error() string { return e.what }

func exceeded(format string, a ...any) error { return &boundsError{fmt.Sprintf(format, a...)} }

// checkCall checks every bound that does not need the run's history.
func (l *Limits) checkCall(c *Call) error {
	if c.Tool == "" {
		return exceeded("the call names no tool")
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{
		{"tool name", c.Tool, l.MaxName},
		{"call id", c.ID, l.MaxName},
		{"run reference", c.Run.Ref, l.MaxName},
		{"actor kind", c.Actor.Kind, l.MaxName},
		{"actor id", c.Actor.ID, l.MaxName},
		{"actor agent", c.Actor.Agent, l.MaxName},
		{"trust zone", c.Run.TrustZone, l.MaxName},
		{"cwd", c.Cwd, l.MaxPath},
		{"workspace", c.Workspace, l.MaxPath},
	} {
		if len(f.v) > f.max {
			return exceeded("%s longer than %d bytes", f.name, f.max)
		}
		if f.max == l.MaxName && !ValidName(f.v) {
			return exceeded("%s holds a control character", f.name)
		}
	}
	if !validTime(c.Time) {
		return exceeded("the call's time is not between the years 1678 and 2261")
	}
	if c.Run.PriorTurns < 0 || c.Run.PriorCalls < 0 || c.Run.Retries < 0 {
		return exceeded("negative seed counter")
	}
	if len(c.Run.AllowedTools) > l.MaxNodes {
		return exceeded("run allow-list longer than %d entries", l.MaxNodes)
	}
	if len(c.Run.Initial) > l.MaxHistory {
		return exceeded("initial history longer than %d observations", l.MaxHistory)
	}
	w := walker{l: l}
	return w.walk(c.Args, 1)
}

// ValidName reports whether s may be a name veto records and shows: a
// tool name, a call id, a run reference, an actor. A name is UTF-8 without
// control characters (C0, DEL, C1), line or paragraph separators, or
// bidirectional controls: a name is written into server-sent event
// frames, terminal prompts, log lines and pages, and one of these would let
// it start a frame or a line of its own, or redraw what a person reads.
func ValidName(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u2028' || r == '\u2029' ||
			(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' ||
			r == '\u061c' {
			return false
		}
		i += n
	}
	return true
}

// validTime reports whether t may be a call's time: zero (the gate's
// clock) or one whose Unix nanoseconds fit the int64 the stores keep
// (the years 1678 to 2261, a second short of each end).
func validTime(t time.Time) bool {
	const maxSec = math.MaxInt64 / int64(time.Second)
	sec := t.Unix()
	return t.IsZero() || (sec > -maxSec && sec < maxSec)
}

type walker struct {
	l     *Limits
	bytes int
	nodes int
}

func (w *walker) add(n int) error {
	w.bytes += n
	if w.bytes > w.l.MaxArgBytes {
		return exceeded("arguments larger than %d bytes", w.l.MaxArgBytes)
	}
	return nil
}

func (w *walker) str(s string) error {
	if len(s) > w.l.MaxString {
		return exceeded("an argument string longer than %d bytes", w.l.MaxString)
	}
	return w.add(len(s))
}

func (w *walker) walk(v any, depth int) error {
	w.nodes++
	if w.nodes > w.l.MaxNodes {
		return exceeded("more than %d argument values", w.l.MaxNodes)
	}
	switch v := v.(type) {
	case nil, bool:
		return w.add(1)
	case string:
		return w.str(v)
	case json.Number:
		return w.str(string(v))
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return w.add(8)
	case map[string]any:
		if depth > w.l.MaxDepth {
			return exceeded("arguments nested deeper than %d", w.l.MaxDepth)
		}
		for k, e := range v {
			if err := w.str(k); err != nil {
				return err
			}
			if err := w.walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if depth > w.l.MaxDepth {
			return exceeded("arguments nested deeper than %d", w.l.MaxDepth)
		}
		for _, e := range v {
			if err := w.walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	default:
		return exceeded("an argument of unsupported type %T", v)
	}
}

// deepCopy copies a JSON-shaped value checked by walk.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopy(e)
		}
		return s
	default:
		return v
	}
}
