package veto

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
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
	rule   Rule
	info   RuleInfo
	scoped Scoped // nil: the rule applies to every call
}

// maxAttempts bounds how often a decision is retried when another writer
// appended to the run between loading its history and recording.
const maxAttempts = 4

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
		g.rules = append(g.rules, ruleEntry{rule: r, info: info, scoped: sc})
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

// Descriptor returns the descriptor of a tool, or nil.
func (g *Gate) Descriptor(tool string) *Descriptor { return g.tools[tool] }

// Decide decides one call: allow, or deny with a reason. It never returns
// an error: every failure on the way is a denial.
func (g *Gate) Decide(ctx context.Context, c *Call) Verdict {
	return g.decide(ctx, c, nil)
}

// Start opens a run explicitly, as a client's session start does: it
// records the run's start (with its history complete or not, by the rules
// of Run) and checks the floor. A run that already has events is left as
// it is. The returned error describes a floor mismatch or a store failure;
// calls are denied for either whether or not the caller looks at it.
func (g *Gate) Start(ctx context.Context, r Run) error {
	if msg := g.checkFloor(ctx); msg != "" {
		return errors.New(msg)
	}
	if r.Ref == "" || len(r.Ref) > g.limits.MaxName {
		return errors.New("veto: run reference missing or too long")
	}
	return g.appendRetrying(ctx, r.Ref, func(p *RunState) []Event {
		if p.Exists() {
			return nil
		}
		return g.startEvents(&r, p, g.now())
	})
}

// appendRetrying appends the events build returns for the run's current
// state, loading it again and rebuilding when another writer got there
// first. build returning nothing appends nothing.
func (g *Gate) appendRetrying(ctx context.Context, run string, build func(p *RunState) []Event) error {
	for attempt := 0; ; attempt++ {
		p, err := g.store.Load(ctx, run)
		if err != nil {
			return fmt.Errorf("veto: load run: %w", err)
		}
		next := p.Next
		evs := build(&p)
		if len(evs) == 0 {
			return nil
		}
		g.stamp(run, next, g.now(), evs)
		err = g.store.Append(ctx, run, next, evs)
		if errors.Is(err, ErrConflict) && attempt < maxAttempts {
			continue
		}
		return err
	}
}

// observed is an observation event, opened by an incomplete start when
// the run was never started: whatever came before it is unknown.
func observed(p *RunState, e Event) []Event {
	var evs []Event
	if !p.Exists() {
		f := false
		evs = append(evs, Event{Kind: EventRunStarted, Complete: &f})
	}
	e.Kind = EventObserved
	return append(evs, e)
}

// Observe records what the runtime saw a call do. Knowledge and history
// rules learn only from observations; a call that was denied or never
// reported back teaches nothing beyond its pending or denied outcome.
func (g *Gate) Observe(ctx context.Context, run string, o Observation) error {
	if err := o.validate(); err != nil {
		return fmt.Errorf("veto: observe: %w", err)
	}
	if o.CallID == "" || run == "" || len(run) > g.limits.MaxName || len(o.CallID) > g.limits.MaxName ||
		len(o.Tool) > g.limits.MaxName || len(o.Target.ID) > g.limits.MaxPath {
		return errors.New("veto: observe: run, call id, tool or target missing or out of bounds")
	}
	return g.appendRetrying(ctx, run, func(p *RunState) []Event {
		return observed(p, Event{CallID: o.CallID, Tool: o.Tool, Outcome: o.Outcome, Target: o.Target})
	})
}

