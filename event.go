package veto

import "time"

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
	// EventApproved and EventApprovalRefused are a person's answer to a
	// call a rule asked about (an invocation_denied awaiting approval, of
	// the same call id): the approval lets one call of that run, tool and
	// argument hash through that rule's question, once, until Expires.
	EventApproved        = EventKind("approval_granted")
	EventApprovalRefused = EventKind("approval_refused")
	// EventObservationRefused records an observation veto did not take
	// (Gate.ObserveReported): Actor reported it of call CallID, and
	// Reason says why it was refused. It teaches the run nothing.
	EventObservationRefused = EventKind("observation_refused")
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
	// WouldDeny and WouldReason, on an allow, are the rule in monitor
	// mode that would have refused the call and its reason.
	WouldDeny   string `json:"would_deny,omitempty"`
	WouldReason string `json:"would_reason,omitempty"`

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

	// Approvals: the SHA-256 of the call's canonical arguments (on the
	// denial that asks, and on the answer), when an approval expires, and
	// on a decision that used one, the approval's sequence number.
	ArgsHash string    `json:"args_hash,omitempty"`
	Expires  time.Time `json:"expires,omitzero"`
	Approval uint64    `json:"approval,omitempty"`
	// For, on an answer, is the actor whose call the question was about
	// (Actor is the person who answered): a grant lets only that actor's
	// call through.
	For Actor `json:"for,omitzero"`

	// Prev is the hash of the run's previous event (eventlog.ChainHash of
	// its stored form); the first event's is empty. A store sets it on
	// append.
	Prev string `json:"prev,omitempty"`
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
	Approvals Approvals // nil: the run has no question, answer or suspension
}

// Exists reports whether the run has any events.
func (s RunState) Exists() bool { return s.Next > 1 }
