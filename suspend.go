package veto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// SuspendKind is what a suspended call waits for.
type SuspendKind string

// What a call can wait for.
const (
	AwaitApproval = SuspendKind("approval")
	AwaitInput    = SuspendKind("input")
)

// Suspension is a call parked until a person approves it or fills in its
// input fields, with the run's history at that moment. It holds the call's
// arguments, so it belongs in the runtime's own state, never in the event
// log; EncodeSuspension gives its stored form.
type Suspension struct {
	Kind    SuspendKind
	Call    Call
	Fields  []string // input fields a person fills in (AwaitInput)
	History History
}

// Resumed is the outcome of a resume. There is no "ask again": a call
// denied at resume is a failed tool call.
type Resumed struct {
	Verdict Verdict
	// Execute reports whether the call may run now, with Verdict.Args when
	// set and Call.Args otherwise. When false, the runtime reports the call
	// as a failed tool result carrying Verdict.Message.
	Execute bool
	Call    Call // the call as decided, after human input was applied
}

// Suspend parks a call. It records a call_suspended event (no arguments)
// and returns the suspension for the runtime to keep. For AwaitInput,
// fields name the arguments a person will supply; when empty, the tool
// descriptor's input parameters are used.
func (g *Gate) Suspend(ctx context.Context, c *Call, kind SuspendKind, fields []string) (*Suspension, error) {
	if kind != AwaitApproval && kind != AwaitInput {
		return nil, fmt.Errorf("veto: suspend: unknown kind %q", kind)
	}
	s := &Suspension{Kind: kind, Call: *c}
	if s.Call.ID == "" {
		s.Call.ID = newCallID()
	}
	if s.Call.Time.IsZero() {
		s.Call.Time = g.now()
	}
	if err := g.limits.checkCall(&s.Call); err != nil {
		return nil, fmt.Errorf("veto: suspend: %w", err)
	}
	if s.Call.Run.Ref == "" {
		return nil, errors.New("veto: suspend: the call has no run")
	}
	s.Call.Args, _ = deepCopy(c.Args).(map[string]any)
	if kind == AwaitInput {
		if len(fields) == 0 {
			fields = g.tools[c.Tool].ParamsWith(RoleInput)
		}
		if len(fields) == 0 {
			return nil, errors.New("veto: suspend: a call awaiting input must declare its input fields")
		}
		s.Fields = slices.Clone(fields)
		slices.Sort(s.Fields)
	}
	err := g.appendRetrying(ctx, s.Call.Run.Ref, func(ctx context.Context, p *RunState) []Event {
		var evs []Event
		if !p.Exists() {
			evs = g.startEvents(&s.Call.Run, p, s.Call.Time)
		}
		s.History = p.History
		return append(evs, Event{Kind: EventSuspended, CallID: s.Call.ID, Tool: s.Call.Tool, Actor: s.Call.Actor, Awaiting: kind})
	})
	if err != nil {
		return nil, fmt.Errorf("veto: suspend: %w", err)
	}
	return s, nil
}

// ResumeApproval decides an approved call again, with the live policy,
// immediately before it executes. A person's approval is not permission.
func (g *Gate) ResumeApproval(ctx context.Context, s *Suspension) Resumed {
	c := resumedCall(s)
	if s.Kind != AwaitApproval {
		return g.resumed(ctx, c, &decideOpts{stage: StageResume, reason: ReasonInputRejected,
			message: "This call was waiting for input, not for approval."})
	}
	return g.resumed(ctx, c, nil)
}