// ObserveCall records what the runtime saw a call do, given the call as
// it ran. When it succeeded, the learners probe what it read or wrote and
// the facts become the run's knowledge, recorded in the same event. A call
// that failed, was cancelled or was denied teaches nothing.
func (g *Gate) ObserveCall(ctx context.Context, c *Call, outcome Outcome) error {
	if !outcome.Valid() || outcome == Pending {
		return fmt.Errorf("veto: observe: outcome %q is not a result", outcome)
	}
	if c.ID == "" || c.Run.Ref == "" {
		return errors.New("veto: observe: the call needs an id and a run")
	}
	if err := g.limits.checkCall(c); err != nil {
		return fmt.Errorf("veto: observe: %w", err)
	}
	var files []FileFact
	if outcome == Succeeded {
		rp := &recordingProbe{inner: g.probe, max: maxProbes}
		for _, l := range g.learners {
			if err := learn(ctx, l, c, g.tools[c.Tool], rp); err != nil {
				// What the call taught cannot be vouched for: record the
				// outcome without it, so the run knows less, never more.
				rp.facts = nil
				g.log.LogAttrs(ctx, slog.LevelWarn, "knowledge not recorded", slog.String("call_id", c.ID), slog.String("tool", c.Tool))
				break
			}
		}
		files = rp.facts
	}
	return g.appendRetrying(ctx, c.Run.Ref, func(p *RunState) []Event {
		return observed(p, Event{CallID: c.ID, Tool: c.Tool, Outcome: outcome, Files: files})
	})
}

func learn(ctx context.Context, l Learner, c *Call, d *Descriptor, p Probe) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("learner panicked")
		}
	}()
	paths, err := l.Touched(c, d)
	if err != nil {
		return err
	}
	for _, path := range paths {
		if _, err := p.File(ctx, path); err != nil {
			return err
		}
	}
	return nil
}

// decideOpts carries what a resume path adds to a decision.
type decideOpts struct {
	stage   Stage  // the entry point's own refusal, checked right after bounds
	reason  string // empty: none
	message string

	explain *Explanation // explain: record every rule's outcome, and record no event
}

// decide is the one decision function. Every entry point calls it.
func (g *Gate) decide(ctx context.Context, in *Call, opts *decideOpts) (v Verdict) {
	// One allocation holds what the decision hands to rules and the store.
	scratch := &scratch{call: *in}
	c := &scratch.call
	if c.ID == "" {
		c.ID = newCallID()
	}
	if c.Time.IsZero() {
		c.Time = g.now()
	}
	defer func() {
		if recover() != nil {
			v = g.deny(c, StageEngine, "", ReasonInternal, RiskHigh, "veto failed while deciding this call, so it is refused.")
			v.Allowed, v.Args = false, nil
			g.logVerdict(ctx, &v)
		}
	}()
	for attempt := 0; ; attempt++ {
		v, base, evs := g.evaluate(ctx, scratch, opts)
		if base == 0 { // the run's state could not be loaded or keyed: nothing to record
			g.logVerdict(ctx, &v)
			return v
		}
		if v.Allowed && ctx.Err() != nil {
			v = g.deny(c, StageRecord, "", ReasonCancelled, RiskMedium, "the decision ran out of time, so the call is refused.")
			evs[len(evs)-1] = g.decisionEvent(&v, c)
		}
		if opts != nil && opts.explain != nil {
			return v // a dry run: nothing is recorded
		}
		g.stamp(v.Run, base, c.Time, evs)
		err := g.store.Append(ctx, v.Run, base, evs)
		if errors.Is(err, ErrConflict) && attempt < maxAttempts {
			continue // someone else appended to this run: decide again on the new history
		}
		if err != nil {
			if v.Allowed {
				v = g.deny(c, StageRecord, "", ReasonStateUnavailable, RiskHigh, "veto could not record this decision, so the call is refused.")
			}
			g.log.LogAttrs(ctx, slog.LevelError, "decision not recorded", slog.String("call_id", v.CallID), slog.String("run", v.Run))
			g.logVerdict(ctx, &v)
			return v
		}
		v.Seq = evs[len(evs)-1].Seq
		g.logVerdict(ctx, &v)
		return v
	}
}

