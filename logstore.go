package veto

import (
	"context"
	"time"
)

// Log is a store's decision log, for veto log, verify and prune. Every
// store veto ships implements it.
type Log interface {
	// Runs lists the runs with events.
	Runs(ctx context.Context) ([]string, error)
	// Scan calls fn with every stored event matching q, oldest first (by
	// time, then run and sequence number). fn's error stops the scan.
	Scan(ctx context.Context, q LogQuery, fn func(run string, seq uint64, stored []byte) error) error
	// Chain returns a run's stored events in order, with the sequence
	// number the first must carry and the hash it must name: 1 and "" for
	// a whole run, the anchor left by pruning otherwise.
	Chain(ctx context.Context, run string) (first uint64, prev string, stored [][]byte, err error)
	// Prune deletes every event older than before, keeping each run's
	// chain verifiable from an anchor, and returns how many it deleted.
	Prune(ctx context.Context, before time.Time) (int, error)
	// Waiting returns the questions no person has answered that are the
	// last of their call, newest first, from the runs' projections (see
	// Approvals); Waiting is the function to call.
	Waiting(ctx context.Context, q WaitQuery) ([]Question, error)
}

// LogQuery selects events from a Log. Zero fields select everything.
type LogQuery struct {
	Run   string
	Kinds []EventKind
	Since time.Time
	// After continues a scan: only events stored after this cursor (a time
	// in Unix nanoseconds, run and sequence number).
	AfterTime int64
	AfterRun  string
	AfterSeq  uint64
}
