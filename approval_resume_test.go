package veto_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
)

// eventReads counts how often a decision reads a run's events or scans
// its log: the ways to find an approval.
type eventReads struct {
	veto.Store
	n atomic.Int64
}

func (s *eventReads) Events(ctx context.Context, run string, after uint64) ([]veto.Event, error) {
	s.n.Add(1)
	return s.Store.Events(ctx, run, after)
}

// loggedReads is eventReads over a store with a log: the gate finds
// approvals through the log's scan.
type loggedReads struct {
	*eventReads
	veto.Log
}

func (s loggedReads) Scan(ctx context.Context, q veto.LogQuery, fn func(string, uint64, []byte) error) error {
	s.n.Add(1)
	return s.Log.Scan(ctx, q, fn)
}

// rawReads is loggedReads over the in-memory store, which also hands over
// its stored events raw.
type rawReads struct {
	loggedReads
	m *memstore.Store
}

func (s rawReads) Raw(run string) [][]byte {
	s.n.Add(1)
	return s.m.Raw(run)
}

// TestApprovedCallRefusedAtResume: a person approves a call; the policy
// changes (a second gate on the same store, as a hook process started with
// a new policy would be) and now denies it. The denial is recorded naming
// the approval (refused at resume), which is thereby used up: the old
// policy, which would have let the call through on it, now asks again.
// A denial of a call nobody approved, or whose approval expired, names
// none; no decision and no answer reads the run's events or its log to
// look for approvals (they are the projection's). On the memory store, on
// SQLite, and on a store without a log.
func TestApprovedCallRefusedAtResume(t *testing.T) {
	for _, store := range []string{"memory", "sqlite", "memory without its log"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			inner := approvalStore(t, store)
			reads := &eventReads{Store: inner}
			var st veto.Store = reads
			if l, ok := inner.(veto.Log); ok && store != "memory without its log" {
				st = loggedReads{reads, l}
			}
			if m, ok := inner.(*memstore.Store); ok && store == "memory" {
				st = rawReads{loggedReads{reads, m}, m}
			}
			now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			before, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			after, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker(), denier("prod")}, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			ann := veto.Actor{Kind: "user", ID: "ann"}
			call := func(id, cmd string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: veto.Run{Ref: "r1", Fresh: true}}
			}
			last := func() veto.Event {
				evs, err := inner.Events(ctx, "r1", 0)
				if err != nil || len(evs) == 0 {
					t.Fatal(err)
				}
				return evs[len(evs)-1]
			}

			if v := before.Decide(ctx, call("c1", "make deploy prod")); !v.Ask {
				t.Fatalf("the question: %+v", v)
			}
			if err := before.Answer(ctx, "r1", "c1", ann, true, time.Hour); err != nil {
				t.Fatal(err)
			}
			grant := last()
			if grant.Kind != veto.EventApproved {
				t.Fatalf("the answer: %+v", grant)
			}

			// An allow reads no events: approvals are looked for on the
			// way to a denial only.
			reads.n.Store(0)
			if v := after.Decide(ctx, call("c2", "ls")); !v.Allowed {
				t.Fatalf("ls: %+v", v)
			}
			if n := reads.n.Load(); n != 0 {
				t.Fatalf("an allow read the run's events %d time(s)", n)
			}
			if e := last(); e.Approval != 0 {
				t.Fatalf("an allow of another call names approval #%d", e.Approval)
			}

			// The live policy refuses the approved call: refused at resume.
			v := after.Decide(ctx, call("c3", "make deploy prod"))
			if v.Allowed || v.Ask || v.Rule != "deny.prod" {
				t.Fatalf("the approved call under the new policy: %+v", v)
			}
			e := last()
			if e.Kind != veto.EventDenied || e.CallID != "c3" || e.Approval != grant.Seq || e.Awaiting != "" {
				t.Fatalf("the refusal at resume: %+v, want approval #%d", e, grant.Seq)
			}
			// Used up: the old policy, which would pass it, asks again,
			// and the new one denies without naming an approval.
			if v := before.Decide(ctx, call("c4", "make deploy prod")); v.Allowed || !v.Ask {
				t.Fatalf("an approval used by a refusal let a call through: %+v", v)
			}
			if v := after.Decide(ctx, call("c5", "make deploy prod")); v.Allowed || last().Approval != 0 {
				t.Fatalf("a second refusal names an approval: %+v %+v", v, last())
			}

			// An approval that expired is not refused at resume: it was
			// never used, and the page shows it expired.
			before.Decide(ctx, call("c6", "deploy prod eu"))
			if err := before.Answer(ctx, "r1", "c6", ann, true, time.Minute); err != nil {
				t.Fatal(err)
			}
			now = now.Add(2 * time.Minute)
			if v := after.Decide(ctx, call("c7", "deploy prod eu")); v.Allowed || last().Approval != 0 {
				t.Fatalf("a denial after expiry names an approval: %+v %+v", v, last())
			}
			// A call no one approved, denied: no approval.
			if v := after.Decide(ctx, call("c8", "rm prod")); v.Allowed || last().Approval != 0 {
				t.Fatalf("an unapproved denial names an approval: %+v %+v", v, last())
			}
			// The approved call under a policy that allows it outright
			// (no question) runs without using the approval.
			before.Decide(ctx, call("c9", "deploy staging"))
			if err := before.Answer(ctx, "r1", "c9", ann, true, time.Hour); err != nil {
				t.Fatal(err)
			}
			open, _ := veto.NewGate(veto.Config{Store: st, Now: clock})
			if v := open.Decide(ctx, call("c10", "deploy staging")); !v.Allowed || last().Approval != 0 {
				t.Fatalf("an allow without a question: %+v %+v", v, last())
			}
			// Not one decision or answer read the run's events, scanned
			// the log or took its raw events: approvals are looked up in
			// the run's projection.
			if _, _, _, err := before.Question(ctx, call("", "deploy staging")); err != nil {
				t.Fatal(err)
			}
			if n := reads.n.Load(); n != 0 {
				t.Fatalf("the decisions and answers read the log %d time(s)", n)
			}
		})
	}
}

