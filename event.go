package veto

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EventVersion is the shape version written into every event. An event of
// another version is of an older (or newer) shape: the run's history can no
// longer be proven and loads as incomplete.
const EventVersion = 1

// EventKind names what an event records.
type EventKind string

// The event kinds. Three of them are decisions: every decision is exactly
// one of invocation_allowed, invocation_denied or tool_denied.
const (
	EventRunStarted = EventKind("run_started")
	EventAllowed    = EventKind("invocation_allowed")
	EventDenied     = EventKind("invocation_denied")
	EventToolDenied = EventKind("tool_denied")
	EventObserved   = EventKind("observation")
	EventSuspended  = EventKind("call_suspended")
)

// Event is one append-only record of a run. It holds identifiers, codes
// and outcomes only: never argument text, file content, tool output or
// error text.
type Event struct {
	V    int       `json:"v"`
	Run  string    `json:"run"`
	Seq  uint64    `json:"seq"`
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`

	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Actor  Actor  `json:"actor,omitzero"`

	// Decisions.
	Stage      Stage      `json:"stage,omitempty"`
	Rule       string     `json:"rule,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	ToolDenial ToolDenial `json:"tool_denial,omitempty"`
	Risk       Risk       `json:"risk,omitzero"`
	Target     Target     `json:"target,omitzero"`
	PolicyRev  string     `json:"policy_rev,omitempty"`
	Patched    bool       `json:"patched,omitempty"`

	// Observations.
	Outcome Outcome `json:"outcome,omitempty"`

	// Run start: whether the run's history starts complete.
	Complete *bool `json:"complete,omitempty"`

	// Suspension: what the call waits for.
	Awaiting SuspendKind `json:"awaiting,omitempty"`
}

// EncodeEvent returns the stored form of e.
func EncodeEvent(e Event) ([]byte, error) { return json.Marshal(e) }

// DecodeEvent parses a stored event. It refuses anything it cannot vouch
// for: malformed JSON, another shape version, an unknown kind or outcome.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("decode event: %w", err)
	}
	if e.V != EventVersion {
		return e, fmt.Errorf("event shape version %d, want %d", e.V, EventVersion)
	}
	if err := e.validate(); err != nil {
		return e, err
	}
	return e, nil
}

func (e Event) validate() error {
	if e.Seq == 0 {
		return errors.New("event without a sequence number")
	}
	switch e.Kind {
	case EventRunStarted:
		if e.Complete == nil {
			return errors.New("run_started without its complete bit")
		}
	case EventAllowed, EventDenied, EventToolDenied, EventSuspended:
		if e.CallID == "" {
			return fmt.Errorf("%s without a call id", e.Kind)
		}
	case EventObserved:
		if e.CallID == "" || !e.Outcome.Valid() {
			return errors.New("observation without a call id or with an unknown outcome")
		}
	default:
		return fmt.Errorf("unknown event kind %q", e.Kind)
	}
	return nil
}

// Projection is the state of one run rebuilt from its events: the next
// sequence number and the history. Stores keep one per run so a decision
// never scans the log.
type Projection struct {
	Run     string
	Next    uint64 // the sequence number the next appended event must carry
	Started bool   // a run_started event opened the run

	startComplete bool
	damaged       bool
	obs           []Observation
	index         map[string]int // call id → position in obs
}

// NewProjection returns the projection of a run with no events.
func NewProjection(run string) *Projection {
	return &Projection{Run: run, Next: 1, index: map[string]int{}}
}

// Exists reports whether any event of the run was seen.
func (p *Projection) Exists() bool { return p.Next > 1 || p.damaged }

// Damage marks the history unprovable. It cannot be undone.
func (p *Projection) Damage() { p.damaged = true }

// Complete reports whether the history is proven complete.
func (p *Projection) Complete() bool { return p.Started && p.startComplete && !p.damaged }

// History returns the run's history. It shares the projection's
// observations, so it must be treated as read-only.
func (p *Projection) History() History {
	return History{Observations: p.obs[:len(p.obs):len(p.obs)], Complete: p.Complete()}
}

// Apply folds one event into the projection. Anything out of order or out
// of shape damages the history rather than being trusted.
func (p *Projection) Apply(e Event) {
	if e.Seq != p.Next {
		p.damaged = true
	}
	if e.Seq >= p.Next {
		p.Next = e.Seq + 1
	}
	if e.V != EventVersion || e.validate() != nil {
		p.damaged = true
		return
	}
	switch e.Kind {
	case EventRunStarted:
		if p.Started || e.Seq != 1 {
			p.damaged = true
			return
		}
		p.Started, p.startComplete = true, *e.Complete
	case EventAllowed:
		p.observe(e, Pending)
	case EventDenied, EventToolDenied:
		p.observe(e, Denied)
	case EventObserved:
		p.observe(e, e.Outcome)
	}
	if !p.Started {
		p.damaged = true // events of a run that never started prove nothing
	}
}

func (p *Projection) observe(e Event, o Outcome) {
	if i, ok := p.index[e.CallID]; ok {
		p.obs[i].Outcome = o
		if e.Target.Known() {
			p.obs[i].Target = e.Target
		}
		return
	}
	p.index[e.CallID] = len(p.obs)
	p.obs = append(p.obs, Observation{Seq: e.Seq, CallID: e.CallID, Tool: e.Tool, Outcome: o, Target: e.Target})
}

// Clone returns an independent copy.
func (p *Projection) Clone() *Projection {
	c := *p
	c.obs = append([]Observation(nil), p.obs...)
	c.index = make(map[string]int, len(p.index))
	for k, v := range p.index {
		c.index[k] = v
	}
	return &c
}
