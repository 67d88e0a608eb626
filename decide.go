package veto

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto/internal/loaded"
)

// Decide decides one call: allow, or deny with a reason. It never returns
// an error: every failure on the way is a denial.
func (g *Gate) Decide(ctx context.Context, c *Call) Verdict {
	return g.decide(ctx, c, nil)
}

// decideOpts carries what a resume path adds to a decision.
type decideOpts struct {
	stage   Stage  // the entry point's own refusal, checked right after bounds
	reason  string // empty: none
	message string

	explain *Explanation // explain: record every rule's outcome, and record no event
	dry     bool         // record no event (a shadow policy's decision)
}

// DryRun decides c as Decide does, and records nothing: the verdict a
// policy would give, beside the one that decided (a shadow revision).
func (g *Gate) DryRun(ctx context.Context, c *Call) Verdict {
	return g.decide(ctx, c, &decideOpts{dry: true})
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
	var note *loaded.Note
	defer func() { note.Release() }()
	for attempt := 0; ; attempt++ {
		// Each try's load and append share a note: a store that trusted a
		// row it kept proves it at the append, and one asked to hold the
		// run's row holds it until then (internal/loaded). A dry run or an
		// explanation appends nothing to prove it: it loads without.
		note.Release() // the try before's, lost
		actx := ctx
		if opts == nil || (!opts.dry && opts.explain == nil) {
			actx, note = try(ctx, attempt)
		}
		v, base, evs := g.evaluate(actx, scratch, opts)
		if base == 0 { // the run's state could not be loaded or keyed: nothing to record
			g.logVerdict(ctx, &v)
			return v
		}
		if v.Allowed && ctx.Err() != nil {
			v = g.deny(c, StageRecord, "", ReasonCancelled, RiskMedium, "the decision ran out of time, so the call is refused.")
			evs[len(evs)-1] = g.decisionEvent(&v, c)
		}
		if opts != nil && (opts.explain != nil || opts.dry) {
			return v // a dry run: nothing is recorded
		}
		g.stamp(v.Run, base, c.Time, evs)
		err := g.store.Append(actx, v.Run, base, evs)
		if errors.Is(err, ErrConflict) && attempt < maxAttempts && backoff(ctx, attempt+1) {
			continue // someone else appended to this run: decide again on the new history
		}
		if err != nil {
			if v.Allowed {
				v = g.stateDeny(c, StageRecord, "veto could not record this decision", err)
			}
			as := []slog.Attr{slog.String("call_id", v.CallID), slog.String("run", v.Run)}
			if se := StateErrorOf(err); se != nil {
				as = append(as, se.attrs()...)
			}
			g.log.LogAttrs(ctx, slog.LevelError, "decision not recorded", as...)
			g.logVerdict(ctx, &v)
			return v
		}
		v.Seq = evs[len(evs)-1].Seq
		if v.Ask {
			g.keepShown(ctx, scratch.approvals, c, &v)
		}
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
	if !ValidName(c.Run.Ref) {
		// Not recorded: the run's name would be written into the log and
		// every stream of it.
		c.Run.Ref = ""
		return g.deny(c, StageBounds, "", ReasonBoundsExceeded, RiskHigh, "The call exceeds a bound: run reference holds a control character."), 0, nil
	}

	p, err := g.store.Load(ctx, c.Run.Ref)
	if err != nil {
		return g.stateDeny(c, StageState, "veto could not load this run's history", err), 0, nil
	}
	base := p.Next
	s.approvals = approvalsOf(&p)
	evs := s.events[:0]
	if !p.Exists() {
		evs = append(evs, g.startEvents(&c.Run, &p, c.Time)...)
	}
	s.probe = recordingProbe{inner: g.probe, facts: s.probe.facts[:0], max: maxProbes}
	finish := func(v Verdict) (Verdict, uint64, []Event) {
		if !v.Allowed && !v.Ask && v.approval == 0 && (opts == nil || opts.explain == nil) {
			// Approval is not permission: a call a person approved that
			// the live policy refuses now is refused at resume, and the
			// denial uses the approval up (a tool failure, never a new
			// question). Only denials look: an allow never reads approvals.
			v.approval = g.approvalRefused(ctx, s.approvals, c)
		}
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
	var approval, refusal uint64
	resume := false
	i, d, outcome, w := g.runRules(ctx, rin)
	if outcome == ruleAsked {
		// A person's answer to this very call answers the question;
		// every other rule has decided already. At a resume, a question
		// no one answered is a refusal (a failed call), never a new
		// question.
		seq, granted, err := g.answerFor(ctx, s.approvals, c)
		if err == nil && !granted && seq == 0 {
			resume, err = s.approvals.Suspended(ctx, c.ID)
		}
		if err != nil {
			return finish(g.stateDeny(c, StageState, "veto could not read this run's approvals", err))
		}
		if granted {
			approval, outcome = seq, ruleAllowed
		} else {
			refusal = seq
		}
	}
	if outcome != ruleAllowed {
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
			v = g.deny(c, StageRule, r.info.ID, d.reason, r.info.Risk.Of(d.reason), r.message(d, c))
			switch {
			case outcome == ruleAsked && refusal != 0:
				// A person said no: a refusal, not a new question.
				v = g.deny(c, StageRule, r.info.ID, ReasonApprovalRefused, r.info.Risk.Of(d.reason),
					"A person refused this call when "+r.info.ID+" asked about it.")
				v.approval = refusal
			case outcome == ruleAsked && !resume:
				v.Ask, v.argsHash = true, ArgsHash(c)
			}
		}
		v.Target, v.Advice = target, r.info.Advice.Of(v.Reason)
		if v.Ask && v.Advice.Instead == "" {
			v.Advice.Instead = AskAdvice
		}
		return finish(v)
	}

	// 7. Patch. It runs before the record so that a patcher's failure is
	// the verdict recorded; the patched input leaves only after the record.
	v := Verdict{Allowed: true, CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Target: target, approval: approval,
		WouldDeny: w.rule, WouldReason: w.reason}
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

	approvals Approvals // the run's, as loaded
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
				len(o.Tool) > g.limits.MaxName || len(o.Target.ID) > g.limits.MaxPath || !ValidName(o.CallID) || !ValidName(o.Tool) {
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
		ToolDenial: v.ToolDenial, Risk: v.Risk, Target: v.Target, PolicyRev: g.rev, Patched: v.Args != nil,
		ArgsHash: v.argsHash, Approval: v.approval, WouldDeny: v.WouldDeny, WouldReason: v.WouldReason}
	if v.Ask {
		e.Awaiting = AwaitApproval
	}
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

// stateDeny is the refusal of a call whose state failed it at stage: the
// sentence head names the store's cause when err carries one (a
// StateError), and so does the verdict's log line.
func (g *Gate) stateDeny(c *Call, stage Stage, head string, err error) Verdict {
	v := g.deny(c, stage, "", ReasonStateUnavailable, RiskHigh, Because(head, err, ", so the call is refused."))
	v.state = StateErrorOf(err)
	return v
}

// clamp drops the identifying fields that exceed their bounds, so the
// denial can be recorded without them.
func (g *Gate) clamp(c *Call) {
	if len(c.ID) > g.limits.MaxName || !ValidName(c.ID) {
		c.ID = newCallID()
	}
	if len(c.Tool) > g.limits.MaxName || !ValidName(c.Tool) {
		c.Tool = ""
	}
	for _, s := range []*string{&c.Actor.Kind, &c.Actor.ID, &c.Actor.Agent} {
		if len(*s) > g.limits.MaxName || !ValidName(*s) {
			*s = ""
		}
	}
	if !validTime(c.Time) {
		c.Time = g.now()
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
	ruleAsked // a rule asked for a person, and none denied
)

// runRules runs the rules in order until one denies. It returns that
// rule's index, its decision and why it stopped. A rule that asks for a
// person does not stop the others: a later denial wins, and the first
// question is the answer when none denies. An error, a panic or a
// malformed reason code is ruleFailed; one recover covers the loop,
// since nothing runs after a rule that fails.
func (g *Gate) runRules(ctx context.Context, in *Input) (i int, d Decision, outcome ruleOutcome, w would) {
	asked, askedD := -1, Decision{}
	defer func() {
		if recover() != nil {
			d, outcome = Decision{}, ruleFailed
		}
	}()
	// watch records a monitored rule's refusal (the first one counts) and
	// says whether the rule is monitored: then the next rule runs.
	watch := func(r *ruleEntry, reason string) bool {
		if r.monitor && w.rule == "" {
			w = would{rule: r.info.ID, reason: reason}
		}
		return r.monitor
	}
	for i = range g.rules {
		r := &g.rules[i]
		if r.scoped != nil && !r.scoped.AppliesTo(in.Call) {
			continue
		}
		if r.info.Needs.CompleteHistory && !in.History.complete {
			if watch(r, ReasonHistoryIncomplete) {
				continue
			}
			return i, Decision{}, ruleNeedsHistory, w
		}
		if r.info.Needs.KnownTarget && !in.Target.Known() {
			if watch(r, ReasonTargetUnknown) {
				continue
			}
			return i, Decision{}, ruleNeedsTarget, w
		}
		d, err := r.rule.Check(ctx, in)
		if err != nil || (d.deny && !ValidID(d.reason)) {
			if watch(r, ReasonRuleFailed) {
				continue
			}
			return i, Decision{}, ruleFailed, w
		}
		if (d.ask || d.deny) && watch(r, d.reason) {
			continue
		}
		if d.ask {
			if asked < 0 {
				asked, askedD = i, d
			}
			continue
		}
		if d.deny {
			return i, d, ruleDenied, w
		}
	}
	if asked >= 0 {
		return asked, askedD, ruleAsked, w
	}
	return 0, Decision{}, ruleAllowed, w
}

// would is what a rule in monitor mode would have done: refuse the call,
// by that rule, for that reason. The allow records it.
type would struct{ rule, reason string }

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
	as := []slog.Attr{
		slog.String("call_id", v.CallID),
		slog.String("tool", v.Tool),
		slog.String("run", v.Run),
		slog.String("stage", string(v.Stage)),
		slog.String("rule", v.Rule),
		slog.String("reason", v.Reason),
		slog.String("tool_denial", string(v.ToolDenial)),
		slog.String("risk", v.Risk.String()),
		slog.String("target", v.Target.String()),
	}
	if v.state != nil {
		as = append(as, v.state.attrs()...)
	}
	g.log.LogAttrs(ctx, level, msg, as...)
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "veto-" + hex.EncodeToString(b[:])
}

// message is the message of a rule's denial: whole when the rule declares
// its messages fixed, else through the leak guard.
func (r *ruleEntry) message(d Decision, c *Call) string {
	if r.info.FixedMessages && d.message != "" && len(d.message) <= 400 && !hasControl(d.message) {
		return d.message
	}
	return sanitizeMessage(d.message, c, r.info.ID, d.reason)
}
