package veto

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