// TestQuestionAtResumeIsARefusal: a suspended call resumed (ResumeApproval,
// ResumeInput) under a policy whose rule asks for a person is refused, a
// failed call: no new question (verdict ask, an event awaiting approval)
// replaces the refusal. With a person's approval of it on record, the
// question passes as for any call. On the memory store and on SQLite.
func TestQuestionAtResumeIsARefusal(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			st := approvalStore(t, store)
			g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}})
			if err != nil {
				t.Fatal(err)
			}
			call := func(id string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": "make deploy"}, Run: veto.Run{Ref: "r1", Fresh: true}}
			}
			last := func() veto.Event {
				evs, _ := st.Events(ctx, "r1", 0)
				return evs[len(evs)-1]
			}
			// Suspended for approval in the runtime, resumed: the rule asks.
			sa, err := g.Suspend(ctx, call("c1"), veto.AwaitApproval, nil)
			if err != nil {
				t.Fatal(err)
			}
			res := g.ResumeApproval(ctx, sa)
			if res.Execute || res.Verdict.Allowed || res.Verdict.Ask || res.Verdict.Rule != "ask.deploy" {
				t.Fatalf("a question at resume: %+v", res.Verdict)
			}
			if e := last(); e.Kind != veto.EventDenied || e.CallID != "c1" || e.Awaiting != "" || e.ArgsHash != "" {
				t.Fatalf("the refusal at resume is recorded as a question: %+v", e)
			}
			if err := g.Answer(ctx, "r1", "c1", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); !errors.Is(err, veto.ErrNoQuestion) {
				t.Fatalf("a refusal at resume can be answered: %v", err)
			}
			// Input resume: the same.
			si, err := g.Suspend(ctx, call("c2"), veto.AwaitInput, []string{"command"})
			if err != nil {
				t.Fatal(err)
			}
			if res := g.ResumeInput(ctx, si, map[string]any{"command": "make deploy now"}); res.Execute || res.Verdict.Ask {
				t.Fatalf("a question at input resume: %+v", res.Verdict)
			}
			// A call that is no resume still asks.
			if v := g.Decide(ctx, call("c3")); !v.Ask {
				t.Fatalf("a fresh call: %+v", v)
			}
			// Asked, suspended, approved on veto's page, resumed: it runs,
			// using the approval.
			s4, err := g.Suspend(ctx, call("c3"), veto.AwaitApproval, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Answer(ctx, "r1", "c3", veto.Actor{Kind: "user", ID: "ann"}, true, time.Minute); err != nil {
				t.Fatal(err)
			}
			if res := g.ResumeApproval(ctx, s4); !res.Execute || last().Approval == 0 {
				t.Fatalf("an approved resume: %+v %+v", res.Verdict, last())
			}
		})
	}
}

