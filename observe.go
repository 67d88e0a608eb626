package veto

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/vetohq/veto/internal/loaded"
)

// Start opens a run explicitly, as a client's session start does: it
// records the run's start (with its history complete or not, by the rules
// of Run) and checks the floor. A run that already has events is left as
// it is. The returned error describes a floor mismatch or a store failure;
// calls are denied for either whether or not the caller looks at it.
func (g *Gate) Start(ctx context.Context, r Run) error {
	if msg := g.checkFloor(ctx); msg != "" {
		return errors.New(msg)
	}
	if r.Ref == "" || len(r.Ref) > g.limits.MaxName || !ValidName(r.Ref) {
		return errors.New("veto: run reference missing, too long or holding a control character")
	}
	return g.appendRetrying(ctx, r.Ref, func(ctx context.Context, p *RunState) []Event {
		if p.Exists() {
			return nil
		}
		return g.startEvents(&r, p, g.now())
	})
}

// appendRetrying appends the events build returns for the run's current
// state, loading it again and rebuilding when another writer got there
// first. build returning nothing appends nothing. build is given the
// try's context: what it reads of the store it reads within the try, on
// the connection of a run's row the try holds (sqlstore/rowhold.go),
// where one of the pool's might wait for the lock the try holds.
func (g *Gate) appendRetrying(ctx context.Context, run string, build func(ctx context.Context, p *RunState) []Event) error {
	var note *loaded.Note
	defer func() { note.Release() }()
	for attempt := 0; ; attempt++ {
		note.Release()
		var actx context.Context
		actx, note = try(ctx, attempt) // see Gate.decide
		p, err := g.store.Load(actx, run)
		if err != nil {
			return fmt.Errorf("veto: load run: %w", err)
		}
		next := p.Next
		evs := build(actx, &p)
		if len(evs) == 0 {
			return nil
		}
		g.stamp(run, next, g.now(), evs)
		err = g.store.Append(actx, run, next, evs)
		if errors.Is(err, ErrConflict) && attempt < maxAttempts && backoff(ctx, attempt+1) {
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
		len(o.Tool) > g.limits.MaxName || len(o.Target.ID) > g.limits.MaxPath || !ValidName(run) || !ValidName(o.CallID) || !ValidName(o.Tool) {
		return errors.New("veto: observe: run, call id, tool or target missing or out of bounds")
	}
	return g.appendRetrying(ctx, run, func(ctx context.Context, p *RunState) []Event {
		return observed(p, Event{CallID: o.CallID, Tool: o.Tool, Outcome: o.Outcome, Target: o.Target})
	})
}

// ObserveCall records what the runtime saw a call do, given the call as
// it ran. When it succeeded, the learners probe what it read or wrote and
// the facts become the run's knowledge, recorded in the same event. A call
// that failed, was cancelled or was denied teaches nothing.
func (g *Gate) ObserveCall(ctx context.Context, c *Call, outcome Outcome) error {
	r, err := g.Learn(ctx, c, outcome)
	if err != nil {
		return err
	}
	return g.RecordLearnt(ctx, r)
}

// Learnt is a call's outcome and what its learners probed of it, made by
// Learn and recorded by RecordLearnt: ObserveCall in two steps, for a
// caller that records where the state's write lock is held, and probes
// the files (hashing up to probe.MaxHash bytes of each) before it takes
// the lock.
type Learnt struct {
	c       *Call
	outcome Outcome
	files   []FileFact
}

// Learn checks an observation as ObserveCall does and probes what the
// call taught the run.
func (g *Gate) Learn(ctx context.Context, c *Call, outcome Outcome) (Learnt, error) {
	if err := g.checkObserved(c, outcome); err != nil {
		return Learnt{}, err
	}
	return Learnt{c: c, outcome: outcome, files: g.learnt(ctx, c, outcome)}, nil
}

// RecordLearnt records what Learn made, as ObserveCall does.
func (g *Gate) RecordLearnt(ctx context.Context, r Learnt) error {
	if r.c == nil {
		return errors.New("veto: observe: nothing learnt")
	}
	c := r.c
	return g.appendRetrying(ctx, c.Run.Ref, func(ctx context.Context, p *RunState) []Event {
		return observed(p, Event{CallID: c.ID, Tool: c.Tool, Actor: c.Actor, Outcome: r.outcome, Files: r.files})
	})
}

// learnt is what a call that succeeded taught the run: the facts its
// learners probed; nothing for any other outcome, or when what it taught
// cannot be vouched for.
func (g *Gate) learnt(ctx context.Context, c *Call, outcome Outcome) []FileFact {
	if outcome != Succeeded {
		return nil
	}
	rp := &recordingProbe{inner: g.probe, max: maxProbes}
	for _, l := range g.learners {
		if err := learn(ctx, l, c, g.tools[c.Tool], rp); err != nil {
			// What the call taught cannot be vouched for: record the
			// outcome without it, so the run knows less, never more.
			g.log.LogAttrs(ctx, slog.LevelWarn, "knowledge not recorded", slog.String("call_id", c.ID), slog.String("tool", c.Tool))
			return nil
		}
	}
	return rp.facts
}

// checkObserved refuses an observation that is not one: no result, no
// call id or run, or a call out of bounds.
func (g *Gate) checkObserved(c *Call, outcome Outcome) error {
	if !outcome.Valid() || outcome == Pending {
		return fmt.Errorf("veto: observe: outcome %q is not a result", outcome)
	}
	if c.ID == "" || c.Run.Ref == "" {
		return errors.New("veto: observe: the call needs an id and a run")
	}
	if err := g.limits.checkCall(c); err != nil {
		return fmt.Errorf("veto: observe: %w", err)
	}
	return nil
}

// Why an observation was refused (the reason of an observation_refused
// event).
const (
	// ReasonNotDecided: no call of this id and tool was decided in the run.
	ReasonNotDecided = "call_not_decided"
	// ReasonObserverMismatch: the call was decided for another actor.
	ReasonObserverMismatch = "observer_mismatch"
)

// ErrObservationRefused is the error of an observation ObserveReported
// refused; errors.As finds an *ObservationRefused with the reason.
var ErrObservationRefused = errors.New("veto: the observation names no call decided in its run for its actor")

// ObservationRefused is why ObserveReported refused an observation.
type ObservationRefused struct{ Reason string }

func (e *ObservationRefused) Error() string {
	return ErrObservationRefused.Error() + " (" + e.Reason + ")"
}

// Unwrap makes errors.Is(err, ErrObservationRefused) hold.
func (e *ObservationRefused) Unwrap() error { return ErrObservationRefused }

// ObserveReported is ObserveCall for a reporter veto cannot vouch for (a
// token holder of veto serve): the call must have been decided in its run,
// with the same tool, for the same actor (kind and id). Otherwise nothing
// is learned, the refusal is recorded in the run (an observation_refused
// event naming who reported it, when the run has events) and the error is
// an *ObservationRefused. A forged "succeeded" would teach the run a read
// that never happened, and an actor's report of another's call would
// re-mark an outcome it never saw.
func (g *Gate) ObserveReported(ctx context.Context, c *Call, outcome Outcome) error {
	if err := g.checkObserved(c, outcome); err != nil {
		return err
	}
	ds, ok := g.store.(Decisions)
	if !ok {
		return fmt.Errorf("veto: observe: the store cannot find a call's decision: %w", &ObservationRefused{ReasonNotDecided})
	}
	e, found, err := ds.Decided(ctx, c.Run.Ref, c.ID)
	if err != nil {
		return fmt.Errorf("veto: observe: %w", err)
	}
	reason := ""
	switch {
	case !found || e.Tool != c.Tool:
		reason = ReasonNotDecided
	case e.Actor.Kind != c.Actor.Kind || e.Actor.ID != c.Actor.ID:
		reason = ReasonObserverMismatch
	}
	if reason == "" {
		return g.ObserveCall(ctx, c, outcome)
	}
	g.log.LogAttrs(ctx, slog.LevelWarn, "observation refused", slog.String("run", c.Run.Ref), slog.String("call_id", c.ID),
		slog.String("reason", reason), slog.String("actor", c.Actor.Kind+":"+c.Actor.ID))
	err = g.appendRetrying(ctx, c.Run.Ref, func(ctx context.Context, p *RunState) []Event {
		if !p.Exists() {
			return nil // no run to record it in: starting one would be the reporter's doing
		}
		return []Event{{Kind: EventObservationRefused, CallID: c.ID, Tool: c.Tool, Actor: c.Actor, Reason: reason}}
	})
	if err != nil {
		return fmt.Errorf("veto: observe: %w", err)
	}
	return &ObservationRefused{reason}
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

// ErrNoRun is the error of adding to a run that has no events yet.
var ErrNoRun = errors.New("veto: the run has no events yet")

// AllowEgress records that a person added host (an allow-list entry:
// host, "*.domain", "host:port" or CIDR, already checked by the caller) to
// run's egress allow-list. It is an event like any other, so a replay
// sees the list in force at each call. A run that has not started is
// refused: starting it here could not prove its history complete.
func (g *Gate) AllowEgress(ctx context.Context, run, host string) error {
	if run == "" || len(run) > g.limits.MaxName || !ValidName(run) || host == "" || len(host) > 260 {
		return fmt.Errorf("veto: allow egress: a run and a host of at most 260 bytes are needed")
	}
	if g.store == nil {
		return fmt.Errorf("veto: allow egress: the gate has no store")
	}
	missing := false
	err := g.appendRetrying(ctx, run, func(ctx context.Context, p *RunState) []Event {
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