// evaluate runs the stages up to the record. It returns the verdict, the
// sequence number the events must start at (0: do not record), and the
// events to append: the run's start when the run is new, and the decision.
func (g *Gate) evaluate(ctx context.Context, s *scratch, opts *decideOpts) (Verdict, uint64, []Event) {
	c := &s.call
	boundsErr := g.limits.checkCall(c)
	if boundsErr != nil {
		g.clamp(c)
	}
	if c.Run.Ref == "" {
		c.Run.Ref = "call-" + c.ID // a call outside any run is a run of its own
	}
	if len(c.Run.Ref) > g.limits.MaxName {
		return g.deny(c, StageBounds, "", ReasonBoundsExceeded, RiskHigh, "The call exceeds a bound: run reference too long."), 0, nil
	}

	p, err := g.store.Load(ctx, c.Run.Ref)
	if err != nil {
		return g.deny(c, StageState, "", ReasonStateUnavailable, RiskHigh, "veto could not load this run's history, so the call is refused."), 0, nil
	}
	base := p.Next
	evs := s.events[:0]
	if !p.Exists() {
		evs = append(evs, g.startEvents(&c.Run, &p, c.Time)...)
	}
	s.probe = recordingProbe{inner: g.probe, facts: s.probe.facts[:0], max: maxProbes}
	finish := func(v Verdict) (Verdict, uint64, []Event) {
		for i := range s.probe.facts {
			evs = append(evs, Event{Kind: EventProbe, CallID: c.ID, Tool: c.Tool, Fact: &s.probe.facts[i]})
		}
		return v, base, append(evs, g.decisionEvent(&v, c))
	}

	// 1. Bounds.
	if boundsErr == nil && p.History.Len() >= g.limits.MaxHistory {
		boundsErr = exceeded("the run already holds %d observations, the most it may", g.limits.MaxHistory)
	}
	if boundsErr != nil {
		return finish(g.deny(c, StageBounds, "", ReasonBoundsExceeded, RiskHigh, "The call exceeds a bound: "+boundsErr.Error()+"."))
	}
	if opts != nil && opts.reason != "" {
		return finish(g.deny(c, opts.stage, "", opts.reason, RiskMedium, opts.message))
	}

	// 2. Floor.
	if msg := g.checkFloor(ctx); msg != "" {
		return finish(g.deny(c, StageFloor, "", ReasonFloorMismatch, RiskHigh, msg))
	}

	// 3. Offerability.
	desc := g.tools[c.Tool]
	if td, failed := g.offered(ctx, c, desc); failed {
		return finish(g.deny(c, StageOffer, "", ReasonRuleFailed, RiskHigh, "veto could not tell whether this tool is offered in this run, so the call is refused."))
	} else if td != "" {
		v := g.deny(c, StageOffer, "", ReasonToolDenied, RiskMedium, toolDenialMessage(td))
		v.ToolDenial, v.Advice = td, Advice{Policy: "offer"}
		return finish(v)
	}

	// 4. Target. Resolvers see the Input the rules will see.
	s.hist = p.History
	rin := &s.in
	*rin = Input{Call: c, Descriptor: desc, History: &s.hist, Knowledge: p.Knowledge, Tally: p.Tally, Probe: &s.probe}
	if rin.Knowledge == nil {
		rin.Knowledge = NoKnowledge
	}
	if rin.Tally == nil {
		rin.Tally = HistoryTally(&s.hist)
	}
	target, reason := g.resolve(ctx, rin)
	switch reason {
	case ReasonTargetAmbiguous:
		return finish(g.deny(c, StageTarget, "", reason, RiskHigh, "More than one resolver claimed this call's target; veto does not guess which is right."))
	case ReasonTargetUnresolvable:
		return finish(g.deny(c, StageTarget, "", reason, RiskHigh, "The call's target could not be resolved, so the call is refused."))
	}
	rin.Target = target

	// 5. Rules, in order; the first denial wins.
	if opts != nil && opts.explain != nil {
		g.explainRules(ctx, rin, opts.explain)
	}
	if i, d, outcome := g.runRules(ctx, rin); outcome != ruleAllowed {
		r := &g.rules[i]
		var v Verdict
		switch outcome {
		case ruleNeedsHistory:
			v = g.deny(c, StageRule, r.info.ID, ReasonHistoryIncomplete, RiskMedium,
				"Rule "+r.info.ID+" needs this run's complete history, and veto cannot prove it.")
		case ruleNeedsTarget:
			v = g.deny(c, StageRule, r.info.ID, ReasonTargetUnknown, RiskMedium,
				"Rule "+r.info.ID+" needs to know what this call acts on, and no resolver could tell.")
		case ruleFailed:
			v = g.deny(c, StageRule, r.info.ID, ReasonRuleFailed, RiskHigh, "Rule "+r.info.ID+" failed while checking this call, so it is refused.")
		default:
			v = g.deny(c, StageRule, r.info.ID, d.reason, r.info.Risk.Of(d.reason), sanitizeMessage(d.message, c, r.info.ID, d.reason))
		}
		v.Target, v.Advice = target, r.info.Advice.Of(v.Reason)
		return finish(v)
	}

	// 7. Patch. It runs before the record so that a patcher's failure is
	// the verdict recorded; the patched input leaves only after the record.
	v := Verdict{Allowed: true, CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Target: target}
	if len(g.patchers) > 0 {
		args, changed, failed := g.patch(ctx, rin)
		if failed {
			v = g.deny(c, StagePatch, "", ReasonPatchFailed, RiskMedium, "veto could not prepare this call's input, so it is refused.")
			v.Target = target
			return finish(v)
		}
		if changed {
			v.Args = args
		}
	}
	return finish(v)
}

