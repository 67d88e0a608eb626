package veto_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
)

// longRun opens a SQLite state whose run "long" holds n events as a
// session that asks a person now and then leaves them: every 50 events a
// question, its grant and the call that used it, a refusal of another
// question, and otherwise allowed calls and their observations, all of
// the last hour (inside the 24 hours an approval may last).
func longRun(b *testing.B, n int) (veto.Store, *veto.Gate) {
	b.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	now := time.Now().UTC().Add(-time.Hour)
	ok := true
	evs := []veto.Event{{Kind: veto.EventRunStarted, Complete: &ok}}
	for i := 1; len(evs) < n; i++ {
		id := "f" + strconv.Itoa(i)
		hash := veto.ArgsHash(&veto.Call{Args: map[string]any{"command": "make deploy " + id}})
		switch i % 10 {
		case 0:
			seq := uint64(len(evs) + 2) // the grant's: after the question
			evs = append(evs,
				veto.Event{Kind: veto.EventDenied, CallID: id, Tool: "Bash", Rule: "ask.deploy", Reason: "deploy_needs_person", Awaiting: veto.AwaitApproval, ArgsHash: hash},
				veto.Event{Kind: veto.EventApproved, CallID: id, Tool: "Bash", Rule: "ask.deploy", Reason: "deploy_needs_person", ArgsHash: hash,
					Actor: veto.Actor{Kind: "user", ID: "ann"}, Expires: now.Add(10 * time.Hour)},
				veto.Event{Kind: veto.EventAllowed, CallID: id + "b", Tool: "Bash", Approval: seq})
		case 5:
			evs = append(evs,
				veto.Event{Kind: veto.EventDenied, CallID: id, Tool: "Bash", Rule: "ask.deploy", Reason: "deploy_needs_person", Awaiting: veto.AwaitApproval, ArgsHash: hash},
				veto.Event{Kind: veto.EventApprovalRefused, CallID: id, Tool: "Bash", Rule: "ask.deploy", Reason: "deploy_needs_person", ArgsHash: hash,
					Actor: veto.Actor{Kind: "user", ID: "ann"}})
		default:
			evs = append(evs,
				veto.Event{Kind: veto.EventAllowed, CallID: id, Tool: "Read"},
				veto.Event{Kind: veto.EventObserved, CallID: id, Tool: "Read", Outcome: veto.Succeeded})
		}
	}
	evs = evs[:n]
	for i := range evs {
		evs[i].V, evs[i].Run, evs[i].Seq, evs[i].Time = veto.EventVersion, "long", uint64(i+1), now
	}
	for i := 0; i < len(evs); i += 1000 {
		batch := evs[i:min(i+1000, len(evs))]
		if err := s.Append(ctx, "long", batch[0].Seq, batch); err != nil {
			b.Fatal(err)
		}
	}
	g, err := veto.NewGate(veto.Config{Store: s, Rules: []veto.Rule{asker(), denier("rm")}})
	if err != nil {
		b.Fatal(err)
	}
	return s, g
}

// BenchmarkDenyLongRun is a denied call in a run of 10 events and in a
// run of 10,000 on SQLite: the denial looks up whether it uses a person's
// grant in the run's projection, and costs the same for both.
func BenchmarkDenyLongRun(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			_, g := longRun(b, n)
			ctx := context.Background()
			args := map[string]any{"command": "rm -r build"}
			i := 0
			for b.Loop() {
				i++
				v := g.Decide(ctx, &veto.Call{ID: "d" + strconv.Itoa(i), Tool: "Bash", Args: args, Run: veto.Run{Ref: "long"}})
				if v.Allowed || v.Rule != "deny.rm" {
					b.Fatalf("%+v", v)
				}
			}
		})
	}
}

// BenchmarkGrantLongRun is a question answered by a grant, in runs of 10
// and 10,000 events on SQLite: each round a call is asked about, a person
// grants it (the answer deletes the arguments held for the page, with
// SQLite's checkpoint), and the same call, made again, is allowed on the
// grant. The granted decision alone is reported too (decide-ns/op).
func BenchmarkGrantLongRun(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			_, g := longRun(b, n)
			ctx := context.Background()
			args := map[string]any{"command": "make deploy staging"}
			ann := veto.Actor{Kind: "user", ID: "ann"}
			var decide time.Duration
			i := 0
			for b.Loop() {
				i++
				id := "q" + strconv.Itoa(i)
				if v := g.Decide(ctx, &veto.Call{ID: id, Tool: "Bash", Args: args, Run: veto.Run{Ref: "long"}}); !v.Ask {
					b.Fatalf("question: %+v", v)
				}
				if err := g.Answer(ctx, "long", id, ann, true, time.Hour); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				v := g.Decide(ctx, &veto.Call{ID: id + "b", Tool: "Bash", Args: args, Run: veto.Run{Ref: "long"}})
				decide += time.Since(t0)
				if !v.Allowed || !v.Approved() {
					b.Fatalf("granted: %+v", v)
				}
			}
			b.ReportMetric(float64(decide.Nanoseconds())/float64(i), "decide-ns/op")
		})
	}
}
