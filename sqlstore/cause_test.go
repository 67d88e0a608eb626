package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/vetohq/veto/sqlstore"
)

// The system's errors name their cause, and a refusal's sentence names
// the cause and the path and never the error's own text.
func TestCauses(t *testing.T) {
	for _, c := range []struct {
		err   error
		cause sqlstore.Cause
		words string
	}{
		{&os.PathError{Op: "write", Path: "/s/veto.db", Err: syscall.ENOSPC}, sqlstore.CauseFull, "cannot be written: the disk is full"},
		{fmt.Errorf("x: %w", syscall.EDQUOT), sqlstore.CauseFull, "cannot be written: the disk is full"},
		{&os.PathError{Op: "mkdir", Path: "/s", Err: syscall.ENOTDIR}, sqlstore.CauseBadPath, "is not a usable path"},
		{&os.PathError{Op: "open", Path: "/s", Err: syscall.EACCES}, sqlstore.CauseUnreachable, "cannot be reached (permission denied)"},
		{errors.New("secret argument text"), sqlstore.CauseUnreachable, "cannot be reached"},
	} {
		se := sqlstore.CauseOf(c.err, sqlstore.OSCause)
		se.Path = "/s/veto.db"
		r := se.Reason()
		if se.Cause != c.cause || !strings.Contains(r, "/s/veto.db "+c.words) || strings.Contains(r, "secret") || strings.Contains(r, "no space left") || strings.Contains(r, "quota") {
			t.Errorf("%v: %q %q", c.err, se.Cause, r)
		}
		if !errors.Is(se, sqlstore.ErrUnavailable) || !errors.Is(se, c.err) {
			t.Errorf("%v: the refusal does not wrap ErrUnavailable and its error", c.err)
		}
	}
	ctx, causes := sqlstore.WithCauses(context.Background())
	if causes.Last() != nil {
		t.Fatal("a cause before any")
	}
	sqlstore.Note(ctx, &sqlstore.StateError{Cause: sqlstore.CauseLocked})
	sqlstore.Note(context.Background(), &sqlstore.StateError{Cause: sqlstore.CauseFull}) // nowhere to note
	if c := causes.Last(); c == nil || c.Cause != sqlstore.CauseLocked {
		t.Fatalf("noted %+v", c)
	}
}

// An append that lost to other writers is named contended, not locked
// past the busy timeout.
func TestContendedReason(t *testing.T) {
	r := sqlstore.Contended("/s/veto.db").Reason()
	if r != "veto's state /s/veto.db is contended (other writers of this run appended first, each time veto tried)" {
		t.Fatal(r)
	}
	if !errors.Is(sqlstore.Contended("x"), sqlstore.ErrUnavailable) {
		t.Fatal("a contended refusal is not ErrUnavailable")
	}
}

// The log lines of a state_unavailable denial and of a decision not
// recorded name the refusal; other lines of the same request do not, and
// no line holds the error's text.
func TestLogHandlerNamesTheRefusal(t *testing.T) {
	var b strings.Builder
	log := slog.New(sqlstore.LogHandler(slog.NewJSONHandler(&b, nil)))
	ctx, _ := sqlstore.WithCauses(context.Background())
	sqlstore.Note(ctx, &sqlstore.StateError{Cause: sqlstore.CauseFull, Path: "/s/veto.db", Err: errors.New("CANARY driver text")})
	log.InfoContext(ctx, "allowed", "reason", "")
	log.WarnContext(ctx, "denied", "reason", "state_unavailable")
	log.InfoContext(ctx, "a line with no attributes")
	log.WarnContext(ctx, "decision not recorded")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || strings.Contains(lines[0], "state_cause") || strings.Contains(lines[2], "state_cause") ||
		!strings.Contains(lines[3], `"state_cause":"full","state":"/s/veto.db"`) ||
		!strings.Contains(lines[1], `"state_cause":"full","state":"/s/veto.db"`) || strings.Contains(b.String(), "CANARY") {
		t.Fatal(b.String())
	}
}

// A StateError's text holds its cause, path, detail and the error under
// it, each once; a log line names the detail only when there is one.
func TestStateErrorTextAndLoggedDetail(t *testing.T) {
	e := &sqlstore.StateError{Cause: sqlstore.CauseDamaged, Path: "/s/veto.db", Detail: "the file is empty", Err: errors.New("under")}
	if got, want := e.Error(), "sqlstore: state unavailable (damaged): /s/veto.db: the file is empty: under"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&sqlstore.StateError{Cause: sqlstore.CauseLocked}).Error(), "sqlstore: state unavailable (locked)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, detail := range []string{"the file is empty", ""} {
		var b strings.Builder
		log := slog.New(sqlstore.LogHandler(slog.NewJSONHandler(&b, nil)))
		ctx, _ := sqlstore.WithCauses(context.Background())
		sqlstore.Note(ctx, &sqlstore.StateError{Cause: sqlstore.CauseDamaged, Path: "/s/veto.db", Detail: detail})
		log.WarnContext(ctx, "denied", "reason", "state_unavailable")
		has := strings.Contains(b.String(), `"state_detail":"the file is empty"`)
		if has != (detail != "") || (detail == "" && strings.Contains(b.String(), "state_detail")) {
			t.Errorf("detail %q: %s", detail, b.String())
		}
	}
}
