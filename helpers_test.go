package veto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/rule"
)

// fixture is a gate over a fresh in-memory store whose log is captured.
type fixture struct {
	g     *veto.Gate
	store *memstore.Store
	log   *bytes.Buffer
}

func newFixture(t testing.TB, cfg veto.Config) *fixture {
	t.Helper()
	f := &fixture{log: &bytes.Buffer{}}
	if cfg.Store == nil {
		f.store = memstore.New()
		cfg.Store = f.store
	} else {
		switch s := cfg.Store.(type) {
		case *memstore.Store:
			f.store = s
		case *racing:
			f.store = s.Store
		case appendFails:
			f.store = s.Store
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	g, err := veto.NewGate(cfg)
	if err != nil {
		t.Fatalf("NewGate: %v", err)
	}
	f.g = g
	return f
}

// events returns the decoded events of a run.
func (f *fixture) events(t testing.TB, run string) []veto.Event {
	t.Helper()
	evs, err := f.store.Events(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// lastDecision returns the last decision event of a run.
func (f *fixture) lastDecision(t testing.TB, run string) veto.Event {
	t.Helper()
	evs := f.events(t, run)
	for i := len(evs) - 1; i >= 0; i-- {
		switch evs[i].Kind {
		case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied:
			return evs[i]
		}
	}
	t.Fatalf("run %s has no decision event", run)
	return veto.Event{}
}

func (f *fixture) history(t testing.TB, run string) veto.History {
	t.Helper()
	p, err := f.store.Load(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return p.History
}

var runSeq atomic.Int64

// call returns a call of a new fresh run.
func call(tool string, args map[string]any) *veto.Call {
	n := runSeq.Add(1)
	return &veto.Call{
		ID:   fmt.Sprintf("call-%d", n),
		Tool: tool,
		Args: args,
		Run:  veto.Run{Ref: fmt.Sprintf("run-%d", n), Fresh: true},
		Cwd:  "/work/project",
	}
}

// inRun returns a call in an existing run.
func inRun(run veto.Run, id, tool string, args map[string]any) *veto.Call {
	return &veto.Call{ID: id, Tool: tool, Args: args, Run: run, Cwd: "/work/project"}
}

// ruleOf builds a rule from a function.
func ruleOf(id string, needs veto.Needs, fn func(ctx context.Context, in *veto.Input) (veto.Decision, error)) veto.Rule {
	return &rule.Func{RuleInfo: veto.RuleInfo{ID: id, Needs: needs, Risk: veto.RiskMapping{Default: veto.RiskHigh}}, Fn: fn}
}

// counting wraps a rule and counts its calls.
type counting struct {
	veto.Rule
	n atomic.Int64
}

func (c *counting) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	c.n.Add(1)
	return c.Rule.Check(ctx, in)
}

func allowRule(id string) *counting {
	return &counting{Rule: ruleOf(id, veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Allow(), nil
	})}
}

func denyRule(id, reason string) *counting {
	return &counting{Rule: ruleOf(id, veto.Needs{}, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Deny(reason, "Denied by "+id+"."), nil
	})}
}

func needsRule(id string, needs veto.Needs) *counting {
	return &counting{Rule: ruleOf(id, needs, func(context.Context, *veto.Input) (veto.Decision, error) {
		return veto.Allow(), nil
	})}
}

func wantVerdict(t testing.TB, v veto.Verdict, allowed bool, stage veto.Stage, rule, reason string) {
	t.Helper()
	if v.Allowed != allowed || v.Stage != stage || v.Rule != rule || v.Reason != reason {
		t.Fatalf("verdict = allowed %v stage %q rule %q reason %q; want allowed %v stage %q rule %q reason %q (message %q)",
			v.Allowed, v.Stage, v.Rule, v.Reason, allowed, stage, rule, reason, v.Message)
	}
	if !allowed && v.Args != nil {
		t.Fatalf("denied verdict carries patched args")
	}
	if !allowed && v.Message == "" {
		t.Fatalf("denied verdict has no message")
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noCanary fails if canary appears in any of the texts.
func noCanary(t testing.TB, canary string, where string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, canary) {
			t.Fatalf("canary leaked into %s: %s", where, s)
		}
	}
}
