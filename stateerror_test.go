package veto_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
)

// A StateError's text holds its cause, path, detail and the error under
// it, each once; it is ErrStateUnavailable and that error; its reason
// names the cause and the path and never the error's text.
func TestStateErrorTextAndReason(t *testing.T) {
	under := errors.New("CANARY driver text")
	e := &veto.StateError{Cause: veto.CauseDamaged, Path: "/s/veto.db", Detail: "the file is empty", Err: under}
	if got, want := e.Error(), "veto: state unavailable (damaged): /s/veto.db: the file is empty: CANARY driver text"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&veto.StateError{Cause: veto.CauseLocked}).Error(), "veto: state unavailable (locked)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, veto.ErrStateUnavailable) || !errors.Is(e, under) {
		t.Error("a StateError is not ErrStateUnavailable and its error")
	}
	if got, want := e.Reason(), "veto's state /s/veto.db is damaged (the file is empty)"; got != want {
		t.Errorf("Reason() = %q, want %q", got, want)
	}
	c := veto.Contended("/s/veto.db")
	if got, want := c.Reason(), "veto's state /s/veto.db is contended (other writers of this run appended first, each time veto tried)"; got != want {
		t.Errorf("contended: %q, want %q", got, want)
	}
	if !errors.Is(c, veto.ErrConflict) || !errors.Is(c, veto.ErrStateUnavailable) {
		t.Error("a contended refusal is not a conflict (decide again) and unavailable")
	}
	if got := veto.Because("veto could not record the session's start", errors.New("x"), "."); got != "veto could not record the session's start." {
		t.Errorf("Because without a StateError: %q", got)
	}
}

// failing is a store that refuses loads with load and appends with
// appendErr (nil: the memory store answers).
type failing struct {
	*memstore.Store
	load, appendErr error
}

func (f failing) Load(ctx context.Context, run string) (veto.RunState, error) {
	if f.load != nil {
		return veto.RunState{}, f.load
	}
	return f.Store.Load(ctx, run)
}

func (f failing) Append(ctx context.Context, run string, next uint64, evs []veto.Event) error {
	if f.appendErr != nil {
		return f.appendErr
	}
	return f.Store.Append(ctx, run, next, evs)
}

// The gate names a store's cause from the error the store returned (no
// context carries it): the refusal's message and its log line say the
// cause, the state and what was seen; the error's own text is in
// neither; a store that says nothing more than that it failed is refused
// in the gate's words alone.
func TestGateNamesTheStatesCauseFromTheError(t *testing.T) {
	damaged := &veto.StateError{Cause: veto.CauseDamaged, Path: "/s/veto.db", Detail: "the file is empty", Err: errors.New("CANARY driver text")}
	full := &veto.StateError{Cause: veto.CauseFull, Path: "/s/veto.db", Err: errors.New("CANARY no space")}
	for _, tc := range []struct {
		name      string
		store     failing
		message   string
		logged    string // the log line naming the refusal
		noneNamed bool
	}{
		{"load", failing{load: damaged},
			"veto could not load this run's history: veto's state /s/veto.db is damaged (the file is empty), so the call is refused.",
			`"msg":"denied",.*"reason":"state_unavailable",.*"state_cause":"damaged","state":"/s/veto.db","state_detail":"the file is empty"`, false},
		{"record", failing{appendErr: full},
			"veto could not record this decision: veto's state /s/veto.db cannot be written: the disk is full, so the call is refused.",
			`"msg":"decision not recorded",.*"state_cause":"full","state":"/s/veto.db"`, false},
		{"contended", failing{appendErr: veto.Contended("/s/veto.db")},
			"veto could not record this decision: veto's state /s/veto.db is contended (other writers of this run appended first, each time veto tried), so the call is refused.",
			`"msg":"denied",.*"state_cause":"locked"`, false},
		{"unnamed", failing{load: errors.New("CANARY plain")},
			"veto could not load this run's history, so the call is refused.", `"msg":"denied"`, true},
	} {
		tc.store.Store = memstore.New()
		f := newFixture(t, veto.Config{Store: tc.store})
		v := f.g.Decide(ctx, call("Read", nil))
		if v.Allowed || v.Reason != veto.ReasonStateUnavailable || v.Message != tc.message {
			t.Errorf("%s: %s %q, want state_unavailable %q", tc.name, v.Reason, v.Message, tc.message)
		}
		log := f.log.String()
		if !matches(t, tc.logged, log) || strings.Contains(log, "CANARY") || strings.Contains(v.Message, "CANARY") ||
			tc.noneNamed == strings.Contains(log, "state_cause") {
			t.Errorf("%s: the log:\n%s", tc.name, log)
		}
	}
}

// matches reports whether a line of log matches the pattern.
func matches(t *testing.T, pattern, log string) bool {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(log, "\n") {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}