// maxProbes bounds how many paths one decision may look at.
const maxProbes = 64

// scratch is the memory of one decision, allocated once.
type scratch struct {
	call   Call
	in     Input
	hist   History
	probe  recordingProbe
	events [1]Event // the decision; a new run's start events grow past it
}

// startEvents returns the events that open a run veto has not seen, and
// sets st's history to the run's initial history.
func (g *Gate) startEvents(r *Run, st *RunState, t time.Time) []Event {
	complete := r.Fresh && !r.seeded()
	var seed []Event
	var initial []Observation
	if !complete && r.Initial != nil {
		complete = true
		ids := make(map[string]bool, len(r.Initial))
		for _, o := range r.Initial {
			if o.validate() != nil || o.CallID == "" || ids[o.CallID] || len(o.CallID) > g.limits.MaxName ||
				len(o.Tool) > g.limits.MaxName || len(o.Target.ID) > g.limits.MaxPath {
				complete = false // an observation veto cannot vouch for proves nothing
				seed, initial = nil, nil
				break
			}
			ids[o.CallID] = true
			seed = append(seed, Event{Kind: EventObserved, CallID: o.CallID, Tool: o.Tool, Outcome: o.Outcome, Target: o.Target})
			initial = append(initial, o)
		}
		if r.Retries > 0 && len(seed) == 0 {
			complete = false // a retry may have run before a crash that lost its observations
		}
	}
	evs := append([]Event{{Kind: EventRunStarted, Complete: &complete}}, seed...)
	g.stamp(r.Ref, st.Next, t, evs)
	for i := range initial {
		initial[i].Seq = evs[i+1].Seq
	}
	st.History = NewHistory(initial, complete)
	return evs
}

// stamp gives events their run, sequence numbers, version and time.
func (g *Gate) stamp(run string, base uint64, t time.Time, evs []Event) {
	for i := range evs {
		evs[i].V, evs[i].Run, evs[i].Seq, evs[i].Time = EventVersion, run, base+uint64(i), t.UTC()
	}
}

func (g *Gate) decisionEvent(v *Verdict, c *Call) Event {
	e := Event{CallID: v.CallID, Tool: v.Tool, Actor: c.Actor, Stage: v.Stage, Rule: v.Rule, Reason: v.Reason,
		ToolDenial: v.ToolDenial, Risk: v.Risk, Target: v.Target, PolicyRev: g.rev, Patched: v.Args != nil}
	switch {
	case v.Allowed:
		e.Kind = EventAllowed
	case v.ToolDenial != "":
		e.Kind, e.Reason = EventToolDenied, ""
	default:
		e.Kind = EventDenied
	}
	return e
}

func (g *Gate) deny(c *Call, stage Stage, rule, reason string, risk Risk, msg string) Verdict {
	return Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: stage, Rule: rule, Reason: reason, Risk: risk, Message: msg}
}

