package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// The system's errors name their cause, and a refusal's sentence names
// the cause and the path and never the error's own text.
func TestCauses(t *testing.T) {
	for _, c := range []struct {
		err   error
		cause veto.Cause
		words string
	}{
		{&os.PathError{Op: "write", Path: "/s/veto.db", Err: syscall.ENOSPC}, veto.CauseFull, "cannot be written: the disk is full"},
		{fmt.Errorf("x: %w", syscall.EDQUOT), veto.CauseFull, "cannot be written: the disk is full"},
		{&os.PathError{Op: "mkdir", Path: "/s", Err: syscall.ENOTDIR}, veto.CauseBadPath, "is not a usable path"},
		{&os.PathError{Op: "open", Path: "/s", Err: syscall.EACCES}, veto.CauseUnreachable, "cannot be reached (permission denied)"},
		{errors.New("secret argument text"), veto.CauseUnreachable, "cannot be reached"},
	} {
		se := sqlstore.CauseOf(c.err, sqlstore.OSCause)
		se.Path = "/s/veto.db"
		r := se.Reason()
		if se.Cause != c.cause || !strings.Contains(r, "/s/veto.db "+c.words) || strings.Contains(r, "secret") || strings.Contains(r, "no space left") || strings.Contains(r, "quota") {
			t.Errorf("%v: %q %q", c.err, se.Cause, r)
		}
		if !errors.Is(se, veto.ErrStateUnavailable) || !errors.Is(se, c.err) {
			t.Errorf("%v: the refusal does not wrap ErrStateUnavailable and its error", c.err)
		}
	}
}

// A named store's failures carry their cause and the state's name through
// the error chain: a lost append is still ErrConflict (the gate decides
// again) and named contended; any other failure is a StateError of the
// store's name, classified, and ErrStateUnavailable.
func TestNamedStoreNamesItsFailures(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := &sqlstore.Named{Store: s, Name: "the test state", Classify: func(error) (veto.Cause, string) { return veto.CauseFull, "" }}
	if err := n.Append(ctx, "r", 1, []veto.Event{{Kind: veto.EventRunStarted}}); err != nil {
		t.Fatal(err)
	}
	err = n.Append(ctx, "r", 1, []veto.Event{{Kind: veto.EventRunStarted}})
	se := veto.StateErrorOf(err)
	if !errors.Is(err, veto.ErrConflict) || se == nil || se.Path != "the test state" || !strings.Contains(se.Reason(), "is contended") {
		t.Fatalf("a lost append: %v", err)
	}
	s.Close()
	_, err = n.Load(ctx, "r")
	if se := veto.StateErrorOf(err); se == nil || se.Cause != veto.CauseFull || se.Path != "the test state" || !errors.Is(err, veto.ErrStateUnavailable) {
		t.Fatalf("a closed store's load: %v", err)
	}
}
