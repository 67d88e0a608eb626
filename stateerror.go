package veto

import (
	"errors"
	"log/slog"
)

// Cause is why a store cannot be used: one of the Cause constants. A
// refusal names it in its reason, so that a lock, a full disk, a bad path
// and a damaged file read differently.
type Cause string

// The causes of a state refusal.
const (
	CauseLocked      Cause = "locked"       // another writer held the lock past the busy timeout, or won every try
	CauseFull        Cause = "full"         // no space left on the disk (or over quota)
	CauseDamaged     Cause = "damaged"      // not a sound veto database: empty, truncated, garbage, corrupt pages
	CauseNewer       Cause = "newer schema" // written by a newer veto
	CauseUnreachable Cause = "unreachable"  // cannot be opened or reached (permissions, I/O, a server down)
	CauseBadPath     Cause = "bad path"     // the path cannot name a state file (a directory, a relative default)
)

// ErrStateUnavailable is every failure to reach or use a store's state:
// the gate refuses the call, state_unavailable, on it.
var ErrStateUnavailable = errors.New("veto: state unavailable")

// StateError is a store's refusal of its state, as the store returns it
// through the error chain: its cause, the state's path (or the database's
// name, never a DSN), and what was seen, in words of veto's own (never a
// driver's message, which may quote SQL or arguments). It is
// ErrStateUnavailable and the error under it (errors.Is); the gate names
// it in the refusal's message and log line (Reason), so nothing else has
// to carry it.
type StateError struct {
	Cause  Cause
	Path   string
	Detail string // what was seen, e.g. "the file is empty"
	Err    error
}

func (e *StateError) Error() string {
	s := "veto: state unavailable (" + string(e.Cause) + ")"
	if e.Path != "" {
		s += ": " + e.Path
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap makes a StateError both ErrStateUnavailable and its cause.
func (e *StateError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrStateUnavailable}
	}
	return []error{ErrStateUnavailable, e.Err}
}

// Reason is the clause a refusal gives: the cause and the path, and what
// was seen, with no driver text.
func (e *StateError) Reason() string {
	var what string
	switch e.Cause {
	case CauseLocked:
		what = "is locked by another writer past the busy timeout"
		if errors.Is(e.Err, ErrConflict) {
			what = "is contended"
		}
	case CauseFull:
		what = "cannot be written: the disk is full"
	case CauseDamaged:
		what = "is damaged"
	case CauseNewer:
		what = "was written by a newer veto"
	case CauseBadPath:
		what = "is not a usable path"
	default:
		what = "cannot be reached"
	}
	s := "veto's state " + e.Path + " " + what
	if e.Path == "" {
		s = "veto's state " + what
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Contended is a store's answer to an append that lost to another writer
// of the run: ErrConflict, on which the gate decides again on the new
// history, and, when it has lost every time, the refusal it names.
func Contended(path string) *StateError {
	return &StateError{Cause: CauseLocked, Path: path, Detail: "other writers of this run appended first, each time veto tried", Err: ErrConflict}
}

// StateErrorOf returns the StateError in err's chain, nil when it has none
// (a store that says no more than that it failed).
func StateErrorOf(err error) *StateError {
	var se *StateError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// Because is the sentence head, then the cause of err when err carries a
// StateError, then tail: "veto could not load this run's history: veto's
// state /s/veto.db is damaged (the file is empty), so the call is
// refused." Without one, head and tail alone.
func Because(head string, err error, tail string) string {
	if se := StateErrorOf(err); se != nil {
		return head + ": " + se.Reason() + tail
	}
	return head + tail
}

// attrs are the log attributes naming a refusal: its cause, the state and
// what was seen (never the error under it, which may be a driver's).
func (e *StateError) attrs() []slog.Attr {
	as := []slog.Attr{slog.String("state_cause", string(e.Cause)), slog.String("state", e.Path)}
	if e.Detail != "" {
		as = append(as, slog.String("state_detail", e.Detail))
	}
	return as
}