// clamp drops the identifying fields that exceed their bounds, so the
// denial can be recorded without them.
func (g *Gate) clamp(c *Call) {
	if len(c.ID) > g.limits.MaxName {
		c.ID = newCallID()
	}
	if len(c.Tool) > g.limits.MaxName {
		c.Tool = ""
	}
	for _, s := range []*string{&c.Actor.Kind, &c.Actor.ID, &c.Actor.Agent} {
		if len(*s) > g.limits.MaxName {
			*s = ""
		}
	}
}

// checkFloor compares the policy's tools with the runtime's, once per gate,
// on first use. It returns the denial message, or "" when the floor holds.
func (g *Gate) checkFloor(ctx context.Context) string {
	if g.liveTools == nil {
		return ""
	}
	g.floorMu.Lock()
	defer g.floorMu.Unlock()
	if g.floorDone {
		return g.floorErr
	}
	g.floorDone = true
	live, err := safeLive(ctx, g.liveTools)
	if err != nil {
		g.floorErr = "veto could not read the list of tools the client offers, so every call is refused."
		return g.floorErr
	}
	g.live = make(map[string]bool, len(live))
	for _, t := range live {
		g.live[t] = true
	}
	var missing []string
	for _, t := range g.policyTools {
		if !g.live[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		g.floorErr = "The policy names tools the client does not offer (" + strings.Join(missing, ", ") +
			"), so every call is refused until the policy and the client agree."
	}
	return g.floorErr
}

func safeLive(ctx context.Context, f func(context.Context) ([]string, error)) (live []string, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("live tool list panicked")
		}
	}()
	return f(ctx)
}

// offered asks offerability; failed reports an error or panic.
func (g *Gate) offered(ctx context.Context, c *Call, d *Descriptor) (td ToolDenial, failed bool) {
	if g.live != nil && !g.live[c.Tool] {
		return Unavailable, false
	}
	if g.offer == nil {
		return "", false
	}
	defer func() {
		if recover() != nil {
			td, failed = "", true
		}
	}()
	td, err := g.offer.Offer(ctx, c, d)
	if err != nil {
		return "", true
	}
	switch td {
	case "", NotRegistered, Unavailable, ActorNotAllowed, NotInRunAllowlist, OutsideTrustZone:
		return td, false
	}
	return "", true // an offerability that invents reasons is broken
}

func toolDenialMessage(td ToolDenial) string {
	switch td {
	case NotRegistered:
		return "This tool is not registered with veto's policy, which requires it."
	case Unavailable:
		return "This tool is not available in this run."
	case ActorNotAllowed:
		return "The acting user or agent may not use this tool."
	case NotInRunAllowlist:
		return "This tool is not on this run's list of allowed tools."
	case OutsideTrustZone:
		return "This tool may not be used by a model outside its trust zone."
	}
	return "This tool is not offered in this run."
}

// resolve asks every resolver. It returns a reason code on ambiguity or
// failure; none claiming is an unknown target, not an error.
func (g *Gate) resolve(ctx context.Context, in *Input) (Target, string) {
	var found Target
	claims := 0
	for _, r := range g.resolvers {
		t, ok, err := callResolver(ctx, r, in)
		if err != nil || (ok && (!t.Known() || len(t.Kind) > g.limits.MaxName || len(t.ID) > g.limits.MaxPath)) {
			return Target{}, ReasonTargetUnresolvable
		}
		if ok {
			claims++
			found = t
		}
	}
	if claims > 1 {
		return Target{}, ReasonTargetAmbiguous
	}
	return found, ""
}

func callResolver(ctx context.Context, r Resolver, in *Input) (t Target, ok bool, err error) {
	defer func() {
		if recover() != nil {
			t, ok, err = Target{}, false, errors.New("resolver panicked")
		}
	}()
	return r.Resolve(ctx, in)
}

type ruleOutcome uint8

const (
	ruleAllowed ruleOutcome = iota
	ruleDenied
	ruleNeedsHistory
	ruleNeedsTarget
	ruleFailed
)

