package sqlstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"syscall"
)

// Cause is why a state is refused: one of the Cause constants. A refusal
// names it in its reason, so that a lock, a full disk, a bad path and a
// damaged file read differently.
type Cause string

// The causes of a state refusal.
const (
	CauseLocked      Cause = "locked"       // another writer held the lock past the busy timeout
	CauseFull        Cause = "full"         // no space left on the disk (or over quota)
	CauseDamaged     Cause = "damaged"      // not a sound veto database: empty, truncated, garbage, corrupt pages
	CauseNewer       Cause = "newer schema" // written by a newer veto
	CauseUnreachable Cause = "unreachable"  // cannot be opened or reached (permissions, I/O, a server down)
	CauseBadPath     Cause = "bad path"     // the path cannot name a state file (a directory, a relative default)
)

// StateError is a refused state: its cause, the state's path (or the
// database's name), and what was seen, in words of veto's own (never a
// driver's message, which may quote SQL or arguments). It wraps
// ErrUnavailable and the underlying error.
type StateError struct {
	Cause  Cause
	Path   string
	Detail string // what was seen, e.g. "the file is empty"
	Err    error
}

func (e *StateError) Error() string {
	s := "sqlstore: state unavailable (" + string(e.Cause) + ")"
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

// Unwrap makes a StateError both ErrUnavailable and its cause.
func (e *StateError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.Err}
}

// Reason is the sentence a denial gives: the cause and the path, and what
// was seen, with no driver text.
func (e *StateError) Reason() string {
	var what string
	switch e.Cause {
	case CauseLocked:
		what = "is locked by another writer past the busy timeout"
		if errors.Is(e.Err, ErrContended) {
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

// ErrContended is why a store last refused an append that lost to other
// writers of the run (veto.ErrConflict): the gate decides again on the new
// history, a few times, and refuses the call when it loses every time.
var ErrContended = errors.New("sqlstore: other writers of the run appended first")

// Contended is the refusal noted when an append loses to another writer
// of the run: if the gate gives up, the call's reason names it.
func Contended(path string) *StateError {
	return &StateError{Cause: CauseLocked, Path: path, Detail: "other writers of this run appended first, each time veto tried", Err: ErrContended}
}

// CauseOf returns the StateError in err's chain, classifying an
// unclassified error by classify (nil: the cause is unreachable).
func CauseOf(err error, classify func(error) (Cause, string)) *StateError {
	if err == nil {
		return nil
	}
	var se *StateError
	if errors.As(err, &se) {
		return se
	}
	c, d := CauseUnreachable, ""
	if classify != nil {
		c, d = classify(err)
	}
	if c == "" {
		c = CauseUnreachable
	}
	return &StateError{Cause: c, Detail: d, Err: err}
}

// OSCause classifies an operating-system error: a full disk, a path that
// is not a directory, a missing permission.
func OSCause(err error) (Cause, string) {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return CauseFull, ""
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP):
		return CauseBadPath, ""
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS):
		return CauseUnreachable, "permission denied"
	}
	return "", ""
}

// Causes collects the refusals met while answering one request: the store
// notes each one in the Causes its context carries (WithCauses), so the
// answer can name what the gate only calls state_unavailable.
type Causes struct {
	mu   sync.Mutex
	last *StateError
}

type causesKey struct{}

// WithCauses returns a context whose store failures are noted in c.
func WithCauses(ctx context.Context) (context.Context, *Causes) {
	c := &Causes{}
	return context.WithValue(ctx, causesKey{}, c), c
}

// Note records a refusal in ctx's Causes, if it carries one.
func Note(ctx context.Context, se *StateError) {
	if c, ok := ctx.Value(causesKey{}).(*Causes); ok && se != nil {
		c.mu.Lock()
		c.last = se
		c.mu.Unlock()
	}
}

// Last is the last refusal noted, nil when none was.
func (c *Causes) Last() *StateError {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// LogHandler wraps h so that a record logged while answering a request
// whose store was refused (its context carries Causes, see WithCauses)
// names the refusal: the cause, the state's path and what was seen, in
// veto's own words. The underlying error's text, which may be a driver's
// and quote SQL or arguments, is never logged.
func LogHandler(h slog.Handler) slog.Handler { return causeHandler{h} }

type causeHandler struct{ slog.Handler }

func (h causeHandler) Handle(ctx context.Context, r slog.Record) error {
	if c, ok := ctx.Value(causesKey{}).(*Causes); ok && refusedState(r) {
		if se := c.Last(); se != nil {
			r = r.Clone()
			r.AddAttrs(slog.String("state_cause", string(se.Cause)), slog.String("state", se.Path))
			if se.Detail != "" {
				r.AddAttrs(slog.String("state_detail", se.Detail))
			}
		}
	}
	return h.Handler.Handle(ctx, r)
}

// refusedState reports whether r is the log line of a state refusal: a
// verdict whose reason is state_unavailable, or a decision not recorded.
// (A refusal noted and then overcome, an append that lost to another
// writer and won on the next try, names nothing on other lines.)
func refusedState(r slog.Record) bool {
	if r.Message == "decision not recorded" {
		return true
	}
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == "reason" && a.Value.String() == "state_unavailable"
		return !found
	})
	return found
}

func (h causeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return causeHandler{h.Handler.WithAttrs(as)}
}

func (h causeHandler) WithGroup(name string) slog.Handler {
	return causeHandler{h.Handler.WithGroup(name)}
}
