package veto

import (
	"context"
)

// Explanation is a decision laid open: the verdict, what it was decided
// on, and every rule's outcome in order, including those after the one
// that decided.
type Explanation struct {
	Verdict         Verdict
	Target          Target
	HistoryLen      int
	HistoryComplete bool
	Rules           []RuleStep
}

// RuleStep is one rule's outcome in an explanation.
type RuleStep struct {
	Rule    string `json:"rule"`
	Outcome string `json:"outcome"` // allow, deny, failed, needs_complete_history, needs_known_target, not_applicable, not_reached
	Reason  string `json:"reason,omitempty"`
	// Monitor: the rule is in monitor mode; a deny of its lets the call
	// run, recorded as would_deny.
	Monitor bool `json:"monitor,omitempty"`
	// Known is what the rule knows of the run (a Knower's notes).
	Known []string `json:"known,omitempty"`
	// Taint is, for a rule that counts the run's taint (a Tainter), what
	// it counts; nil for every other rule.
	Taint *Taint `json:"taint,omitempty"`
}

// Taint is a Tainter's count in an explanation.
type Taint struct {
	// Read is false when the rule was not reached or could not read the
	// run's taint (an error, a panic): Observations is empty then, and
	// proves nothing.
	Read bool `json:"read"`
	// Observations taint the run, in the order the run made them; their
	// Seq names the decision that let each call through.
	Observations []Observation `json:"observations,omitempty"`
}

// Explain decides c without recording it, and explains the decision. It is
// the one decision function in a dry run.
func (g *Gate) Explain(ctx context.Context, c *Call) Explanation {
	e := &Explanation{}
	e.Verdict = g.decide(ctx, c, &decideOpts{explain: e})
	if e.Rules == nil {
		for i := range g.rules {
			step := RuleStep{Rule: g.rules[i].info.ID, Outcome: "not_reached"}
			if _, ok := g.rules[i].rule.(Tainter); ok {
				step.Taint = &Taint{}
			}
			e.Rules = append(e.Rules, step)
		}
	}
	return *e
}

// explainRules runs every rule for an explanation, each on its own.
func (g *Gate) explainRules(ctx context.Context, in *Input, e *Explanation) {
	e.Target, e.HistoryLen, e.HistoryComplete = in.Target, in.History.Len(), in.History.Complete()
	e.Rules = nil
	for i := range g.rules {
		r := &g.rules[i]
		step := RuleStep{Rule: r.info.ID, Monitor: r.monitor}
		switch {
		case r.scoped != nil && !r.scoped.AppliesTo(in.Call):
			step.Outcome = "not_applicable"
		case r.info.Needs.CompleteHistory && !in.History.complete:
			step.Outcome = "needs_complete_history"
		case r.info.Needs.KnownTarget && !in.Target.Known():
			step.Outcome = "needs_known_target"
		default:
			d, err := checkOne(ctx, r.rule, in)
			switch {
			case err != nil || (d.deny && !ValidID(d.reason)):
				step.Outcome = "failed"
			case d.deny:
				step.Outcome, step.Reason = "deny", d.reason
			default:
				step.Outcome = "allow"
			}
		}
		if k, ok := r.rule.(Knower); ok {
			step.Known = knownOf(ctx, k, in)
		}
		if t, ok := r.rule.(Tainter); ok {
			step.Taint = taintOf(ctx, t, in)
		}
		e.Rules = append(e.Rules, step)
	}
}

func knownOf(ctx context.Context, k Knower, in *Input) (notes []string) {
	defer func() {
		if recover() != nil {
			notes = []string{"(the rule failed to say)"}
		}
	}()
	return k.Known(ctx, in)
}

// taintOf is what a Tainter counts; a rule that fails or panics counts
// nothing it could prove.
func taintOf(ctx context.Context, t Tainter, in *Input) (out *Taint) {
	defer func() {
		if recover() != nil {
			out = &Taint{}
		}
	}()
	obs, err := t.Taint(ctx, in)
	if err != nil {
		return &Taint{}
	}
	return &Taint{Read: true, Observations: obs}
}
