package veto

import "context"

// Rule is one check on a call. A rule declares what it needs in its Info;
// the gate enforces the needs before calling Check, so a rule that needs a
// complete history never sees an incomplete one.
type Rule interface {
	Info() RuleInfo
	// Check decides one call. It returns Allow() or Deny(reason, message).
	// An error, a panic or a malformed reason code denies the call with
	// rule_failed; the error's text goes nowhere.
	Check(ctx context.Context, in *Input) (Decision, error)
}

// Scoped is a rule that applies only to some calls. The gate asks it
// first: for a call it does not apply to, neither its needs nor its check
// count, as if it were not there.
type Scoped interface {
	AppliesTo(c *Call) bool
}

// RuleInfo is what a rule declares about itself.
type RuleInfo struct {
	ID     string // [a-z][a-z0-9_.-]*, at most 64 ASCII characters, unique in a gate
	Needs  Needs
	Risk   RiskMapping
	Advice AdviceMapping
	// FixedMessages says the rule's messages are fixed text, written in its
	// declaration, whose verbs take nothing from the call's argument
	// values (a parameter's name, a count): the gate passes them whole.
	// Without it (user rules), a message that seems to quote an argument is
	// replaced by a generic sentence.
	FixedMessages bool
}

// Advice is what a denial tells the agent besides why: what to do
// instead, and the policy setting that would allow calls like it. It comes
// from the rule's declaration, never from the call.
type Advice struct {
	Instead string // one sentence; empty means: ask the user how to proceed
	Policy  string // the policy key, as "files.extra_roots in the user's veto.yaml"
}

// AdviceMapping maps a rule's reason codes to advice, as RiskMapping maps
// them to risk. A reason not in ByReason has the Default advice.
type AdviceMapping struct {
	Default  Advice
	ByReason map[string]Advice
}

// Of returns the advice for a denial with the given reason code.
func (m AdviceMapping) Of(reason string) Advice {
	if a, ok := m.ByReason[reason]; ok {
		return a
	}
	return m.Default
}

// Needs are the facts a rule cannot decide without.
type Needs struct {
	CompleteHistory bool // denied history_incomplete on an incomplete history
	KnownTarget     bool // denied target_unknown when no resolver claimed the call
}

// Knower is a rule that can tell an explanation what it knows of the run
// (which observations made it private, say). Notes hold identifiers,
// codes and counts only, never argument text or content.
type Knower interface {
	Known(ctx context.Context, in *Input) []string
}

// Tainter is a rule that counts the run's taint (the private material it
// has read, one of the run's knowledge): it says which observations taint
// the run, as data, so that an explanation carries them and the page
// draws them without knowing the rule or parsing its notes.
type Tainter interface {
	Taint(ctx context.Context, in *Input) ([]Observation, error)
}

// Input is what a rule sees of one call. Rules must not modify it, and no
// one copies it: its memo points into the Input itself.
type Input struct {
	Call       *Call
	Descriptor *Descriptor // nil when the tool has none
	Target     Target
	History    *History  // this run's observations before this call, in execution order
	Knowledge  Knowledge // what this run learned from successful results
	// Tally adds up History without reading every observation; rules that
	// count calls use it, so their cost does not grow with the run.
	Tally Tally
	// Probe looks at the world; every answer is recorded with the decision.
	Probe Probe

	memo    []memoEntry
	memoBuf [2]memoEntry // room for the usual one or two, without an allocation
}

type memoEntry struct {
	key any
	val any
}

// Memo returns the value kept under key for this decision, computing it
// with fn the first time. Rules that share work, such as resolving a
// call's paths once for every file rule, keep it here; it lives for one
// decision only. Keys should be values of an unexported type.
func (in *Input) Memo(key any, fn func() any) any {
	for _, m := range in.memo {
		if m.key == key {
			return m.val
		}
	}
	v := fn()
	if in.memo == nil {
		in.memo = in.memoBuf[:0]
	}
	in.memo = append(in.memo, memoEntry{key, v})
	return v
}

// Decision is a rule's answer.
type Decision struct {
	deny    bool
	ask     bool // deny until a person approves this call
	reason  string
	message string
}

// Allow is a rule's "no objection".
func Allow() Decision { return Decision{} }

// Deny refuses the call with a stable reason code (same format as rule
// ids) and one sentence for a person. The message must not contain argument
// text; the gate replaces a message that does.
func Deny(reason, message string) Decision {
	return Decision{deny: true, reason: reason, message: message}
}

// Ask refuses the call until a person approves it: the rule's question,
// with a reason code and one sentence, as for Deny. A denial by any rule
// wins over a question; an approval answers the question of this call
// (its run, tool and arguments) once, and every other rule still decides.
func Ask(reason, message string) Decision {
	return Decision{deny: true, ask: true, reason: reason, message: message}
}

// Denied reports whether d refuses the call (a question refuses it too,
// until it is approved).
func (d Decision) Denied() bool { return d.deny }

// Asked reports whether d is a question for a person.
func (d Decision) Asked() bool { return d.ask }

// Reason returns the reason code of a denial.
func (d Decision) Reason() string { return d.reason }

// Resolver turns a call into its target. It returns ok=false for calls it
// does not understand. A resolver must never guess. It sees the Input the
// rules will see, before its Target is set, and may keep work in its Memo
// for them.
type Resolver interface {
	Resolve(ctx context.Context, in *Input) (t Target, ok bool, err error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, in *Input) (Target, bool, error)

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, in *Input) (Target, bool, error) {
	return f(ctx, in)
}

// Patcher may change the input of an allowed call, for example to add a
// default timeout. It gets a deep copy of the arguments and returns the
// arguments to run with, and whether it changed anything. A denied call is
// never patched.
type Patcher interface {
	Patch(ctx context.Context, in *Input, args map[string]any) (map[string]any, bool, error)
}

// ToolDenial is why a tool is not offered in a run at all. The empty value
// means the tool is offered.
type ToolDenial string

// The tool-denial reasons, distinct from rule reason codes.
const (
	NotRegistered     ToolDenial = "not_registered"
	Unavailable       ToolDenial = "unavailable"
	ActorNotAllowed   ToolDenial = "actor_not_allowed"
	NotInRunAllowlist ToolDenial = "not_in_run_allowlist"
	OutsideTrustZone  ToolDenial = "outside_trust_zone"
)

// Offerability decides whether a tool may take part in a run at all,
// before any rule sees the call's arguments.
type Offerability interface {
	Offer(ctx context.Context, c *Call, d *Descriptor) (ToolDenial, error)
}
