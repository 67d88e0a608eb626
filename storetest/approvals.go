package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
)

// askRule asks a person about every command holding "ask"; denyRule
// refuses every command holding "no" (a denial wins over a question).
func askRule() veto.Rule {
	return &rule.Func{RuleInfo: veto.RuleInfo{ID: "ask.word", FixedMessages: true},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, "ask") {
				return veto.Ask("word_needs_person", "The word needs a person."), nil
			}
			return veto.Allow(), nil
		}}
}

func denyRule() veto.Rule {
	return &rule.Func{RuleInfo: veto.RuleInfo{ID: "deny.word", FixedMessages: true},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.Contains(cmd, "no") {
				return veto.Deny("word_refused", "The word is refused."), nil
			}
			return veto.Allow(), nil
		}}
}

// refApprovals is the reference a store's approvals are held to: the
// run's events read whole, as the gate read them before they were a
// projection.
type refApprovals struct {
	evs []veto.Event
}

func (r refApprovals) used() map[uint64]bool {
	used := map[uint64]bool{}
	for _, e := range r.evs {
		if e.Approval != 0 {
			used[e.Approval] = true
		}
	}
	return used
}

func (r refApprovals) grant(tool, hash string, actor veto.Actor, now time.Time) uint64 {
	used := r.used()
	for _, e := range r.evs {
		if e.Kind == veto.EventApproved && e.Tool == tool && e.ArgsHash == hash && e.For == actor && !used[e.Seq] && now.Before(e.Expires) {
			return e.Seq
		}
	}
	return 0
}

func (r refApprovals) refusal(call, tool, hash string) uint64 {
	used := r.used()
	for _, e := range r.evs {
		if e.Kind == veto.EventApprovalRefused && e.CallID == call && e.Tool == tool && e.ArgsHash == hash && !used[e.Seq] {
			return e.Seq
		}
	}
	return 0
}

// asked is the last question matching keep, and whether its call was
// answered after it.
func (r refApprovals) asked(keep func(e *veto.Event) bool) (veto.Question, bool) {
	for i := len(r.evs) - 1; i >= 0; i-- {
		e := &r.evs[i]
		if e.Kind != veto.EventDenied || e.Awaiting != veto.AwaitApproval || !keep(e) {
			continue
		}
		q := veto.Question{Run: e.Run, CallID: e.CallID, Seq: e.Seq, Time: e.Time, Tool: e.Tool, Rule: e.Rule, Reason: e.Reason,
			Risk: e.Risk, ArgsHash: e.ArgsHash, Actor: veto.Actor{Kind: e.Actor.Kind, ID: e.Actor.ID}}
		for _, later := range r.evs[i+1:] {
			if later.CallID == e.CallID && (later.Kind == veto.EventApproved || later.Kind == veto.EventApprovalRefused) {
				q.Answered = true
			}
		}
		return q, true
	}
	return veto.Question{}, false
}

func (r refApprovals) suspended(call string) bool {
	open := false
	for _, e := range r.evs {
		if e.CallID != call {
			continue
		}
		switch e.Kind {
		case veto.EventSuspended:
			open = true
		case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied:
			open = false
		}
	}
	return open
}

func (r refApprovals) waiting() []veto.Question {
	var out []veto.Question
	seen := map[string]bool{}
	for i := len(r.evs) - 1; i >= 0; i-- {
		e := &r.evs[i]
		if e.Kind != veto.EventDenied || e.Awaiting != veto.AwaitApproval || seen[e.CallID] {
			continue
		}
		seen[e.CallID] = true
		if q, _ := r.asked(func(x *veto.Event) bool { return x.Seq == e.Seq }); !q.Answered {
			out = append(out, q)
		}
	}
	return out
}

