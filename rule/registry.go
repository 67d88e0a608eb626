// Package rule holds the registry that rules are collected in before a
// gate is built from them. Registration refuses mistakes: a malformed or
// duplicate id is an error, never "the last one wins".
package rule

import (
	"context"
	"fmt"
	"sync"

	"github.com/vetohq/veto"
)

// Registry is an ordered set of rules with unique, well-formed ids. The
// zero value is empty and ready to use; it is safe for concurrent use.
type Registry struct {
	mu    sync.Mutex
	rules []veto.Rule
	ids   map[string]bool
}

// Register adds r after the rules already registered. It refuses a nil
// rule, a malformed id, a malformed reason in the risk mapping, and an id
// that is already registered.
func (g *Registry) Register(r veto.Rule) error {
	if r == nil {
		return fmt.Errorf("rule: register: nil rule")
	}
	info := r.Info()
	if err := veto.CheckRuleInfo(info); err != nil {
		return fmt.Errorf("rule: register: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ids[info.ID] {
		return fmt.Errorf("rule: register: duplicate rule id %q", info.ID)
	}
	if g.ids == nil {
		g.ids = map[string]bool{}
	}
	g.ids[info.ID] = true
	g.rules = append(g.rules, r)
	return nil
}

// MustRegister is Register for package initialisation: a mistake there is
// a programming error, so it panics.
func (g *Registry) MustRegister(r veto.Rule) {
	if err := g.Register(r); err != nil {
		panic(err)
	}
}

// Rules returns the registered rules in registration order.
func (g *Registry) Rules() []veto.Rule {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]veto.Rule(nil), g.rules...)
}

// Func is a rule made of an id, its declarations and a function, for
// rules too small for a type of their own.
type Func struct {
	RuleInfo veto.RuleInfo
	Fn       func(ctx context.Context, in *veto.Input) (veto.Decision, error)
}

// Info implements veto.Rule.
func (f *Func) Info() veto.RuleInfo { return f.RuleInfo }

// Check implements veto.Rule.
func (f *Func) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	return f.Fn(ctx, in)
}
