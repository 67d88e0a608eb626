package replay_test

import (
	"path/filepath"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/replay"
	"github.com/vetohq/veto/sqlite"
)

const allowlist = `egress:
  mode: allowlist
  allow: [api.example.com]
`

// A run whose allow-list a person widened mid-run replays each call under
// the list in force when it was decided.
//
// E24
func TestReplaySeesTheAllowListInForceAtEachCall(t *testing.T) {
	ws := workspace(t)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := builtin(t, allowlist)
	g, err := p.Gate(policy.BuildOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	var calls []replay.Call
	fetch := func(id, url string) veto.Verdict {
		c := veto.Call{ID: id, Tool: "WebFetch", Args: map[string]any{"url": url, "prompt": "p"}, Cwd: ws, Run: veto.Run{Ref: "sess-e", Fresh: true}}
		v := g.Decide(ctx, &c)
		calls = append(calls, replay.Call{Call: c, Outcome: veto.Succeeded})
		if v.Allowed {
			if err := g.ObserveCall(ctx, &c, veto.Succeeded); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	if v := fetch("f1", "https://api.example.com/a"); !v.Allowed {
		t.Fatalf("listed host: %+v", v)
	}
	if v := fetch("f2", "https://docs.example.org/x"); v.Allowed || v.Reason != "egress_not_listed" {
		t.Fatalf("unlisted host: %+v", v)
	}
	if err := g.AllowEgress(ctx, "sess-e", "docs.example.org"); err != nil {
		t.Fatal(err)
	}
	if v := fetch("f3", "https://docs.example.org/y"); !v.Allowed {
		t.Fatalf("host allowed mid-run: %+v", v)
	}
	if err := g.AllowEgress(ctx, "nobody", "x.example"); err != veto.ErrNoRun {
		t.Fatalf("allow on a run with no events: %v, want ErrNoRun", err)
	}
	events, err := store.Events(ctx, "sess-e", 0)
	if err != nil {
		t.Fatal(err)
	}

	// The same policy: f2 stays denied (the list did not hold the host
	// then), f3 stays allowed (it did).
	rep, err := replay.Run(ctx, calls, events, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unchanged != 3 || len(rep.Changes) != 0 {
		t.Fatalf("same policy changed verdicts: %+v", rep)
	}

	// Without the recorded additions f3 would be denied: the replay
	// really uses them.
	var noAllows []veto.Event
	for _, e := range events {
		if e.Kind != veto.EventEgressAllowed {
			noAllows = append(noAllows, e)
		}
	}
	rep, err = replay.Run(ctx, calls, noAllows, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewlyDenied != 1 || len(rep.Changes) != 1 || rep.Changes[0].CallID != "f3" || rep.Changes[0].After.Reason != "egress_not_listed" {
		t.Fatalf("replay without the additions: %+v", rep)
	}

	// In open mode f2 would have run.
	rep, err = replay.Run(ctx, calls, events, builtin(t, ""), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewlyAllowed != 1 || rep.Changes[0].CallID != "f2" {
		t.Fatalf("open mode: %+v", rep)
	}
}