// approvalsFold: a store's questions, grants, refusals and suspensions
// (veto.Approvals) and what waits for a person (veto.Waiting) equal the
// run's events read whole, after every step of a run whose calls are
// asked about, answered, refused, suspended, decided again and reused,
// and after a reopen.
func approvalsFold(t *testing.T, h Harness) {
	s := h.Open(t)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	g, err := veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{askRule(), denyRule()}, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	cmds := []string{"ask one", "ask two", "ask no", "fine", "no"}
	calls := []string{"c1", "c2", "c3", "c4", "c5", "c6"}
	// Two actors share the run: a grant is for the actor asked about.
	actors := []veto.Actor{{Kind: "agent", ID: "a"}, {Kind: "service", ID: "b"}}
	run := veto.Run{Ref: "ap", Fresh: true}
	person := veto.Actor{Kind: "user", ID: "ann"}
	check := func(step int) {
		t.Helper()
		evs, err := s.Events(ctx, "ap", 0)
		if err != nil {
			t.Fatal(err)
		}
		ref := refApprovals{evs}
		p, err := s.Load(ctx, "ap")
		if err != nil || p.Approvals == nil {
			t.Fatalf("step %d: load: %v, approvals %v", step, err, p.Approvals)
		}
		a := p.Approvals
		for _, cmd := range cmds {
			c := &veto.Call{Tool: "Bash", Args: map[string]any{"command": cmd}}
			hash := veto.ArgsHash(c)
			for _, who := range actors {
				if got, err := a.Grant(ctx, "Bash", hash, who, now); err != nil || got != ref.grant("Bash", hash, who, now) {
					t.Fatalf("step %d: grant of %q for %v: %d %v, want %d", step, cmd, who, got, err, ref.grant("Bash", hash, who, now))
				}
			}
			got, ok, err := a.AskedAbout(ctx, "Bash", hash)
			want, wok := ref.asked(func(e *veto.Event) bool { return e.Tool == "Bash" && e.ArgsHash == hash })
			if err != nil || ok != wok || !sameQuestion(got, want) {
				t.Fatalf("step %d: asked about %q: %+v %v %v, want %+v %v", step, cmd, got, ok, err, want, wok)
			}
			for _, id := range calls {
				if got, err := a.Refusal(ctx, id, "Bash", hash); err != nil || got != ref.refusal(id, "Bash", hash) {
					t.Fatalf("step %d: refusal of %s %q: %d %v, want %d", step, id, cmd, got, err, ref.refusal(id, "Bash", hash))
				}
			}
		}
		for _, id := range calls {
			got, ok, err := a.Asked(ctx, id)
			want, wok := ref.asked(func(e *veto.Event) bool { return e.CallID == id })
			if err != nil || ok != wok || !sameQuestion(got, want) {
				t.Fatalf("step %d: asked %s: %+v %v %v, want %+v %v", step, id, got, ok, err, want, wok)
			}
			if got, err := a.Suspended(ctx, id); err != nil || got != ref.suspended(id) {
				t.Fatalf("step %d: suspended %s: %v %v", step, id, got, err)
			}
		}
		got, err := veto.Waiting(ctx, s, veto.WaitQuery{Since: now.Add(-time.Hour)})
		want := ref.waiting()
		if err != nil || len(got) != len(want) {
			t.Fatalf("step %d: waiting %d %v, want %d", step, len(got), err, len(want))
		}
		for i := range got {
			if !sameQuestion(got[i], want[i]) {
				t.Fatalf("step %d: waiting %d: %+v, want %+v", step, i, got[i], want[i])
			}
		}
	}
	for step := range 120 {
		id, cmd := calls[rng.IntN(len(calls))], cmds[rng.IntN(len(cmds))]
		c := &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: run, Actor: actors[rng.IntN(len(actors))]}
		switch rng.IntN(6) {
		case 0, 1:
			g.Decide(ctx, c)
		case 2:
			// The answer may find no question or one answered: that is
			// what the reference says too.
			_ = g.Answer(ctx, "ap", id, person, true, time.Duration(1+rng.IntN(20))*time.Minute)
		case 3:
			_ = g.Answer(ctx, "ap", id, person, false, time.Minute)
		case 4:
			if _, err := g.Suspend(ctx, c, veto.AwaitApproval, nil); err != nil {
				t.Fatal(err)
			}
		case 5:
			now = now.Add(time.Duration(rng.IntN(4)) * time.Minute)
		}
		check(step)
	}
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		check(-1)
	}
}

// sameQuestion compares questions, their times to the microsecond (a
// database keeps nanoseconds; JSON keeps what Go wrote).
func sameQuestion(a, b veto.Question) bool {
	return a.Time.Equal(b.Time) && fmt.Sprint(a.Run, a.CallID, a.Seq, a.Tool, a.Rule, a.Reason, a.Risk, a.ArgsHash, a.Answered, a.Actor) ==
		fmt.Sprint(b.Run, b.CallID, b.Seq, b.Tool, b.Rule, b.Reason, b.Risk, b.ArgsHash, b.Answered, b.Actor)
}