// noLog is a store whose log cannot be read: every read of a run's events
// fails the test.
type noLog struct {
	veto.Store
	t *testing.T
}

func (s noLog) Events(context.Context, string, uint64) ([]veto.Event, error) {
	s.t.Error("the run's events were read")
	return nil, errors.New("no log")
}

// TestApprovalsAreTheRunsProjection pins E31: questions, a person's
// answers and suspensions are part of the run's projection, looked up and
// never read from the log: over a store whose events cannot be read, a
// question is asked, answered through the hash shown (another hash is
// refused), granted once, refused once, found by its tool and arguments,
// and a suspended call asked about at resume is refused; on the memory
// store and on SQLite.
//
// E31
func TestApprovalsAreTheRunsProjection(t *testing.T) {
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			st := noLog{approvalStore(t, store), t}
			g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{asker()}})
			if err != nil {
				t.Fatal(err)
			}
			ann := veto.Actor{Kind: "user", ID: "ann"}
			call := func(id, cmd string) *veto.Call {
				return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: veto.Run{Ref: "r1", Fresh: true}}
			}
			if v := g.Decide(ctx, call("c1", "make deploy")); !v.Ask {
				t.Fatalf("the question: %+v", v)
			}
			if id, answered, ok, err := g.Question(ctx, call("", "make deploy")); err != nil || !ok || answered || id != "c1" {
				t.Fatalf("the question by its arguments: %q %v %v %v", id, answered, ok, err)
			}
			other := veto.ArgsHash(call("", "make deploy prod"))
			if err := g.AnswerShown(ctx, "r1", "c1", other, ann, true, time.Hour); !errors.Is(err, veto.ErrNotShown) {
				t.Fatalf("an answer to other arguments: %v", err)
			}
			if err := g.AnswerShown(ctx, "r1", "c1", veto.ArgsHash(call("", "make deploy")), ann, true, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, answered, _, _ := g.Question(ctx, call("", "make deploy")); !answered {
				t.Fatal("the question is not answered after the answer")
			}
			if v := g.Decide(ctx, call("c2", "make deploy")); !v.Allowed || !v.Approved() {
				t.Fatalf("the granted call: %+v", v)
			}
			if v := g.Decide(ctx, call("c3", "make deploy")); !v.Ask {
				t.Fatalf("a grant used twice: %+v", v)
			}
			if err := g.Answer(ctx, "r1", "c3", ann, false, time.Hour); err != nil {
				t.Fatal(err)
			}
			if v := g.Decide(ctx, call("c3", "make deploy")); v.Allowed || v.Reason != veto.ReasonApprovalRefused {
				t.Fatalf("the refused call asked about again: %+v", v)
			}
			s, err := g.Suspend(ctx, call("c4", "make deploy eu"), veto.AwaitApproval, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := g.ResumeApproval(ctx, s); r.Execute || r.Verdict.Ask {
				t.Fatalf("a question at resume: %+v", r.Verdict)
			}
			qs, err := veto.Waiting(ctx, st.Store.(veto.Log), veto.WaitQuery{Run: "r1"})
			if err != nil || len(qs) != 0 {
				t.Fatalf("waiting: %+v %v", qs, err)
			}
		})
	}
}
