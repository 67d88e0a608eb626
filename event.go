package veto

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	EventProbe      = EventKind("probe")
	// EventEgressAllowed adds Host to the run's egress allow-list: the
	// list is a projection of these events, so a replay sees at each call
	// the list that was in force then.
	EventEgressAllowed = EventKind("egress_allowed")
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

	// Probe: what a decision saw of the world. Observation: what a
	// successful call taught the run (knowledge).
	Fact  *FileFact  `json:"fact,omitempty"`
	Files []FileFact `json:"files,omitempty"`

	// Egress allow: the allow-list entry added (a host, "*.domain",
	// "host:port" or a CIDR). Written by a person, never by an agent.
	Host string `json:"host,omitempty"`

	// Prev is the hash of the run's previous event (ChainHash of its stored
	// form); the first event's is empty. A store sets it on append.
	Prev string `json:"prev,omitempty"`
}

// ChainHash is the hash an event's successor carries as Prev: hex SHA-256
// of the event's stored form.
func ChainHash(stored []byte) string {
	sum := sha256.Sum256(stored)
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:])
}

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
		if len(e.Files) > 0 && e.Outcome != Succeeded {
			return errors.New("knowledge from a call that did not succeed")
		}
		for _, f := range e.Files {
			if f.Path == "" {
				return errors.New("knowledge without a path")
			}
		}
	case EventEgressAllowed:
		if e.Host == "" || len(e.Host) > 260 {
			return errors.New("egress_allowed without a host")
		}
	case EventProbe:
		if e.CallID == "" || e.Fact == nil || e.Fact.Path == "" {
			return errors.New("probe without a call id or a fact")
		}
	default:
		return fmt.Errorf("unknown event kind %q", e.Kind)
	}
	return nil
}

// RunState is a run as a decision sees it: the sequence number the next
// event must carry, the history, and what the run knows. History is a
// snapshot; Knowledge may answer from a later state, which is harmless:
// a decision made on anything that changed after its load loses the
// sequence race and is decided again.
type RunState struct {
	Run       string
	Next      uint64
	History   History
	Knowledge Knowledge // nil means the run knows nothing
	Tally     Tally     // nil: rules add up History themselves (HistoryTally)
}

// Exists reports whether the run has any events.
func (s RunState) Exists() bool { return s.Next > 1 }

// Projection folds a run's events into its state. Stores keep one per run
// so a decision never scans the log; State is a constant-time snapshot.
type Projection struct {
	run           string
	next          uint64
	started       bool
	startComplete bool
	damaged       bool
	hist          History
	index         map[string]int      // call id → position in hist
	files         map[string]FileFact // path → what the last successful call taught
	egress        []string            // allow-list entries added by events, in order
	tally         tally               // the history added up (see Tally)
}

// NewProjection returns the projection of a run with no events.
func NewProjection(run string) *Projection {
	return &Projection{run: run, next: 1, index: map[string]int{}}
}

// Next returns the sequence number the next event must carry.
func (p *Projection) Next() uint64 { return p.next }

// State returns a snapshot of the run.
func (p *Projection) State() RunState {
	h := p.hist
	h.complete = p.started && p.startComplete && !p.damaged
	return RunState{Run: p.run, Next: p.next, History: h}
}

// KnownFile returns what the run last learned of path. It reads the
// projection's current state: a store must hold its lock around it.
func (p *Projection) KnownFile(path string) (FileFact, bool) {
	f, ok := p.files[path]
	return f, ok
}

// KnownFiles returns the paths the run has knowledge of, sorted. Like
// KnownFile, it reads the current state under the store's lock.
func (p *Projection) KnownFiles() []string {
	out := make([]string, 0, len(p.files))
	for f := range p.files {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Egress returns the allow-list entries the run's events added, in order.
// Like KnownFile, it reads the current state under the store's lock.
func (p *Projection) Egress() []string { return slices.Clone(p.egress) }

// Skip records that stored bytes that could not be decoded hold the next
// place in the log: the history can no longer be proven.
func (p *Projection) Skip() {
	p.damaged = true
	p.next++
}

// Apply folds one event into the projection. Anything out of order or out
// of shape damages the history rather than being trusted; damage is never
// undone.
func (p *Projection) Apply(e Event) {
	if e.Seq != p.next {
		p.damaged = true
	}
	if e.Seq >= p.next {
		p.next = e.Seq + 1
	}
	if e.V != EventVersion || e.validate() != nil {
		p.damaged = true
		return
	}
	switch e.Kind {
	case EventRunStarted:
		if p.started || e.Seq != 1 {
			p.damaged = true
			return
		}
		p.started, p.startComplete = true, *e.Complete
	case EventEgressAllowed:
		p.egress = append(p.egress[:len(p.egress):len(p.egress)], e.Host)
	case EventAllowed, EventDenied, EventToolDenied, EventObserved:
		o, _ := ObservedOutcome(e)
		p.observe(e, o)
		for _, f := range e.Files {
			if p.files == nil {
				p.files = map[string]FileFact{}
			}
			p.files[f.Path] = f
		}
	}
	if !p.started {
		p.damaged = true // events of a run that never started prove nothing
	}
}

// ObservedOutcome is the outcome an event gives its call in the history:
// pending for an allowed call, denied for a refused one, the reported
// outcome for an observation. ok is false for events that observe nothing.
func ObservedOutcome(e Event) (o Outcome, ok bool) {
	switch e.Kind {
	case EventAllowed:
		return Pending, true
	case EventDenied, EventToolDenied:
		return Denied, true
	case EventObserved:
		return e.Outcome, true
	}
	return "", false
}

func (p *Projection) observe(e Event, o Outcome) {
	if i, ok := p.index[e.CallID]; ok {
		old := p.hist.At(i)
		now := old
		now.Outcome = o
		if e.Target.Known() {
			now.Target = e.Target
		}
		p.hist = p.hist.replaced(i, now)
		p.tally.change(p.hist, i, old, true, now)
		return
	}
	i := p.hist.Len()
	now := Observation{Seq: e.Seq, CallID: e.CallID, Tool: e.Tool, Outcome: o, Target: e.Target}
	p.index[e.CallID] = i
	p.hist = p.hist.appended(now)
	p.tally.change(p.hist, i, Observation{}, false, now)
}
