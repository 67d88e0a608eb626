package eventlog

import (
	"cmp"
	"maps"
	"slices"

	"github.com/vetohq/veto"
)

// What one observation counts for in a tally: a call the gate let through
// (by tool), a failed call on a target, a file touched by a tool. These
// are veto.HistoryTally's; the conformance suite (storetest) holds every
// store's tally to it.
func letThrough(o veto.Observation) bool { return o.Outcome != veto.Denied }
func failedOn(o veto.Observation) bool   { return o.Outcome == veto.Failed && o.Target.Known() }
func fileTouch(o veto.Observation) bool {
	return o.Outcome != veto.Denied && o.Target.Kind == veto.TargetFile
}

// FileKey names a file target touched by a tool, the unit of veto.Tally.Files.
type FileKey struct{ ID, Tool string }

// tally is a Projection's running tally.
type tally struct {
	calls  map[string]int
	failed map[veto.Target]map[string]int
	files  map[FileKey]touch
}

// touch is how many observations touch one file with one tool, and where
// the first of them is in the history.
type touch struct{ n, first int }

// TallyDelta is how one observation's change moves a tally: what every
// store that keeps one applies, so that all add up alike.
type TallyDelta struct {
	Calls            [2]ToolCount   // by tool; N 0 is nothing
	Failed           [2]TargetCount // by target and tool; N 0 is nothing
	gone, came       FileKey
	hasGone, hasCame bool
}

// ToolCount is a change of a count by tool.
type ToolCount struct {
	Tool string
	N    int
}

// TargetCount is a change of a count by target and tool.
type TargetCount struct {
	Target veto.Target
	Tool   string
	N      int
}

// FileGone is the file and tool the observation no longer counts for.
func (d TallyDelta) FileGone() (FileKey, bool) { return d.gone, d.hasGone }

// FileCame is the file and tool the observation now counts for.
func (d TallyDelta) FileCame() (FileKey, bool) { return d.came, d.hasCame }

// TallyChange is the delta of an observation changing from old (existed:
// there was one) to now.
func TallyChange(old veto.Observation, existed bool, now veto.Observation) TallyDelta {
	var d TallyDelta
	if existed && letThrough(old) {
		d.Calls[0] = ToolCount{old.Tool, -1}
	}
	if letThrough(now) {
		if d.Calls[0].N != 0 && d.Calls[0].Tool == now.Tool {
			d.Calls[0] = ToolCount{}
		} else {
			d.Calls[1] = ToolCount{now.Tool, 1}
		}
	}
	if existed && failedOn(old) {
		d.Failed[0] = TargetCount{old.Target, old.Tool, -1}
	}
	if failedOn(now) {
		if d.Failed[0].N != 0 && d.Failed[0].Target == now.Target && d.Failed[0].Tool == now.Tool {
			d.Failed[0] = TargetCount{}
		} else {
			d.Failed[1] = TargetCount{now.Target, now.Tool, 1}
		}
	}
	oldKey, nowKey := FileKey{old.Target.ID, old.Tool}, FileKey{now.Target.ID, now.Tool}
	oldIn, nowIn := existed && fileTouch(old), fileTouch(now)
	if oldIn && nowIn && oldKey == nowKey {
		return d // the same file and tool: its place in the history stays
	}
	d.gone, d.hasGone = oldKey, oldIn
	d.came, d.hasCame = nowKey, nowIn
	return d
}

// change moves the tally from observation old (existed: there was one) to
// now, at index i of h, which already holds now.
func (t *tally) change(h veto.History, i int, old veto.Observation, existed bool, now veto.Observation) {
	if t.calls == nil {
		t.calls, t.failed, t.files = map[string]int{}, map[veto.Target]map[string]int{}, map[FileKey]touch{}
	}
	d := TallyChange(old, existed, now)
	for _, c := range d.Calls {
		add(t.calls, c.Tool, c.N)
	}
	for _, f := range d.Failed {
		if f.N == 0 {
			continue
		}
		if t.failed[f.Target] == nil {
			t.failed[f.Target] = map[string]int{}
		}
		if add(t.failed[f.Target], f.Tool, f.N); len(t.failed[f.Target]) == 0 {
			delete(t.failed, f.Target)
		}
	}
	if k, ok := d.FileGone(); ok {
		f := t.files[k]
		switch f.n--; {
		case f.n == 0:
			delete(t.files, k)
		case f.first == i:
			f.first = firstTouch(h, k) // rare: the first call on it stopped counting
			fallthrough
		default:
			t.files[k] = f
		}
	}
	if k, ok := d.FileCame(); ok {
		f, ok := t.files[k]
		if !ok {
			f.first = i
		}
		f.n++
		f.first = min(f.first, i)
		t.files[k] = f
	}
}

func firstTouch(h veto.History, k FileKey) int {
	for i, o := range h.All() {
		if fileTouch(o) && (FileKey{o.Target.ID, o.Tool}) == k {
			return i
		}
	}
	return -1
}

func add(m map[string]int, k string, d int) {
	if d == 0 || m == nil {
		return
	}
	if m[k] += d; m[k] == 0 {
		delete(m, k)
	}
}

// TallyCalls, TallyFailed and TallyFiles answer the projection's running
// tally (see Tally). Like KnownFile, they read the current state under
// the store's lock; the maps and slices returned are copies.
func (p *Projection) TallyCalls() map[string]int { return maps.Clone(p.tally.calls) }

// TallyFailed: see TallyCalls.
func (p *Projection) TallyFailed(target veto.Target) map[string]int {
	return maps.Clone(p.tally.failed[target])
}

// TallyFiles: see TallyCalls.
func (p *Projection) TallyFiles() []veto.Observation {
	out := make([]veto.Observation, 0, len(p.tally.files))
	for _, f := range p.tally.files {
		out = append(out, p.hist.At(f.first))
	}
	slices.SortFunc(out, func(a, b veto.Observation) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
