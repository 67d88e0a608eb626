package rule

import (
	"testing"

	"github.com/vetohq/veto"
)

// TestTextComesFromTheRegistry: a reason's sentence is its rule's
// declaration with the verbs shown as … (N for a number), with the rule's
// advice or the reason's own; the engine's reasons have theirs; anything
// else has none.
func TestTextComesFromTheRegistry(t *testing.T) {
	own := veto.Advice{Instead: "ask first"}
	r := &Info{ID: "text.rule", Risk: veto.RiskLow, Advice: veto.Advice{Instead: "read it first"}, Reasons: []*Reason{
		{Code: "text_verbs", Message: "The call %s the file %q at event #%d (%v)."},
		{Code: "text_own", Message: "Its own advice.", Advice: &own},
	}}
	if err := register(fam("text-fam", r)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		rule, reason, text, instead string
	}{
		{"text.rule", "text_verbs", "The call … the file … at event #N (…).", "read it first"},
		{"text.rule", "text_own", "Its own advice.", "ask first"},
		{"text.rule", "no_such_reason", "", "read it first"},
		{"", veto.ReasonToolDenied, "This tool is not offered to this run.", ""},
		{"text.rule", veto.ReasonBoundsExceeded, "", "read it first"}, // the rule's, not the engine's
		{"no.such.rule", veto.ReasonApprovalRefused, "A person refused this call when its rule asked about it.", ""},
		{"no.such.rule", "no_such_reason", "", ""},
	}
	for _, c := range cases {
		text, adv := Text(c.rule, c.reason)
		if text != c.text || adv.Instead != c.instead {
			t.Errorf("Text(%q, %q) = %q, %q; want %q, %q", c.rule, c.reason, text, adv.Instead, c.text, c.instead)
		}
	}
}