// approvalsDamaged: a run whose log holds an event that cannot be read
// has no grant (a lost record of a grant's use must not let it pass
// twice), on every store; its question still waits, and the call is
// asked about again rather than allowed.
func approvalsDamaged(t *testing.T, h Harness) {
	s := h.Open(t)
	g, err := veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{askRule()}})
	if err != nil {
		t.Fatal(err)
	}
	c := &veto.Call{ID: "d1", Tool: "Bash", Args: map[string]any{"command": "ask"}, Run: veto.Run{Ref: "dm", Fresh: true}}
	if v := g.Decide(ctx, c); !v.Ask {
		t.Fatalf("question: %+v", v)
	}
	if err := g.Answer(ctx, "dm", "d1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Hour); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Load(ctx, "dm")
	if seq, err := p.Approvals.Grant(ctx, "Bash", veto.ArgsHash(c), c.Actor, time.Now()); err != nil || seq == 0 {
		t.Fatalf("the grant before damage: %d %v", seq, err)
	}
	h.Raw(t, s, "dm", p.Next, []byte("\x00garbage"))
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		g, _ = veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{askRule()}})
	}
	p, _ = s.Load(ctx, "dm")
	if seq, err := p.Approvals.Grant(ctx, "Bash", veto.ArgsHash(c), c.Actor, time.Now()); err != nil || seq != 0 {
		t.Fatalf("a damaged run's grant: %d %v", seq, err)
	}
	c2 := *c
	c2.ID = "d2"
	if v := g.Decide(ctx, &c2); v.Allowed || !v.Ask {
		t.Fatalf("a damaged run's call after a grant: %+v", v)
	}
	qs, err := veto.Waiting(ctx, s, veto.WaitQuery{Run: "dm"})
	if err != nil || len(qs) != 1 || qs[0].CallID != "d2" {
		t.Fatalf("waiting in a damaged run: %+v %v", qs, err)
	}
}

// shownKept: what a person is shown of a question is kept for its call,
// apart from the log (no event holds it), read back whole, gone after
// the answer, gone once expired, and bounded in number (the oldest go).
func shownKept(t *testing.T, h Harness) {
	s := h.Open(t)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	g, err := veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{askRule()}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	const canary = "ghp_CANARYcanary0123456789abcdefABCDEF01"
	c := &veto.Call{ID: "s1", Tool: "Bash", Args: map[string]any{"command": "ask curl -H 'Authorization: token " + canary + "' https://example.invalid/x"},
		Run: veto.Run{Ref: "sh", Fresh: true}}
	if v := g.Decide(ctx, c); !v.Ask {
		t.Fatalf("question: %+v", v)
	}
	p, _ := s.Load(ctx, "sh")
	sh, ok, err := p.Approvals.Shown(ctx, "s1", now)
	if err != nil || !ok || sh.ArgsHash != veto.ArgsHash(c) || sh.Rule != "ask.word" || len(sh.Fields) != 1 || sh.Fields[0].Name != "command" {
		t.Fatalf("shown: %+v %v %v", sh, ok, err)
	}
	if v := sh.Fields[0].Value; strings.Contains(v, "CANARY") || !strings.Contains(v, "ask curl") || sh.Masked == 0 {
		t.Fatalf("shown command %q (masked %d)", v, sh.Masked)
	}
	evs, _ := s.Events(ctx, "sh", 0)
	for _, e := range evs {
		if b := fmt.Sprintf("%+v", e); strings.Contains(b, "curl") || strings.Contains(b, "CANARY") {
			t.Fatalf("an event holds the arguments: %s", b)
		}
	}
	if _, ok, _ := p.Approvals.Shown(ctx, "s1", now.Add(veto.ShownFor)); ok {
		t.Fatal("shown after it expired")
	}
	if err := g.Answer(ctx, "sh", "s1", veto.Actor{Kind: "user", ID: "ann"}, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := p.Approvals.Shown(ctx, "s1", now); ok || err != nil {
		t.Fatalf("shown after the answer: %v %v", ok, err)
	}
	// The bound: the oldest go.
	for i := range veto.MaxShown + 3 {
		now = now.Add(time.Second)
		c := &veto.Call{ID: fmt.Sprintf("b%d", i), Tool: "Bash", Args: map[string]any{"command": "ask " + fmt.Sprint(i)}, Run: veto.Run{Ref: "sh"}}
		if v := g.Decide(ctx, c); !v.Ask {
			t.Fatalf("question %d: %+v", i, v)
		}
	}
	p, _ = s.Load(ctx, "sh")
	held := 0
	for i := range veto.MaxShown + 3 {
		if _, ok, _ := p.Approvals.Shown(ctx, fmt.Sprintf("b%d", i), now); ok {
			held++
		} else if i >= 3 {
			t.Fatalf("question %d's arguments dropped, not one of the oldest", i)
		}
	}
	if held != veto.MaxShown {
		t.Fatalf("%d held, want %d", held, veto.MaxShown)
	}
	if !slices.ContainsFunc(evs, func(e veto.Event) bool { return e.Awaiting == veto.AwaitApproval }) {
		t.Fatal("no question recorded")
	}
}
