// Package runlock lets one holder of a run's turn at a time through a
// process: veto serve's decisions and records of a run (package server),
// and the tries of a run that hold its row in a store (sqlstore).
package runlock

import (
	"context"
	"sync"
)

// Locks lets one decision or record of a run at a time through this
// instance. Appends to a run are optimistic (the store refuses one made on
// a stale history, and the gate decides again), which costs a retry per
// competitor: many calls of one run through one instance at once would
// retry each other out of their deadlines. Taking turns here leaves only
// the other instances to compete with.
type Locks struct {
	mu sync.Mutex
	m  map[string]*runLock
}

type runLock struct {
	ch    chan struct{} // a one-slot semaphore: waiting on it honours the context
	users int
}

// Lock waits for run's turn until ctx ends; unlock must be called when ok.
func (l *Locks) Lock(ctx context.Context, run string) (unlock func(), ok bool) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*runLock{}
	}
	rl := l.m[run]
	if rl == nil {
		rl = &runLock{ch: make(chan struct{}, 1)}
		l.m[run] = rl
	}
	rl.users++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if rl.users--; rl.users == 0 {
			delete(l.m, run)
		}
		l.mu.Unlock()
	}
	select {
	case rl.ch <- struct{}{}:
		return func() { <-rl.ch; release() }, true
	case <-ctx.Done():
		release()
		return nil, false
	}
}
