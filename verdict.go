package veto

import "encoding/json"

// Stage names the step of the decision that produced a verdict.
type Stage string

// The stages, in the order the gate runs them.
const (
	StageBounds = Stage("bounds")
	StageState  = Stage("state") // loading the run's history
	StageResume = Stage("resume")
	StageFloor  = Stage("floor")
	StageOffer  = Stage("offerability")
	StageTarget = Stage("target")
	StageRule   = Stage("rule")
	StagePatch  = Stage("patch")
	StageRecord = Stage("record")
	StageEngine = Stage("engine") // the gate itself failed
)

// Reason codes the engine itself gives. Rules give their own.
const (
	ReasonBoundsExceeded     = "bounds_exceeded"
	ReasonFloorMismatch      = "floor_mismatch"
	ReasonToolDenied         = "tool_denied"
	ReasonTargetAmbiguous    = "target_ambiguous"
	ReasonTargetUnresolvable = "target_unresolvable"
	ReasonTargetUnknown      = "target_unknown"
	ReasonHistoryIncomplete  = "history_incomplete"
	ReasonRuleFailed         = "rule_failed"
	ReasonPatchFailed        = "patch_failed"
	ReasonStateUnavailable   = "state_unavailable"
	ReasonInputRejected      = "input_rejected"
	ReasonCancelled          = "decision_cancelled"
	ReasonInternal           = "internal_error"
	ReasonApprovalRefused    = "approval_refused" // a person refused the call a rule asked about
)

// Verdict is the gate's answer for one call: allow, or deny with the stage,
// rule and reason code that refused it. Message is one sentence for a
// person and never holds argument text.
type Verdict struct {
	Allowed bool
	// Ask reports that the call waits for a person: a rule asked, and no
	// approval of this call is at hand. Allowed is false: until approved
	// the call is refused.
	Ask        bool
	CallID     string
	Tool       string
	Run        string
	Stage      Stage  // empty for an allow
	Rule       string // the rule that denied, when Stage is rule
	Reason     string
	ToolDenial ToolDenial // set when Reason is tool_denied
	Risk       Risk
	Message    string
	// Advice is what to do instead and the policy key that changes the
	// answer, from the denying rule's declaration (or the stage's).
	Advice Advice
	Target Target
	// Args holds the arguments to run with when a patcher changed them; nil
	// means run the call as proposed. Always nil on a denial.
	Args map[string]any
	Seq  uint64 // sequence number of the decision event; 0 if it was not recorded
	// WouldDeny, on an allow, is the rule in monitor mode that would have
	// refused the call (the first), and WouldReason its reason: the call
	// runs, and the record says so.
	WouldDeny, WouldReason string

	argsHash string      // an Ask's: the arguments' hash its approval must match
	approval uint64      // the approval an allow used, or a denial refused at resume
	state    *StateError // a state_unavailable refusal's cause, for its log line
}

type adviceJSON struct {
	Instead string `json:"instead,omitempty"`
	Policy  string `json:"policy,omitempty"`
}

type verdictJSON struct {
	Verdict    string         `json:"verdict"`
	CallID     string         `json:"call_id"`
	Tool       string         `json:"tool,omitempty"`
	Run        string         `json:"run,omitempty"`
	Stage      Stage          `json:"stage,omitempty"`
	Rule       string         `json:"rule,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	ToolDenial ToolDenial     `json:"tool_denial,omitempty"`
	Risk       Risk           `json:"risk,omitzero"`
	Message    string         `json:"message,omitempty"`
	Advice     *adviceJSON    `json:"advice,omitempty"`
	Target     *Target        `json:"target,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Seq        uint64         `json:"seq,omitempty"`
	WouldDeny  string         `json:"would_deny,omitempty"`
	WouldRsn   string         `json:"would_reason,omitempty"`
}

// Approved reports whether an allow passed a question with a person's
// approval of this very call.
func (v Verdict) Approved() bool { return v.Allowed && v.approval != 0 }

// MarshalJSON writes the verdict as veto's JSON answer.
func (v Verdict) MarshalJSON() ([]byte, error) {
	j := verdictJSON{Verdict: "deny", CallID: v.CallID, Tool: v.Tool, Run: v.Run, Stage: v.Stage, Rule: v.Rule,
		Reason: v.Reason, ToolDenial: v.ToolDenial, Risk: v.Risk, Message: v.Message, Args: v.Args, Seq: v.Seq,
		WouldDeny: v.WouldDeny, WouldRsn: v.WouldReason}
	if v.Advice != (Advice{}) {
		j.Advice = &adviceJSON{Instead: v.Advice.Instead, Policy: v.Advice.Policy}
	}
	if v.Allowed {
		j.Verdict = "allow"
	} else if v.Ask {
		j.Verdict = "ask"
	}
	if v.Target.Known() {
		t := v.Target
		j.Target = &t
	}
	return json.Marshal(j)
}
