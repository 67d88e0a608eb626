package veto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/vetohq/veto/internal/loaded"
)

// Config is what a Gate is built from. Only Store is required.
type Config struct {
	// Rules run in this order; the first denial wins. No rules means
	// offerability alone decides.
	Rules     []Rule
	Resolvers []Resolver
	// Offer decides whether a tool takes part in a run at all; nil offers
	// every tool (subject to the live list, when LiveTools is set).
	Offer    Offerability
	Tools    []Descriptor
	Patchers []Patcher
	// Probe looks at the world for rules that need it (nil: rules that
	// ask fail closed). Learners turn successful calls into knowledge.
	Probe    Probe
	Learners []Learner
	Store    Store
	Logger   *slog.Logger // nil discards
	Limits   Limits       // zero means DefaultLimits

	// PolicyTools are the tool names the policy refers to. When LiveTools
	// is set, every one of them must be offered by the runtime, or every
	// call is denied (the floor).
	PolicyTools []string
	// LiveTools returns the tools the runtime offers; nil when the adapter
	// cannot know.
	LiveTools func(ctx context.Context) ([]string, error)

	PolicyRev string           // recorded in every decision event
	Now       func() time.Time // nil means time.Now

	// Monitor names the rules in monitor mode, by id: such a rule decides
	// as usual, but its denial (or question, or failure) lets the call
	// run, and the allow records what it would have done (WouldDeny,
	// WouldReason). Every other stage keeps failing closed.
	Monitor map[string]bool
}

// Gate is veto's one decision function and what it needs. It is safe for
// concurrent use.
type Gate struct {
	rules     []ruleEntry
	resolvers []Resolver
	offer     Offerability
	tools     map[string]*Descriptor
	patchers  []Patcher
	probe     Probe
	learners  []Learner
	store     Store
	log       *slog.Logger
	limits    Limits
	rev       string
	now       func() time.Time

	policyTools []string
	liveTools   func(ctx context.Context) ([]string, error)
	floorMu     sync.Mutex
	floorDone   bool
	floorErr    string          // non-empty: every call is denied with it
	live        map[string]bool // the runtime's tools, when known
}

type ruleEntry struct {
	rule    Rule
	info    RuleInfo
	scoped  Scoped // nil: the rule applies to every call
	monitor bool   // the rule's refusals are recorded, not enforced
}

// maxAttempts bounds how often a decision is retried when another writer
// appended to the run between loading its history and recording. Many
// writers on one run (instances of veto serve sharing a database) take
// turns: after the first retries each waits a random while, longer each
// time, within the decision's deadline.
const maxAttempts = 32

// holdAfter is how many tries of a decision (or of an append) may lose to
// another writer before the next one holds the run's row from its load to
// its append (loaded.Holding): a try that holds it cannot lose. The first
// tries hold nothing, so a decision that does not race another writer,
// or races one once, locks nothing while its rules run.
const holdAfter = 2

// try returns the context of a decision's or an append's try attempt
// (0-based), with a note of its own (internal/loaded), which holds the
// run's row after holdAfter tries lost; the caller releases the note
// once the try is over.
func try(ctx context.Context, attempt int) (context.Context, *loaded.Note) {
	tctx := loaded.With(ctx)
	if attempt >= holdAfter {
		tctx = loaded.Holding(ctx)
	}
	return tctx, loaded.From(tctx)
}

// backoff waits before retry attempt (1-based) of an append that lost to
// another writer; false means the context ended first.
func backoff(ctx context.Context, attempt int) bool {
	if attempt < 2 {
		return ctx.Err() == nil
	}
	limit := time.Duration(100<<min(attempt, 7)) * time.Microsecond // 400µs … 12.8ms
	t := time.NewTimer(rand.N(limit) + 50*time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// NewGate validates cfg and builds a Gate. Rule ids must be well formed and
// unique; reason-to-risk mappings must name well-formed reasons.
func NewGate(cfg Config) (*Gate, error) {
	if cfg.Store == nil {
		return nil, errors.New("veto: Config.Store is required")
	}
	g := &Gate{
		resolvers:   slices.Clone(cfg.Resolvers),
		offer:       cfg.Offer,
		tools:       make(map[string]*Descriptor, len(cfg.Tools)),
		patchers:    slices.Clone(cfg.Patchers),
		probe:       cfg.Probe,
		learners:    slices.Clone(cfg.Learners),
		store:       cfg.Store,
		log:         cfg.Logger,
		limits:      cfg.Limits,
		rev:         cfg.PolicyRev,
		now:         cfg.Now,
		policyTools: slices.Clone(cfg.PolicyTools),
		liveTools:   cfg.LiveTools,
	}
	if g.log == nil {
		g.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if g.limits == (Limits{}) {
		g.limits = DefaultLimits
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.probe == nil {
		g.probe = noProbe{}
	}
	seen := map[string]bool{}
	for id := range cfg.Monitor {
		if !ValidID(id) {
			return nil, fmt.Errorf("veto: monitor names malformed rule id %q", id)
		}
	}
	for i, r := range cfg.Rules {
		if r == nil {
			return nil, fmt.Errorf("veto: rule %d is nil", i)
		}
		info := r.Info()
		if err := CheckRuleInfo(info); err != nil {
			return nil, err
		}
		if seen[info.ID] {
			return nil, fmt.Errorf("veto: duplicate rule id %q", info.ID)
		}
		seen[info.ID] = true
		sc, _ := r.(Scoped)
		g.rules = append(g.rules, ruleEntry{rule: r, info: info, scoped: sc, monitor: cfg.Monitor[info.ID]})
	}
	for i := range cfg.Tools {
		d := cfg.Tools[i]
		if d.Name == "" {
			return nil, fmt.Errorf("veto: tool descriptor %d has no name", i)
		}
		if _, dup := g.tools[d.Name]; dup {
			return nil, fmt.Errorf("veto: duplicate tool descriptor %q", d.Name)
		}
		g.tools[d.Name] = &d
	}
	return g, nil
}

// CheckRuleInfo reports what is wrong with a rule's declaration, if
// anything: a malformed id or a malformed reason in its risk mapping.
func CheckRuleInfo(info RuleInfo) error {
	if !ValidID(info.ID) {
		return fmt.Errorf("veto: rule id %q must match [a-z][a-z0-9_.-]* and be at most %d characters", info.ID, MaxIDLen)
	}
	for reason := range info.Advice.ByReason {
		if !ValidID(reason) {
			return fmt.Errorf("veto: rule %s gives advice for malformed reason %q", info.ID, reason)
		}
	}
	for reason, risk := range info.Risk.ByReason {
		if !ValidID(reason) {
			return fmt.Errorf("veto: rule %s maps malformed reason %q to a risk", info.ID, reason)
		}
		if risk > RiskCritical {
			return fmt.Errorf("veto: rule %s maps reason %s to an invalid risk", info.ID, reason)
		}
	}
	return nil
}

// PolicyRev is the policy revision the gate records in every decision.
func (g *Gate) PolicyRev() string { return g.rev }

// Descriptor returns the descriptor of a tool, or nil.
func (g *Gate) Descriptor(tool string) *Descriptor { return g.tools[tool] }
