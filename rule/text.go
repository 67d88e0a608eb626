package rule

import (
	"strings"

	"github.com/vetohq/veto"
)

// Text is a reason code's sentence and advice as its rule declares them,
// the verbs shown as … (a stored event keeps no argument, so nothing fills
// them); the engine's own reasons say which stage refused. The service's
// questions and the page's cards read it here, from the registry, so that
// neither writes a rule's words of its own. Both are empty for a code no
// registered rule and no stage of the engine gives.
func Text(ruleID, reason string) (text string, advice veto.Advice) {
	for _, f := range Families() {
		for _, ri := range f.Rules {
			if ri.ID == ruleID {
				return ri.text(reason)
			}
		}
	}
	return engineText(reason), veto.Advice{}
}

// text is the sentence and advice of one of r's reasons.
func (r *Info) text(reason string) (text string, advice veto.Advice) {
	advice = r.Advice
	for _, rs := range r.Reasons {
		if rs.Code != reason {
			continue
		}
		text = strings.NewReplacer("%s", "…", "%q", "…", "%d", "N", "%v", "…").Replace(rs.Message)
		if rs.Advice != nil {
			advice = *rs.Advice
		}
	}
	return text, advice
}

// engineText is the sentence of a reason the engine itself gives ("": not
// one of them).
func engineText(reason string) string {
	switch reason {
	case veto.ReasonBoundsExceeded:
		return "The call is larger than veto decides."
	case veto.ReasonFloorMismatch:
		return "veto's policy files changed in a way that weakens the floor."
	case veto.ReasonToolDenied:
		return "This tool is not offered to this run."
	case veto.ReasonTargetAmbiguous:
		return "veto cannot tell which resource the call acts on."
	case veto.ReasonTargetUnresolvable:
		return "veto cannot resolve the resource the call acts on."
	case veto.ReasonTargetUnknown:
		return "veto does not know the resource the call acts on."
	case veto.ReasonHistoryIncomplete:
		return "A rule needs the run's complete history, which veto cannot prove."
	case veto.ReasonRuleFailed:
		return "A rule failed while deciding, so the call was refused."
	case veto.ReasonPatchFailed:
		return "The policy's change to the arguments failed."
	case veto.ReasonStateUnavailable:
		return "veto could not use its state."
	case veto.ReasonInputRejected:
		return "The input supplied does not match what the call waited for."
	case veto.ReasonCancelled:
		return "The decision ran out of time."
	case veto.ReasonInternal:
		return "veto failed inside."
	case veto.ReasonApprovalRefused:
		return "A person refused this call when its rule asked about it."
	}
	return ""
}