// ResumeInput replaces the call's declared input fields with the values a
// person supplied, then decides. Every declared field must be supplied and
// no other; otherwise the call is denied input_rejected.
func (g *Gate) ResumeInput(ctx context.Context, s *Suspension, human map[string]any) Resumed {
	c := resumedCall(s)
	bad := s.Kind != AwaitInput || len(human) != len(s.Fields)
	for k := range human {
		if !slices.Contains(s.Fields, k) {
			bad = true
		}
	}
	if bad {
		return g.resumed(ctx, c, &decideOpts{stage: StageResume, reason: ReasonInputRejected,
			message: "The input supplied does not match the fields this call was waiting for."})
	}
	args, _ := deepCopy(c.Args).(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	for k, v := range human {
		// The model's value leaves in every spelling a tool could read as
		// the field ("Answer" for "answer"), so the person's is the one
		// the tool gets.
		for a := range args {
			if a != k && strings.EqualFold(a, k) {
				delete(args, a)
			}
		}
		args[k] = deepCopy(v)
	}
	c.Args = args
	return g.resumed(ctx, c, nil)
}

func (g *Gate) resumed(ctx context.Context, c Call, opts *decideOpts) Resumed {
	v := g.decide(ctx, &c, opts)
	return Resumed{Verdict: v, Execute: v.Allowed, Call: c}
}

// resumedCall is the suspended call with its history carried forward: the
// store's record wins when it has the run; otherwise the suspension's
// history is authoritative only if it was complete.
func resumedCall(s *Suspension) Call {
	c := s.Call
	c.Time = time.Time{}
	c.Run.Fresh = false
	c.Run.Initial = nil
	if s.History.Complete() {
		c.Run.Initial = s.History.Observations()
	}
	return c
}

// SuspensionVersion is the shape version of an encoded suspension.
const SuspensionVersion = 1

type suspensionJSON struct {
	V      int             `json:"v"`
	Kind   SuspendKind     `json:"kind"`
	Call   json.RawMessage `json:"call"`
	Fields []string        `json:"fields,omitempty"`
	// History is kept raw so that a damaged history spoils only itself.
	History json.RawMessage `json:"history"`
}

// EncodeSuspension returns the stored form of s.
func EncodeSuspension(s *Suspension) ([]byte, error) {
	call, err := EncodeCall(&s.Call)
	if err != nil {
		return nil, err
	}
	hist, err := EncodeHistory(s.History)
	if err != nil {
		return nil, err
	}
	return json.Marshal(suspensionJSON{V: SuspensionVersion, Kind: s.Kind, Call: call, Fields: s.Fields, History: hist})
}

// DecodeSuspension parses a stored suspension. A suspension whose call
// cannot be read is an error (the runtime fails the call). A damaged or
// older history inside it is not an error: it loads as incomplete.
func DecodeSuspension(b []byte, l Limits) (*Suspension, error) {
	var j suspensionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("veto: decode suspension: %w", err)
	}
	if j.Kind != AwaitApproval && j.Kind != AwaitInput {
		return nil, fmt.Errorf("veto: decode suspension: unknown kind %q", j.Kind)
	}
	c, err := DecodeCall(j.Call, l)
	if err != nil {
		return nil, fmt.Errorf("veto: decode suspension: %w", err)
	}
	s := &Suspension{Kind: j.Kind, Call: c, Fields: j.Fields, History: DecodeHistory(j.History)}
	if j.V != SuspensionVersion {
		s.History = History{}
	}
	return s, nil
}

// HistoryVersion is the shape version of an encoded history.
const HistoryVersion = 1

type historyJSON struct {
	V            int           `json:"v"`
	Complete     *bool         `json:"complete"`
	Observations []Observation `json:"observations"`
}

// EncodeHistory returns the stored form of h.
func EncodeHistory(h History) ([]byte, error) {
	complete := h.Complete()
	return json.Marshal(historyJSON{V: HistoryVersion, Complete: &complete, Observations: h.Observations()})
}

// DecodeHistory parses a stored history. It never fails: a history that is
// damaged, of another shape version, or inconsistent (an unknown outcome, a
// missing tool or call id, sequence numbers out of order) loads as
// incomplete, with the observations that could be read.
func DecodeHistory(b []byte) History {
	var j historyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return History{}
	}
	complete := j.V == HistoryVersion && j.Complete != nil && *j.Complete
	var last uint64
	var obs []Observation
	seen := map[string]bool{}
	for _, o := range j.Observations {
		if o.validate() != nil || o.CallID == "" || seen[o.CallID] || (o.Seq != 0 && o.Seq <= last) {
			complete = false
			continue
		}
		seen[o.CallID] = true
		if o.Seq != 0 {
			last = o.Seq
		}
		obs = append(obs, o)
	}
	return NewHistory(obs, complete)
}