// runRules runs the rules in order until one does not allow. It returns
// that rule's index, its decision and why it stopped. An error, a panic
// or a malformed reason code is ruleFailed; one recover covers the loop,
// since nothing runs after a rule that fails.
func (g *Gate) runRules(ctx context.Context, in *Input) (i int, d Decision, outcome ruleOutcome) {
	defer func() {
		if recover() != nil {
			d, outcome = Decision{}, ruleFailed
		}
	}()
	for i = range g.rules {
		r := &g.rules[i]
		if r.scoped != nil && !r.scoped.AppliesTo(in.Call) {
			continue
		}
		if r.info.Needs.CompleteHistory && !in.History.complete {
			return i, Decision{}, ruleNeedsHistory
		}
		if r.info.Needs.KnownTarget && !in.Target.Known() {
			return i, Decision{}, ruleNeedsTarget
		}
		d, err := r.rule.Check(ctx, in)
		if err != nil || (d.deny && !ValidID(d.reason)) {
			return i, Decision{}, ruleFailed
		}
		if d.deny {
			return i, d, ruleDenied
		}
	}
	return 0, Decision{}, ruleAllowed
}

// Explanation is a decision laid open: the verdict, what it was decided
// on, and every rule's outcome in order, including those after the one
// that decided.
type Explanation struct {
	Verdict         Verdict
	Target          Target
	HistoryLen      int
	HistoryComplete bool
	Rules           []RuleStep
}

// RuleStep is one rule's outcome in an explanation.
type RuleStep struct {
	Rule    string `json:"rule"`
	Outcome string `json:"outcome"` // allow, deny, failed, needs_complete_history, needs_known_target, not_applicable, not_reached
	Reason  string `json:"reason,omitempty"`
	// Known is what the rule knows of the run (a Knower's notes).
	Known []string `json:"known,omitempty"`
}

// Explain decides c without recording it, and explains the decision. It is
// the one decision function in a dry run.
func (g *Gate) Explain(ctx context.Context, c *Call) Explanation {
	e := &Explanation{}
	e.Verdict = g.decide(ctx, c, &decideOpts{explain: e})
	if e.Rules == nil {
		for i := range g.rules {
			e.Rules = append(e.Rules, RuleStep{Rule: g.rules[i].info.ID, Outcome: "not_reached"})
		}
	}
	return *e
}

// explainRules runs every rule for an explanation, each on its own.
func (g *Gate) explainRules(ctx context.Context, in *Input, e *Explanation) {
	e.Target, e.HistoryLen, e.HistoryComplete = in.Target, in.History.Len(), in.History.Complete()
	e.Rules = nil
	for i := range g.rules {
		r := &g.rules[i]
		step := RuleStep{Rule: r.info.ID}
		switch {
		case r.scoped != nil && !r.scoped.AppliesTo(in.Call):
			step.Outcome = "not_applicable"
		case r.info.Needs.CompleteHistory && !in.History.complete:
			step.Outcome = "needs_complete_history"
		case r.info.Needs.KnownTarget && !in.Target.Known():
			step.Outcome = "needs_known_target"
		default:
			d, err := checkOne(ctx, r.rule, in)
			switch {
			case err != nil || (d.deny && !ValidID(d.reason)):
				step.Outcome = "failed"
			case d.deny:
				step.Outcome, step.Reason = "deny", d.reason
			default:
				step.Outcome = "allow"
			}
		}
		if k, ok := r.rule.(Knower); ok {
			step.Known = knownOf(ctx, k, in)
		}
		e.Rules = append(e.Rules, step)
	}
}

func knownOf(ctx context.Context, k Knower, in *Input) (notes []string) {
	defer func() {
		if recover() != nil {
			notes = []string{"(the rule failed to say)"}
		}
	}()
	return k.Known(ctx, in)
}

func checkOne(ctx context.Context, r Rule, in *Input) (d Decision, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("rule panicked")
		}
	}()
	return r.Check(ctx, in)
}

