package veto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// FieldError is a problem with one field of a call's JSON, named so a
// person can find it. It never quotes the field's value.
type FieldError struct {
	Field   string // dotted path: "run.retries"; empty for the document itself
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return "field " + e.Field + ": " + e.Problem
}

// callJSON is veto's own JSON form of a call, read by `veto check` and
// kept in suspensions.
type callJSON struct {
	CallID    string          `json:"call_id,omitempty"`
	Tool      *string         `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Actor     Actor           `json:"actor,omitzero"`
	Run       *runJSON        `json:"run,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	Workspace string          `json:"workspace,omitempty"`
	Time      *time.Time      `json:"time,omitempty"`
	Rewrites  bool            `json:"rewrites,omitempty"`
	History   *struct {
		Observations []Observation `json:"observations"`
	} `json:"history,omitempty"`
}

type runJSON struct {
	Ref          string   `json:"ref,omitempty"`
	PriorTurns   int      `json:"prior_turns,omitempty"`
	PriorCalls   int      `json:"prior_calls,omitempty"`
	Retries      int      `json:"retries,omitempty"`
	Fresh        *bool    `json:"fresh,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	TrustZone    string   `json:"trust_zone,omitempty"`
}

// MaxCallJSON is the most bytes DecodeCall reads for limits l: room for
// the arguments and everything around them.
func MaxCallJSON(l Limits) int { return 4*l.MaxArgBytes + 1<<20 }

// DecodeCall parses one call in veto's JSON form. Decoding is strict: an
// unknown field, a value of the wrong type, trailing data or a missing tool
// is a *FieldError naming the field. Numbers in args stay json.Number.
//
// A "history" object is the runtime's authoritative initial history for a
// run veto has not seen. When "run" is absent the call is a fresh run of
// its own; when present, "fresh" must say so.
func DecodeCall(b []byte, l Limits) (Call, error) {
	if len(b) > MaxCallJSON(l) {
		return Call{}, &FieldError{Problem: fmt.Sprintf("the call is larger than %d bytes", MaxCallJSON(l))}
	}
	var j callJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&j); err != nil {
		return Call{}, jsonFieldError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Call{}, &FieldError{Problem: "unexpected data after the call object"}
	}
	if j.Tool == nil || *j.Tool == "" {
		return Call{}, &FieldError{Field: "tool", Problem: "required, and must name the tool"}
	}
	c := Call{ID: j.CallID, Tool: *j.Tool, Actor: j.Actor, Cwd: j.Cwd, Workspace: j.Workspace, Rewrites: j.Rewrites}
	if j.Time != nil {
		c.Time = *j.Time
	}
	if len(j.Args) > 0 && !bytes.Equal(bytes.TrimSpace(j.Args), []byte("null")) {
		ad := json.NewDecoder(bytes.NewReader(j.Args))
		ad.UseNumber()
		var args map[string]any
		if err := ad.Decode(&args); err != nil {
			return Call{}, &FieldError{Field: "args", Problem: "must be a JSON object"}
		}
		c.Args = args
	}
	if j.Run == nil {
		c.Run.Fresh = true
	} else {
		r := j.Run
		c.Run = Run{Ref: r.Ref, PriorTurns: r.PriorTurns, PriorCalls: r.PriorCalls, Retries: r.Retries,
			Fresh: r.Fresh != nil && *r.Fresh, AllowedTools: r.AllowedTools, TrustZone: r.TrustZone}
	}
	if j.History != nil {
		c.Run.Initial = append([]Observation{}, j.History.Observations...)
		for i, o := range c.Run.Initial {
			if !o.Outcome.Valid() {
				return Call{}, &FieldError{Field: fmt.Sprintf("history.observations[%d].outcome", i),
					Problem: "must be one of succeeded, failed, denied, cancelled, pending"}
			}
			if o.Tool == "" || o.CallID == "" {
				return Call{}, &FieldError{Field: fmt.Sprintf("history.observations[%d]", i), Problem: "needs a tool and a call_id"}
			}
		}
	}
	return c, nil
}

// jsonFieldError turns an encoding/json error into a FieldError that names
// the field and never quotes the input.
func jsonFieldError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &FieldError{Field: te.Field, Problem: "want " + jsonKind(te.Type.Kind().String()) + ", got " + te.Value}
	case errors.As(err, &se):
		return &FieldError{Problem: fmt.Sprintf("not valid JSON (at byte %d)", se.Offset)}
	case errors.Is(err, io.EOF):
		return &FieldError{Problem: "empty input: want one JSON object"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Problem: "the JSON ends too early"}
	}
	msg := err.Error()
	if i := strings.Index(msg, "unknown field "); i >= 0 {
		name := strings.Trim(msg[i+len("unknown field "):], `"`)
		if len(name) > 64 {
			name = name[:64] + "…"
		}
		return &FieldError{Field: name, Problem: "unknown field"}
	}
	return &FieldError{Problem: "not a valid call object"}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "uint64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a value"
	}
	return k
}

// EncodeCall returns a call in veto's JSON form, with its run's initial
// history when it has one.
func EncodeCall(c *Call) ([]byte, error) {
	fresh := c.Run.Fresh
	j := callJSON{CallID: c.ID, Tool: &c.Tool, Actor: c.Actor, Cwd: c.Cwd, Workspace: c.Workspace, Rewrites: c.Rewrites,
		Run: &runJSON{Ref: c.Run.Ref, PriorTurns: c.Run.PriorTurns, PriorCalls: c.Run.PriorCalls, Retries: c.Run.Retries,
			Fresh: &fresh, AllowedTools: c.Run.AllowedTools, TrustZone: c.Run.TrustZone}}
	if !c.Time.IsZero() {
		t := c.Time
		j.Time = &t
	}
	if c.Args != nil {
		a, err := json.Marshal(c.Args)
		if err != nil {
			return nil, err
		}
		j.Args = a
	}
	if c.Run.Initial != nil {
		j.History = &struct {
			Observations []Observation `json:"observations"`
		}{c.Run.Initial}
	}
	return json.Marshal(j)
}
