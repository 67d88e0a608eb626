package replay

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/toolpath"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// Verdict is a verdict as a report shows it.
type Verdict struct {
	Allowed bool   `json:"allowed"`
	Known   bool   `json:"known"` // false: veto recorded no decision for the call
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (v Verdict) String() string {
	switch {
	case !v.Known:
		return "not recorded"
	case v.Allowed:
		return "allow"
	case v.Rule != "":
		return "deny " + v.Rule + "/" + v.Reason
	}
	return "deny " + v.Reason
}

// Change is one call whose verdict would change. It names the call, never
// its arguments.
type Change struct {
	Index  int     `json:"index"` // position in the recorded calls, from 1
	CallID string  `json:"call_id"`
	Tool   string  `json:"tool"`
	Before Verdict `json:"before"`
	After  Verdict `json:"after"`
}

// Report is what a replay found.
type Report struct {
	Calls        int      `json:"calls"`
	Unchanged    int      `json:"unchanged"`
	NewlyDenied  int      `json:"newly_denied"`
	NewlyAllowed int      `json:"newly_allowed"`
	OtherRule    int      `json:"other_rule"` // denied before and after, by another rule or reason
	Unrecorded   int      `json:"unrecorded"` // no decision of veto's to compare with
	Changes      []Change `json:"changes"`
}

// Options are a replay's world.
type Options struct {
	Home string // the home directory "~" meant; "" leaves ~ paths unresolvable
	// Progress, when set, is told after each call.
	Progress func(done, total int)
}

// Run re-decides calls, in their recorded order, under p, and compares
// each verdict with the one veto recorded in events (the run's own
// events, matched by call id). World facts come only from events: every
// probe answer is the one recorded for that call, and a fact that was not
// recorded fails the rule that asks (rule_failed). Paths resolve on
// toolpath.Lexical.
func Run(ctx context.Context, calls []Call, events []veto.Event, p *policy.Policy, o Options) (*Report, error) {
	recorded := probe.NewRecorded(events)
	before := map[string]Verdict{}
	decided := map[string]uint64{} // call id → sequence number of its recorded decision
	var allows []veto.Event        // egress_allowed events, in log order
	rewritten := map[string]bool{} // call id → allowed with the input veto rewrote
	for _, e := range events {
		switch e.Kind {
		case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied:
			if _, ok := decided[e.CallID]; !ok {
				decided[e.CallID] = e.Seq
			}
		}
		switch e.Kind {
		case veto.EventEgressAllowed:
			allows = append(allows, e)
		case veto.EventAllowed:
			before[e.CallID] = Verdict{Allowed: true, Known: true}
			rewritten[e.CallID] = e.Patched
		case veto.EventDenied:
			before[e.CallID] = Verdict{Known: true, Rule: e.Rule, Reason: e.Reason}
		case veto.EventToolDenied:
			before[e.CallID] = Verdict{Known: true, Reason: veto.ReasonToolDenied}
		}
	}
	sp := &scoped{}
	// A call veto allowed rewritten (a command run under veto exec) went
	// to a client that ran veto's input: it is decided so again. The
	// supervisor is named, never started: a replay runs nothing.
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Probe: sp, FS: toolpath.Lexical{}, Home: o.Home,
		Vars: map[string]string{"HOME": o.Home, "TMPDIR": "/tmp"}, Supervisor: []string{"veto", "exec"}})
	if err != nil {
		return nil, err
	}
	rep := &Report{Calls: len(calls)}
	for i, rc := range calls {
		c := rc.Call
		// The allow-list in force then: every addition recorded before the
		// call's decision, added to the replay's run in the same order.
		if seq, ok := decided[c.ID]; ok {
			for len(allows) > 0 && allows[0].Seq < seq {
				if err := g.AllowEgress(ctx, c.Run.Ref, allows[0].Host); err != nil && !errors.Is(err, veto.ErrNoRun) {
					return nil, err
				}
				allows = allows[1:]
			}
		}
		sp.p = recorded.Decision(c.ID)
		c.Rewrites = rewritten[c.ID]
		v := g.Decide(ctx, &c)
		after := Verdict{Allowed: v.Allowed, Known: true, Rule: v.Rule, Reason: v.Reason}
		was, known := before[c.ID]
		switch {
		case !known:
			rep.Unrecorded++
		case was.Allowed == after.Allowed && (was.Allowed || was.Rule == after.Rule && was.Reason == after.Reason):
			rep.Unchanged++
		default:
			switch {
			case was.Allowed:
				rep.NewlyDenied++
			case after.Allowed:
				rep.NewlyAllowed++
			default:
				rep.OtherRule++
			}
			rep.Changes = append(rep.Changes, Change{Index: i + 1, CallID: c.ID, Tool: c.Tool, Before: was, After: after})
		}
		// What the call did is what the transcript says it did, whatever
		// the new verdict: the run's history is the recorded one.
		if v.Allowed && rc.Outcome != veto.Pending {
			sp.p = recorded.Result(c.ID)
			if err := g.ObserveCall(ctx, &c, rc.Outcome); err != nil {
				return nil, err
			}
		}
		if o.Progress != nil {
			o.Progress(i+1, len(calls))
		}
	}
	return rep, nil
}

// scoped answers with what was recorded for the call being replayed: its
// decision's probes while it is decided, its result's facts while the
// result is observed.
type scoped struct{ p veto.Probe }

func (s *scoped) File(ctx context.Context, path string) (veto.FileFact, error) {
	if s.p == nil {
		return veto.FileFact{}, probe.ErrNotRecorded
	}
	return s.p.File(ctx, path)
}