func (g *Gate) patch(ctx context.Context, in *Input) (args map[string]any, changed, failed bool) {
	defer func() {
		if recover() != nil {
			args, changed, failed = nil, false, true
		}
	}()
	args, _ = deepCopy(in.Call.Args).(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	for _, p := range g.patchers {
		out, ch, err := p.Patch(ctx, in, args)
		if err != nil {
			return nil, false, true
		}
		if ch {
			args, changed = out, true
		}
	}
	if changed {
		// A patch is held to the same bounds as the call it patches.
		w := walker{l: &g.limits}
		if w.walk(args, 1) != nil {
			return nil, false, true
		}
	}
	return args, changed, false
}

func (g *Gate) logVerdict(ctx context.Context, v *Verdict) {
	level, msg := slog.LevelWarn, "denied"
	if v.Allowed {
		level, msg = slog.LevelDebug, "allowed"
	}
	if !g.log.Enabled(ctx, level) {
		return
	}
	g.log.LogAttrs(ctx, level, msg,
		slog.String("call_id", v.CallID),
		slog.String("tool", v.Tool),
		slog.String("run", v.Run),
		slog.String("stage", string(v.Stage)),
		slog.String("rule", v.Rule),
		slog.String("reason", v.Reason),
		slog.String("tool_denial", string(v.ToolDenial)),
		slog.String("risk", v.Risk.String()),
		slog.String("target", v.Target.String()),
	)
}

// sanitizeMessage returns a rule's message if it is a short sentence that
// quotes no argument text, and a generic sentence otherwise. Rules are told
// never to quote arguments; this is the net under that promise.
func sanitizeMessage(msg string, c *Call, rule, reason string) string {
	generic := "Rule " + rule + " refused this call (" + reason + ")."
	if msg == "" || len(msg) > 400 {
		return generic
	}
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return generic
		}
	}
	if quotesArgs(msg, c.Args) || quotesText(msg, c.Cwd) || quotesText(msg, c.Workspace) {
		return generic
	}
	return msg
}

// minQuote is the shortest argument value, and minQuoteWord the shortest
// word of one, treated as quoted when it appears in a message. Words are
// longer so that ordinary words a value shares with a message ("project")
// do not blank every message.
const (
	minQuote     = 6
	minQuoteWord = 8
)

func quotesArgs(msg string, v any) bool {
	switch v := v.(type) {
	case string:
		return quotesText(msg, v)
	case map[string]any:
		// Keys are parameter names, which messages may use to say which
		// argument is wrong; values are what must never be quoted.
		for _, e := range v {
			if quotesArgs(msg, e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if quotesArgs(msg, e) {
				return true
			}
		}
	}
	return false
}

// quotesText reports whether msg contains s, or any word of s of at least
// minQuoteWord bytes.
func quotesText(msg, s string) bool {
	if len(s) >= minQuote && strings.Contains(msg, s) {
		return true
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '/' || r == '=' || r == '"' || r == '\'' || r == ';' || r == '|' || r == '&'
	}) {
		if len(w) >= minQuoteWord && strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "veto-" + hex.EncodeToString(b[:])
}

// ErrNoRun is the error of adding to a run that has no events yet.
var ErrNoRun = errors.New("veto: the run has no events yet")

// AllowEgress records that a person added host (an allow-list entry:
// host, "*.domain", "host:port" or CIDR, already checked by the caller) to
// run's egress allow-list. It is an event like any other, so a replay
// sees the list in force at each call. A run that has not started is
// refused: starting it here could not prove its history complete.
func (g *Gate) AllowEgress(ctx context.Context, run, host string) error {
	if run == "" || len(run) > g.limits.MaxName || host == "" || len(host) > 260 {
		return fmt.Errorf("veto: allow egress: a run and a host of at most 260 bytes are needed")
	}
	if g.store == nil {
		return fmt.Errorf("veto: allow egress: the gate has no store")
	}
	missing := false
	err := g.appendRetrying(ctx, run, func(p *RunState) []Event {
		missing = !p.Exists()
		if missing {
			return nil
		}
		return []Event{{Kind: EventEgressAllowed, Host: host}}
	})
	if err == nil && missing {
		return ErrNoRun
	}
	return err
}
