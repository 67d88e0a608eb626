package server_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/client"
	"github.com/vetohq/veto/eventlog"
)

// TestTwoInstancesShareOneRun: two services, each with its own pool and
// gate, on one PostgreSQL database, decide one run's calls alternately: a
// Read recorded through one is known to a Write decided by the other, the
// egress allow-list agrees, and concurrent calls through both are ordered
// by the run's sequence, none lost or doubled.
func TestTwoInstancesShareOneRun(t *testing.T) {
	dsn := freshPG(t)
	w := newWorld(t)
	st1, d := pgStore(t, dsn)
	st2, _ := pgStore(t, dsn)
	a, b := start(t, w, st1, d, nil), start(t, w, st2, d, nil)
	tok := a.token("agent:fleet") // made through one, known to both
	ctx := context.Background()
	ca, cb := client.New(a.url, tok, nil), client.New(b.url, tok, nil)
	call := func(id, tool string, args map[string]any) *veto.Call {
		return &veto.Call{ID: id, Tool: tool, Args: args, Cwd: w.work, Run: veto.Run{Ref: "fleet-1", Fresh: true}}
	}
	mustVerdict := func(c *client.Client, call *veto.Call, allowed bool, reason string) {
		t.Helper()
		v, err := c.Decide(ctx, call)
		if err != nil || v.Allowed != allowed || (reason != "" && v.Reason != reason) {
			t.Fatalf("%s %s: %+v, %v; want allowed=%v %s", call.ID, call.Tool, v, err, allowed, reason)
		}
	}
	if err := ca.Start(ctx, "fleet-1", true); err != nil {
		t.Fatal(err)
	}
	read := call("c1", "Read", map[string]any{"file_path": filepath.Join(w.work, "main.go")})
	mustVerdict(ca, read, true, "")
	if err := ca.Observe(ctx, read, veto.Succeeded); err != nil {
		t.Fatal(err)
	}
	mustVerdict(cb, call("c2", "Write", map[string]any{"file_path": filepath.Join(w.work, "main.go"), "content": "x"}), true, "")
	mustVerdict(cb, call("c3", "Write", map[string]any{"file_path": filepath.Join(w.work, "other.go"), "content": "x"}), false, "overwrite_unread")
	mustVerdict(ca, call("c4", "WebFetch", map[string]any{"url": "https://docs.example.org/x"}), true, "")
	mustVerdict(cb, call("c5", "WebFetch", map[string]any{"url": "https://elsewhere.example.net/x"}), false, "egress_not_listed")
	// A private read through one taints the run for the other.
	secret := call("c6", "Read", map[string]any{"file_path": filepath.Join(w.work, "secrets", "plan.txt")})
	mustVerdict(cb, secret, true, "")
	if err := cb.Observe(ctx, secret, veto.Succeeded); err != nil {
		t.Fatal(err)
	}
	mustVerdict(ca, call("c7", "WebFetch", map[string]any{"url": "https://docs.example.org/y"}), false, "private_read_before_egress")

	// Concurrent calls through both instances, on the one run.
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := ca
			if i%2 == 1 {
				c = cb
			}
			v, err := c.Decide(ctx, call(fmt.Sprintf("p%d", i), "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))
			if err != nil || !v.Allowed {
				errs <- fmt.Errorf("p%d: %+v %v", i, v, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := decisions(t, st1, "fleet-1")
	for i := range n {
		if d := got[fmt.Sprintf("p%d", i)]; len(d) != 1 {
			t.Errorf("p%d has %d decisions, want 1", i, len(d))
		}
	}
	first, prev, stored, err := st2.Chain(ctx, "fleet-1")
	if err != nil {
		t.Fatal(err)
	}
	if br := eventlog.VerifyChain(stored, first, prev); br != nil {
		t.Fatalf("the run's chain breaks: %v", br)
	}

	// A token revoked through one instance is refused by the other once
	// its second of trust has passed.
	list, err := b.toks.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("tokens: %v %v", list, err)
	}
	if err := b.toks.Revoke(ctx, list[0].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	v, err := ca.Decide(ctx, call("r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))
	var ce *client.Error
	if v.Allowed || !errors.As(err, &ce) || ce.Status != 401 || ce.Reason != "unauthenticated" {
		t.Fatalf("after revocation through the other instance: %+v %v", v, err)
	}
}
