package eventlog

import (
	"slices"

	"github.com/vetohq/veto"
)

// Projection folds a run's events into its state. Stores keep one per run
// so a decision never scans the log; State is a constant-time snapshot.
type Projection struct {
	run           string
	next          uint64
	started       bool
	startComplete bool
	damaged       bool
	hist          veto.History             // complete: p.State says whether it is
	index         map[string]int           // call id → position in hist
	files         map[string]veto.FileFact // path → what the last successful call taught
	egress        []string                 // allow-list entries added by events, in order
	tally         tally                    // the history added up (see Tally)
	approvals     approvals                // questions, answers, suspensions (see Grant)
}

// NewProjection returns the projection of a run with no events.
func NewProjection(run string) *Projection {
	return &Projection{run: run, next: 1, index: map[string]int{}, hist: veto.NewHistory(nil, true)}
}

// Next returns the sequence number the next event must carry.
func (p *Projection) Next() uint64 { return p.next }

// State returns a snapshot of the run.
func (p *Projection) State() veto.RunState {
	h := p.hist
	if !p.started || !p.startComplete || p.damaged {
		h = h.AsIncomplete()
	}
	return veto.RunState{Run: p.run, Next: p.next, History: h}
}

// KnownFile returns what the run last learned of path. It reads the
// projection's current state: a store must hold its lock around it.
func (p *Projection) KnownFile(path string) (veto.FileFact, bool) {
	f, ok := p.files[path]
	return f, ok
}

// KnownFiles returns the paths the run has knowledge of, sorted. Like
// KnownFile, it reads the current state under the store's lock.
func (p *Projection) KnownFiles() []string {
	out := make([]string, 0, len(p.files))
	for f := range p.files {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// CallSeq returns the sequence number of call callID's first event in
// the run (its decision, when veto decided it); ok is false when the run
// has no event of it. Like KnownFile, it reads under the store's lock.
func (p *Projection) CallSeq(callID string) (seq uint64, ok bool) {
	i, ok := p.index[callID]
	if !ok {
		return 0, false
	}
	return p.hist.At(i).Seq, true
}

// Egress returns the allow-list entries the run's events added, in order.
// Like KnownFile, it reads the current state under the store's lock.
func (p *Projection) Egress() []string { return slices.Clone(p.egress) }

// Skip records that stored bytes that could not be decoded hold the next
// place in the log: the history can no longer be proven.
func (p *Projection) Skip() {
	p.damaged = true
	p.next++
}

// Apply folds one event into the projection. Anything out of order or out
// of shape damages the history rather than being trusted; damage is never
// undone.
func (p *Projection) Apply(e veto.Event) {
	if e.Seq != p.next {
		p.damaged = true
	}
	if e.Seq >= p.next {
		p.next = e.Seq + 1
	}
	if e.V != veto.EventVersion || validate(e) != nil {
		p.damaged = true
		return
	}
	p.approvals.apply(e)
	switch e.Kind {
	case veto.EventRunStarted:
		if p.started || e.Seq != 1 {
			p.damaged = true
			return
		}
		p.started, p.startComplete = true, *e.Complete
	case veto.EventEgressAllowed:
		p.egress = append(p.egress[:len(p.egress):len(p.egress)], e.Host)
	case veto.EventAllowed, veto.EventDenied, veto.EventToolDenied, veto.EventObserved:
		o, _ := ObservedOutcome(e)
		p.observe(e, o)
		for _, f := range e.Files {
			if p.files == nil {
				p.files = map[string]veto.FileFact{}
			}
			p.files[f.Path] = f
		}
	}
	if !p.started {
		p.damaged = true // events of a run that never started prove nothing
	}
}

// ObservedOutcome is the outcome an event gives its call in the history:
// pending for an allowed call, denied for a refused one, the reported
// outcome for an observation. ok is false for events that observe nothing.
func ObservedOutcome(e veto.Event) (o veto.Outcome, ok bool) {
	switch e.Kind {
	case veto.EventAllowed:
		return veto.Pending, true
	case veto.EventDenied, veto.EventToolDenied:
		return veto.Denied, true
	case veto.EventObserved:
		return e.Outcome, true
	}
	return "", false
}

func (p *Projection) observe(e veto.Event, o veto.Outcome) {
	if i, ok := p.index[e.CallID]; ok {
		old := p.hist.At(i)
		now := old
		now.Outcome = o
		if e.Target.Known() {
			now.Target = e.Target
		}
		p.hist = p.hist.Replaced(i, now)
		p.tally.change(p.hist, i, old, true, now)
		return
	}
	i := p.hist.Len()
	now := veto.Observation{Seq: e.Seq, CallID: e.CallID, Tool: e.Tool, Outcome: o, Target: e.Target}
	p.index[e.CallID] = i
	p.hist = p.hist.Appended(now)
	p.tally.change(p.hist, i, veto.Observation{}, false, now)
}
