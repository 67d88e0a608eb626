package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/sqlite"
)

// TestApprovalsMigrationFoldsTheLog: a state written before questions
// were a projection (three migrations) is given them by the fourth, folded
// from the events already recorded: the grant, the refusal, the open
// question and the suspension are found as before, and a decision uses
// the grant.
func TestApprovalsMigrationFoldsTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "veto.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ask := &rule.Func{RuleInfo: veto.RuleInfo{ID: "ask.word", FixedMessages: true},
		Fn: func(_ context.Context, in *veto.Input) (veto.Decision, error) {
			if cmd, _ := in.Call.Args["command"].(string); strings.HasPrefix(cmd, "ask") {
				return veto.Ask("word_needs_person", "The word needs a person."), nil
			}
			return veto.Allow(), nil
		}}
	gateOn := func(st veto.Store) *veto.Gate {
		g, err := veto.NewGate(veto.Config{Store: st, Rules: []veto.Rule{ask}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := gateOn(s)
	run := veto.Run{Ref: "old", Fresh: true}
	call := func(id, cmd string) *veto.Call {
		return &veto.Call{ID: id, Tool: "Bash", Args: map[string]any{"command": cmd}, Run: run}
	}
	ann := veto.Actor{Kind: "user", ID: "ann"}
	for _, c := range []*veto.Call{call("g", "ask grant"), call("r", "ask refuse"), call("w", "ask wait")} {
		if v := g.Decide(ctx, c); !v.Ask {
			t.Fatalf("question %s: %+v", c.ID, v)
		}
	}
	if err := g.Answer(ctx, "old", "g", ann, true, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := g.Answer(ctx, "old", "r", ann, false, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Suspend(ctx, call("s", "fine"), veto.AwaitApproval, nil); err != nil {
		t.Fatal(err)
	}
	// Back to three migrations: what a veto before this one wrote.
	for _, q := range []string{`DROP TABLE veto_questions`, `DROP TABLE veto_answers`, `DROP TABLE veto_suspended`, `DROP TABLE veto_shown`,
		`ALTER TABLE veto_runs DROP COLUMN n_grants`, `ALTER TABLE veto_runs DROP COLUMN n_suspended`,
		`UPDATE veto_meta SET value = '3' WHERE key = 'migrations'`} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Migrations(ctx); err != nil || n != 5 {
		t.Fatalf("migrations %d %v", n, err)
	}
	p, err := s.Load(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	a := p.Approvals
	if seq, err := a.Grant(ctx, "Bash", veto.ArgsHash(call("", "ask grant")), veto.Actor{}, time.Now()); err != nil || seq == 0 {
		t.Fatalf("grant after the migration: %d %v", seq, err)
	}
	if seq, err := a.Refusal(ctx, "r", "Bash", veto.ArgsHash(call("", "ask refuse"))); err != nil || seq == 0 {
		t.Fatalf("refusal after the migration: %d %v", seq, err)
	}
	if ok, err := a.Suspended(ctx, "s"); err != nil || !ok {
		t.Fatalf("suspension after the migration: %v %v", ok, err)
	}
	qs, err := veto.Waiting(ctx, s, veto.WaitQuery{})
	if err != nil || len(qs) != 1 || qs[0].CallID != "w" {
		t.Fatalf("waiting after the migration: %+v %v", qs, err)
	}
	if v := gateOn(s).Decide(ctx, call("g2", "ask grant")); !v.Allowed || !v.Approved() {
		t.Fatalf("the granted call after the migration: %+v", v)
	}
}
