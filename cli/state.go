package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/state"
)

const stateDescription = `Check veto's state, or repair a damaged one.

  veto state check [--state FILE | --postgres DSN]    is the state sound? names the cause when not
  veto state repair [--state FILE | --postgres DSN]   move a damaged state aside and start a new one

check opens the state as a decision would, verified (SQLite's quick_check reads every page),
takes its write lock and rolls back, and reads every run's hash chain. Its exit code names
what it found:
  0  sound (or no state yet: a new one is made at first use)
  1  sound, but a run holds events damaged in place that are not yet marked: run repair
  3  damaged    4  written by a newer veto    5  locked past the busy timeout
  6  the disk is full    7  cannot be reached    8  not a usable path

repair moves a damaged SQLite state aside (FILE.damaged-TIMESTAMP, with its WAL, 0600, kept for
a post-mortem), starts a new state at FILE, and marks every run the damaged file's bytes
still name incomplete in the new one, so history rules deny for them until proven. On a
sound state (and on PostgreSQL, which is never moved) it marks incomplete the runs whose
events are damaged in place. A state refused for another cause (locked, full, newer) is
left as it is.`

// Exit codes of veto state, beyond ExitAllow, ExitDeny and ExitUsage.
var stateExit = map[veto.Cause]int{
	veto.CauseDamaged:     3,
	veto.CauseNewer:       4,
	veto.CauseLocked:      5,
	veto.CauseFull:        6,
	veto.CauseUnreachable: 7,
	veto.CauseBadPath:     8,
}

// stateHint is what to do about a refusal.
var stateHint = map[veto.Cause]string{
	veto.CauseDamaged:     "veto state repair (the damaged file is moved aside and kept; a new state is started)",
	veto.CauseNewer:       "use the newer veto that wrote it; this one does not know its schema",
	veto.CauseLocked:      "another process holds its write lock; try again when it is done",
	veto.CauseFull:        "free space on its disk",
	veto.CauseUnreachable: "check that it can be read and written by this user, and its disk",
	veto.CauseBadPath:     "point --state or $VETO_STATE at a file",
}

func runState(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "repair") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprintln(e.stdout, "Usage: veto state check|repair [--state FILE | --postgres DSN]\n\n"+stateDescription)
			return ExitAllow
		}
		fmt.Fprintln(e.stderr, "veto state: want check or repair")
		return ExitUsage
	}
	sub := args[0]
	fs := newFlags(e, "state "+sub, "[--state FILE | --postgres DSN]", stateDescription)
	file := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database (a DSN) instead of the SQLite state")
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for another writer's lock, or for the database to answer")
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto state %s: unexpected argument %q\n", sub, fs.Arg(0))
		return ExitUsage
	}
	if *pg != "" {
		return statePostgres(ctx, e, sub, *pg, *timeout)
	}
	n, err := state.Name{Path: *file}.Resolve()
	if err != nil {
		return refused(e, state.Refusal(n, err))
	}
	path := n.Path
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stdout, "ok: no state at %s yet; a new one is made at first use\n", path)
		return ExitAllow
	}
	s, err := state.OpenDurable(ctx, n, state.DurableOptions{Verify: true, Probe: true, Busy: *timeout})
	if err != nil {
		se := state.Refusal(n, err)
		if sub == "repair" && se.Cause == veto.CauseDamaged {
			return repairFile(ctx, e, path, se)
		}
		code := refused(e, se)
		if sub == "repair" {
			fmt.Fprintf(e.stdout, "nothing was changed: repair moves aside only a damaged state, and this one is %s\n", se.Cause)
		}
		return code
	}
	defer s.Close()
	return runsCheck(ctx, e, sub, s, n, "veto's state "+path)
}

// refused reports a refusal and returns its exit code.
func refused(e *env, se *veto.StateError) int {
	fmt.Fprintln(e.stdout, se.Reason())
	fmt.Fprintf(e.stdout, "cause: %s\nfix: %s\n", se.Cause, stateHint[se.Cause])
	if c, ok := stateExit[se.Cause]; ok {
		return c
	}
	return stateExit[veto.CauseUnreachable]
}

// runsCheck reads every run of a sound store; repair marks incomplete the
// runs whose events are damaged in place.
func runsCheck(ctx context.Context, e *env, sub string, s state.Durable, n state.Name, name string) int {
	runs, err := s.CheckRuns(ctx)
	if err != nil {
		return refused(e, state.Refusal(n, err))
	}
	events, marked := 0, 0
	var broken []state.RunCheck
	for _, r := range runs {
		events += r.Events
		switch {
		case r.Marked:
			marked++
		case r.Broken != 0:
			broken = append(broken, r)
		}
	}
	if len(broken) == 0 {
		fmt.Fprintf(e.stdout, "ok: %s is sound: %d run(s), %d event(s), %d run(s) recorded incomplete after damage\n", name, len(runs), events, marked)
		return ExitAllow
	}
	for _, r := range broken {
		fmt.Fprintf(e.stdout, "run %s: event %d %s\n", r.Run, r.Broken, r.Why)
	}
	if sub == "check" {
		fmt.Fprintf(e.stdout, "%s holds %d run(s) with events damaged in place, not yet marked incomplete\nfix: veto state repair\n", name, len(broken))
		return ExitDeny
	}
	for _, r := range broken {
		if err := s.MarkIncomplete(ctx, r.Run); err != nil {
			return refused(e, state.Refusal(n, err))
		}
	}
	fmt.Fprintf(e.stdout, "marked %d run(s) incomplete in %s: history rules deny for them until proven\n", len(broken), name)
	return ExitAllow
}

// repairFile moves a damaged state aside, starts a new one, and marks
// every run the damaged file's bytes name incomplete in it.
func repairFile(ctx context.Context, e *env, path string, se *veto.StateError) int {
	fmt.Fprintln(e.stdout, se.Reason())
	r, err := state.Repair(ctx, path)
	if r.Aside != "" {
		fmt.Fprintf(e.stdout, "moved the damaged state aside, kept for a post-mortem: %s\n", r.Aside)
	}
	if r.New {
		fmt.Fprintf(e.stdout, "started a new state: %s\n", path)
	}
	if err != nil {
		return refused(e, state.Refusal(state.Name{Path: path}, err))
	}
	switch {
	case len(r.Runs) > 0:
		fmt.Fprintf(e.stdout, "marked %d run(s) incomplete, their ids read from the damaged file's bytes: history rules deny for them until proven\n", len(r.Runs))
		for _, run := range r.Runs {
			fmt.Fprintf(e.stdout, "  %s\n", run)
		}
	case r.Unread:
		fmt.Fprintln(e.stdout, "the damaged file could not be read, so no run could be marked incomplete: a session that resumes starts incomplete (it is not fresh); one that says it is fresh starts complete and empty")
	default:
		fmt.Fprintln(e.stdout, "no run id could be recovered from the damaged file, so no run was marked incomplete: a session that resumes starts incomplete (it is not fresh); one that says it is fresh starts complete and empty")
	}
	return ExitAllow
}

// statePostgres checks a PostgreSQL database, or marks its runs with
// damaged events incomplete; it is never moved. The DSN, which may hold a
// password, is never printed.
func statePostgres(ctx context.Context, e *env, sub, dsn string, timeout time.Duration) int {
	s, err := state.OpenDurable(ctx, state.Name{DSN: dsn}, state.DurableOptions{Busy: timeout})
	if err != nil {
		return refused(e, state.Refusal(state.Name{DSN: dsn}, err))
	}
	defer s.Close()
	return runsCheck(ctx, e, sub, s, state.Name{DSN: dsn}, "the PostgreSQL database")
}
