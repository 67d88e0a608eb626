package veto

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Call is one proposed tool invocation, with its final arguments.
type Call struct {
	ID        string         // the client's id for this call (tool_use_id); generated when empty
	Tool      string         // tool name as the client offers it: "Bash", "mcp__github__create_issue"
	Args      map[string]any // final arguments, as decoded from JSON (numbers as json.Number)
	Actor     Actor
	Run       Run
	Cwd       string    // working directory the call runs in
	Workspace string    // the project directory the client reports, if any
	Time      time.Time // when the call was proposed; the gate's clock when zero
	// Rewrites says the client runs the arguments a verdict patched in
	// place of the model's (Claude Code's updatedInput, veto mcp, a caller
	// of veto serve that says so). A patch the call is only safe with, as
	// running a shell command under veto exec, is offered only then.
	Rewrites bool
}

// Actor is who initiates a call and the identity it acts as.
type Actor struct {
	Kind  string `json:"kind,omitempty"`  // initiator: "user", "schedule", "agent"
	ID    string `json:"id,omitempty"`    // the identity the call acts as
	Agent string `json:"agent,omitempty"` // the (sub)agent proposing the call, if any
}

// Run is one agent session as the call sees it.
type Run struct {
	Ref string `json:"ref"`

	// Seed counters: how much happened before veto saw this run.
	PriorTurns int `json:"prior_turns,omitempty"`
	PriorCalls int `json:"prior_calls,omitempty"`
	Retries    int `json:"retries,omitempty"`

	// Fresh reports that the runtime assembled the run from nothing. A fresh
	// run with all seed counters zero starts with a complete, empty history.
	Fresh bool `json:"fresh,omitempty"`

	// Initial is the authoritative history the runtime supplies for a run that
	// is not fresh (resumed, retried, continued). Nil means none was supplied.
	Initial []Observation `json:"-"`

	// AllowedTools is the run's tool allow-list; nil means no list.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// TrustZone is the zone of the model provider driving the run.
	TrustZone string `json:"trust_zone,omitempty"`
}

// seeded reports whether any seed counter is nonzero.
func (r Run) seeded() bool { return r.PriorTurns != 0 || r.PriorCalls != 0 || r.Retries != 0 }

// Target is the resource a call acts on, as a resolver reports it: a kind
// and an identifier, never content or credentials. The zero Target is
// unknown.
type Target struct {
	Kind TargetKind `json:"kind,omitempty"`
	ID   string     `json:"id,omitempty"`
}

// TargetKind names what sort of resource a target is. A resolver may name
// kinds of its own; the empty kind is an unknown target.
type TargetKind string

// The target kinds veto's own resolvers report and its rules count.
const (
	// TargetFile is a file or directory; its ID is the canonical path.
	TargetFile TargetKind = "file"
)

// Known reports whether a resolver claimed the call.
func (t Target) Known() bool { return t.Kind != "" }

func (t Target) String() string {
	if !t.Known() {
		return "unknown"
	}
	return string(t.Kind) + ":" + t.ID
}

// Outcome is what the runtime saw an executed (or refused) call do.
type Outcome string

// The five outcomes. They stay distinct everywhere: a failed write may
// still have touched its target; a pending call may have run.
const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	Denied    Outcome = "denied"
	Cancelled Outcome = "cancelled"
	Pending   Outcome = "pending"
)

// Valid reports whether o is one of the five outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case Succeeded, Failed, Denied, Cancelled, Pending:
		return true
	}
	return false
}

// Observation is one call of the run as the runtime observed it.
type Observation struct {
	Seq     uint64  `json:"seq"` // sequence number of the event that first recorded the call
	CallID  string  `json:"call_id"`
	Tool    string  `json:"tool"`
	Outcome Outcome `json:"outcome"`
	Target  Target  `json:"target,omitzero"`
}

func (o Observation) validate() error {
	if !o.Outcome.Valid() {
		return fmt.Errorf("outcome %q is not one of succeeded, failed, denied, cancelled, pending", o.Outcome)
	}
	if o.Tool == "" {
		return fmt.Errorf("observation without a tool")
	}
	return nil
}

// Role is what a tool parameter means to the rules.
type Role string

