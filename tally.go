package veto

import "context"

// Tally adds up a run's history, so that rules which count calls or look
// for the first call on a file do not read every observation: a store
// keeps it as events are appended, like its other projections, and a
// decision's cost does not grow with the run. Like Knowledge, it may
// answer from a state later than the decision's snapshot of the history
// (a decision made on an older state fails to append and is made again).
type Tally interface {
	// Calls counts the run's calls the gate let through (observations
	// not denied, whatever their outcome since), by tool.
	Calls(ctx context.Context) (map[string]int, error)
	// Failed counts the run's failed calls on target, by tool.
	Failed(ctx context.Context, target Target) (map[string]int, error)
	// Files returns, for every file target and tool of a call the gate let
	// through, the first such observation in execution order, as it is
	// now; the list is in execution order.
	Files(ctx context.Context) ([]Observation, error)
}

// What one observation counts for in a tally: a call the gate let through
// (by tool), a failed call on a target, a file touched by a tool. The
// stores' running tallies (eventlog.TallyChange) count the same, and the
// conformance suite (storetest) holds each to HistoryTally.
func letThrough(o Observation) bool { return o.Outcome != Denied }
func failedOn(o Observation) bool   { return o.Outcome == Failed && o.Target.Known() }
func fileTouch(o Observation) bool  { return o.Outcome != Denied && o.Target.Kind == TargetFile }

// HistoryTally adds up h by reading every observation: the reference the
// stores' tallies are tested against, and the tally of a store that keeps
// none.
func HistoryTally(h *History) Tally { return historyTally{h} }

type historyTally struct{ h *History }

func (t historyTally) Calls(context.Context) (map[string]int, error) {
	m := map[string]int{}
	for _, o := range t.h.All() {
		if letThrough(o) {
			m[o.Tool]++
		}
	}
	return m, nil
}

func (t historyTally) Failed(_ context.Context, target Target) (map[string]int, error) {
	m := map[string]int{}
	for _, o := range t.h.All() {
		if failedOn(o) && o.Target == target {
			m[o.Tool]++
		}
	}
	return m, nil
}

func (t historyTally) Files(context.Context) ([]Observation, error) {
	type fileKey struct{ id, tool string }
	seen := map[fileKey]bool{}
	var out []Observation
	for _, o := range t.h.All() {
		if k := (fileKey{o.Target.ID, o.Tool}); fileTouch(o) && !seen[k] {
			seen[k] = true
			out = append(out, o)
		}
	}
	return out, nil
}
