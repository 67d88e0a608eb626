package hook

import "sync/atomic"

// deciders run the decisions of a long-lived process (veto serve-hooks)
// on goroutines kept between requests. A decision's stack is deep (the
// SQLite driver's frames are large): on a goroutine of its own it grew
// from the starting size, copied at each doubling, for every request;
// a kept goroutine grows it once (and again only after the collector
// has shrunk it while idle). No request waits for a goroutine: when
// every kept one is busy, the decision gets one of its own.
var deciders = workers{jobs: make(chan func())}

// maxDeciders is how many goroutines are kept: more decisions at once
// than this each get a goroutine of their own.
const maxDeciders = 16

type workers struct {
	jobs chan func() // unbuffered: a job is taken only by an idle worker
	n    atomic.Int32
}

// run runs f on an idle kept goroutine, on a new kept one while there
// are fewer than maxDeciders, or else on a goroutine of its own.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
		return
	default:
	}
	if w.n.Add(1) <= maxDeciders {
		go w.work(f)
		return
	}
	w.n.Add(-1)
	go f()
}

func (w *workers) work(f func()) {
	for {
		f()
		f = <-w.jobs
	}
}