// The parameter roles.
const (
	RolePath       Role = "path"        // a path the call writes
	RoleSourcePath Role = "source_path" // a path the call reads
	RoleMoved      Role = "moved_path"  // a path the call reads and removes: a source, and written
	RoleURL        Role = "url"
	RoleCommand    Role = "command"
	RoleContent    Role = "content"
	RoleInput      Role = "input" // a field a person may fill in on input resume
)

// Capability is something a tool can do; a descriptor declares a set.
type Capability uint16

// The capabilities.
const (
	CapReads Capability = 1 << iota
	CapWrites
	CapExecutes
	CapNetwork
	// CapContentFromSource: every byte the tool writes comes from an existing
	// source object (a copy or move), so there is no model-authored content.
	CapContentFromSource
	// CapOverwrites: the tool replaces its path's whole content, so an
	// existing file must have been read first.
	CapOverwrites
	// CapEdits: the tool changes an existing file in place, naming the text
	// it replaces; the file must exist.
	CapEdits
	// CapSearchesTree: the tool reads every file below a directory.
	CapSearchesTree
)

// Descriptor describes a tool to the rules: its parameters' roles and its
// capabilities.
type Descriptor struct {
	Name   string
	Params map[string]Role
	Caps   Capability
	// TrustZones lists the provider zones the tool may be used from; empty
	// means any.
	TrustZones []string
}

// Has reports whether the descriptor declares capability c.
func (d *Descriptor) Has(c Capability) bool { return d != nil && d.Caps&c == c }

// HasRole reports whether the argument key has role r: the role of the
// parameter it names exactly, or, when it names none, of any parameter it
// names in another letter case. A tool may read "File_Path" as
// "file_path" (Go's encoding/json fills a field from any key equal to its
// name but for case, Unicode's simple folding included: strings.EqualFold),
// so every rule reads arguments through the roles this way, and such a key
// is judged as the parameter it spells.
func (d *Descriptor) HasRole(key string, r Role) bool {
	_, ok := d.paramFor(key, r)
	return ok
}

// paramFor returns the declared parameter with role r that key spells, as
// HasRole reads it: key itself, or the first by name equal to it but for
// case.
func (d *Descriptor) paramFor(key string, r Role) (string, bool) {
	if d == nil {
		return "", false
	}
	if role, ok := d.Params[key]; ok {
		return key, role == r
	}
	first := ""
	for n, role := range d.Params {
		if role == r && strings.EqualFold(n, key) && (first == "" || n < first) {
			first = n
		}
	}
	return first, first != ""
}

// RoleOf returns the role of the argument key as HasRole reads it, for a
// reader that wants one (what a person is shown): the exact parameter's,
// else that of the first parameter, by name, it names in another letter
// case; "" when it names none.
func (d *Descriptor) RoleOf(key string) Role {
	if d == nil {
		return ""
	}
	if role, ok := d.Params[key]; ok {
		return role
	}
	first, role := "", Role("")
	for n, r := range d.Params {
		if strings.EqualFold(n, key) && (first == "" || n < first) {
			first, role = n, r
		}
	}
	return role
}

// Arg is one argument of a call read through a role: its key as the call
// spells it (argument text: never in a message), the declared parameter
// it stands for (the descriptor's words: a message may name it), and its
// value.
type Arg struct {
	Key   string
	Param string
	Value any
}

// Strings returns the argument's text values: its value when it is a
// string, or the strings of an array (a tool that takes several paths in
// one parameter). Values of other types hold no path.
func (a Arg) Strings() []string {
	switch v := a.Value.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ArgsWith returns the arguments of args with role r (HasRole: in any
// letter case), sorted by key. Several keys may spell one parameter
// ("path" and "PATH"); the tool reads one of them, veto cannot tell which,
// so every one is returned and judged.
func (d *Descriptor) ArgsWith(args map[string]any, r Role) []Arg {
	var out []Arg
	for k, v := range args {
		if p, ok := d.paramFor(k, r); ok {
			out = append(out, Arg{Key: k, Param: p, Value: v})
		}
	}
	if len(out) > 1 {
		slices.SortFunc(out, func(a, b Arg) int { return strings.Compare(a.Key, b.Key) })
	}
	return out
}

// ParamsWith returns the names of the parameters with role r, sorted: the
// names the descriptor declares. A call's arguments are read through
// ArgsWith, which finds them in any letter case.
func (d *Descriptor) ParamsWith(r Role) []string {
	if d == nil {
		return nil
	}
	var names []string
	for n, role := range d.Params {
		if role == r {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
