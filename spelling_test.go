package veto_test

import (
	"testing"

	"github.com/vetohq/veto"
)

// The spellings veto stores and prints are a contract: stored event logs,
// suspensions, the CLI's JSON and policies name them, so a constant that
// changed its spelling (or traded it with a neighbour) would misread
// every log written before. They are spelled out here by hand.
func TestStoredSpellingsAreStable(t *testing.T) {
	for _, p := range [][2]string{
		{string(veto.Succeeded), "succeeded"}, {string(veto.Failed), "failed"}, {string(veto.Denied), "denied"},
		{string(veto.Cancelled), "cancelled"}, {string(veto.Pending), "pending"},

		{string(veto.NotRegistered), "not_registered"}, {string(veto.Unavailable), "unavailable"},
		{string(veto.ActorNotAllowed), "actor_not_allowed"}, {string(veto.NotInRunAllowlist), "not_in_run_allowlist"},
		{string(veto.OutsideTrustZone), "outside_trust_zone"},

		{string(veto.RolePath), "path"}, {string(veto.RoleSourcePath), "source_path"}, {string(veto.RoleMoved), "moved_path"},
		{string(veto.RoleURL), "url"}, {string(veto.RoleCommand), "command"}, {string(veto.RoleContent), "content"},
		{string(veto.RoleInput), "input"},

		{veto.ReasonBoundsExceeded, "bounds_exceeded"}, {veto.ReasonFloorMismatch, "floor_mismatch"},
		{veto.ReasonToolDenied, "tool_denied"}, {veto.ReasonTargetAmbiguous, "target_ambiguous"},
		{veto.ReasonTargetUnresolvable, "target_unresolvable"}, {veto.ReasonTargetUnknown, "target_unknown"},
		{veto.ReasonHistoryIncomplete, "history_incomplete"}, {veto.ReasonRuleFailed, "rule_failed"},
		{veto.ReasonPatchFailed, "patch_failed"}, {veto.ReasonStateUnavailable, "state_unavailable"},
		{veto.ReasonInputRejected, "input_rejected"}, {veto.ReasonCancelled, "decision_cancelled"},
		{veto.ReasonInternal, "internal_error"},

		{string(veto.StageBounds), "bounds"}, {string(veto.StageState), "state"}, {string(veto.StageResume), "resume"},
		{string(veto.StageFloor), "floor"}, {string(veto.StageOffer), "offerability"}, {string(veto.StageTarget), "target"},
		{string(veto.StageRule), "rule"}, {string(veto.StagePatch), "patch"}, {string(veto.StageRecord), "record"},
		{string(veto.StageEngine), "engine"},

		{string(veto.EventRunStarted), "run_started"}, {string(veto.EventAllowed), "invocation_allowed"},
		{string(veto.EventDenied), "invocation_denied"}, {string(veto.EventToolDenied), "tool_denied"},
		{string(veto.EventObserved), "observation"}, {string(veto.EventSuspended), "call_suspended"},
		{string(veto.EventProbe), "probe"}, {string(veto.EventEgressAllowed), "egress_allowed"},

		{string(veto.AwaitApproval), "approval"}, {string(veto.AwaitInput), "input"},

		{veto.RiskNone.String(), "none"}, {veto.RiskLow.String(), "low"}, {veto.RiskMedium.String(), "medium"},
		{veto.RiskHigh.String(), "high"}, {veto.RiskCritical.String(), "critical"}, {veto.Risk(9).String(), "risk(9)"},
	} {
		if got, want := p[0], p[1]; got != want {
			t.Errorf("spelled %q, stored logs say %q", got, want)
		}
	}
	if len(map[string]bool{string(veto.Succeeded): true, string(veto.Failed): true, string(veto.Denied): true,
		string(veto.Cancelled): true, string(veto.Pending): true}) != 5 {
		t.Error("two outcomes share a spelling")
	}
}
