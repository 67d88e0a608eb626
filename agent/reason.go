package agent

import (
	"fmt"
	"strings"

	"github.com/vetohq/veto"
)

// Reason is what the model reads about a denial, in every client and the
// MCP gateway alike: the rule, the reason code (and the tool denial's, for
// a tool refused as offered), one sentence of why, what to do instead and
// the policy key that changes the answer, as the rule declared them.
// Never argument text. A question says to make the same call again once a
// person has approved it; a denial, not to retry it.
func Reason(v veto.Verdict) string {
	var b strings.Builder
	b.WriteString("veto blocked this ")
	b.WriteString(v.Tool)
	b.WriteString(" call")
	if v.Ask {
		b.WriteString(" until a person approves it")
	}
	if v.Rule != "" {
		fmt.Fprintf(&b, " (rule %s, reason %s)", v.Rule, v.Reason)
	} else {
		fmt.Fprintf(&b, " (%s)", v.Reason)
	}
	if v.ToolDenial != "" && string(v.ToolDenial) != v.Reason {
		fmt.Fprintf(&b, " [%s]", v.ToolDenial)
	}
	b.WriteString(": ")
	b.WriteString(v.Message)
	if v.Advice.Instead != "" {
		b.WriteString(" Instead: ")
		b.WriteString(v.Advice.Instead)
	}
	if v.Ask {
		b.WriteString(" Do not work around it; once the user has approved it, make the same call again.")
		return b.String()
	}
	b.WriteString(" Do not retry it or work around it; ")
	hint := v.Advice.Policy
	if hint == "" && v.Stage == veto.StageRule && v.Rule != "" {
		hint = "the rule " + v.Rule
	}
	if hint != "" {
		b.WriteString("ask the user to do it, or to change veto's policy (" + hint + ").")
	} else {
		b.WriteString("ask the user how to proceed.")
	}
	return b.String()
}
