package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/state"
)

// durableStore is a store with its decision log.
type durableStore = state.Durable

// openStore opens the PostgreSQL store when dsn is set, else the SQLite
// file at path (default: the user's state directory); where names it
// ("postgres", never the DSN, or the file's path).
func openStore(ctx context.Context, path, dsn string) (durableStore, string, error) {
	n, err := state.Name{Path: path, DSN: dsn}.Resolve()
	if err != nil {
		return nil, "", err
	}
	where := n.Path
	if n.Postgres() {
		where = "postgres"
	}
	s, err := state.OpenDurable(ctx, n, state.DurableOptions{})
	if err != nil {
		return nil, where, err
	}
	return s, where, nil
}

const logDescription = `List and follow veto's decisions, check the log's hash chains, prune old events, sign and export them.

  veto log [--run R] [--tool T] [--verdict allow|deny] [--since 2h|2026-11-30T10:00:00Z] [--all] [--follow] [--json|--table]
           [--would-deny] [--revision REV]
  veto log verify [--run R]        check every run's hash chain; name the first broken link
  veto log prune --older-than 30d  delete older events, keeping what remains verifiable
  veto log keygen --out FILE       make a signing key: FILE (private, 0600) and FILE.pub
  veto log sign --key FILE         sign a checkpoint of the log now (veto serve --sign-key signs in the background)
  veto log export [--run R] [--since 2h] [--out FILE]   the events and their checkpoints, as JSON lines
  veto log verify --pub FILE.pub [--pub …] [--require-covered] EXPORT   check an export offline: chains, signatures
  veto log stream --export-jsonl FILE|- | --export-syslog URL   stream the log to sinks, at least once

The log is the SQLite file in the user's state directory ($XDG_STATE_HOME/veto/veto.db),
another one with --state, or a PostgreSQL database with --postgres DSN. On a terminal
decisions print as a table; otherwise as JSON lines, one stored event a line. The table
marks a call that waits for a person ("awaits approval"), an allow that used a person's
approval, a denial of an approved call by the live policy ("refused at resume": the approval
is used up, and the call failed), and, with --all, whether each approval still holds or
expired unused (computed from its expiry: an expiry is not an event).`

func runLog(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && args[0] == "stream" {
		return runLogStream(ctx, e, args[1:])
	}
	if isEvidence(args) {
		return runLogEvidence(ctx, e, args)
	}
	sub := ""
	if len(args) > 0 && (args[0] == "verify" || args[0] == "prune") {
		sub, args = args[0], args[1:]
	}
	fs := newFlags(e, "log", "[verify|prune|keygen|sign|export] [flags]", logDescription)
	file := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	dsn := fs.String("postgres", "", "a PostgreSQL database instead: postgres://user@host:port/db")
	run := fs.String("run", "", "only this run")
	tool := fs.String("tool", "", "only calls of this tool")
	verdict := fs.String("verdict", "", "only allow or deny decisions")
	since := fs.String("since", "", "only events since a time (RFC 3339) or a duration ago (90m, 2h, 7d)")
	all := fs.Bool("all", false, "every event, not only decisions")
	wouldDeny := fs.Bool("would-deny", false, "only allows a rule in monitor mode would have refused")
	revision := fs.String("revision", "", "only decisions made by this policy revision")
	follow := fs.Bool("follow", false, "keep printing new events until interrupted")
	asJSON := fs.Bool("json", false, "JSON lines even on a terminal")
	asTable := fs.Bool("table", false, "the table even when not on a terminal")
	olderThan := fs.String("older-than", "", "prune: delete events older than this (30d, 12h)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "veto log: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if sub == "" && *file == "" && *dsn == "" {
		if p, err := state.DefaultPath(); err == nil {
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(e.stderr, "veto log: no decision log at %s yet\n", p)
				return ExitDeny
			}
		}
	}
	s, where, err := openStore(ctx, *file, *dsn)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto log: cannot open the decision log:", err)
		return ExitDeny
	}
	defer s.Close()
	switch sub {
	case "verify":
		return logVerify(ctx, e, s, *run)
	case "prune":
		if *olderThan == "" {
			fmt.Fprintln(e.stderr, "veto log prune: --older-than is required, as 30d")
			return ExitUsage
		}
		d, err := parseAge(*olderThan)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log prune: --older-than:", err)
			return ExitUsage
		}
		n, err := s.Prune(ctx, time.Now().Add(-d))
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log prune:", err)
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "pruned %d event(s) older than %s from %s\n", n, *olderThan, where)
		return ExitAllow
	}
	q := veto.LogQuery{Run: *run}
	switch *verdict {
	case "":
		if !*all {
			q.Kinds = []veto.EventKind{veto.EventAllowed, veto.EventDenied, veto.EventToolDenied}
		}
	case "allow":
		q.Kinds = []veto.EventKind{veto.EventAllowed}
	case "deny":
		q.Kinds = []veto.EventKind{veto.EventDenied, veto.EventToolDenied}
	default:
		fmt.Fprintln(e.stderr, "veto log: --verdict is allow or deny")
		return ExitUsage
	}
	if *since != "" {
		t, err := parseSince(*since)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log: --since:", err)
			return ExitUsage
		}
		q.Since = t
	}
	table := !*asJSON && (*asTable || isTerminal(e.stdout))
	now := time.Now()
	var tw *tabwriter.Writer
	if table {
		tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tRUN\tSEQ\tEVENT\tTOOL\tRULE/REASON\tTARGET\tREVISION")
	}
	print := func(run string, seq uint64, b []byte) error {
		q.AfterRun, q.AfterSeq = run, seq
		ev, err := eventlog.DecodeEvent(b)
		if err != nil {
			if table {
				fmt.Fprintf(tw, "?\t%s\t%d\t(undecodable)\t\t\t\t\n", run, seq)
			}
			return nil
		}
		q.AfterTime = ev.Time.UnixNano()
		if (*tool != "" && ev.Tool != *tool) || (*wouldDeny && ev.WouldDeny == "") || (*revision != "" && ev.PolicyRev != *revision) {
			return nil
		}
		if !table {
			_, err := e.stdout.Write(append(b, '\n'))
			return err
		}
		why := logWhy(&ev, now)
		target := ""
		if ev.Target.Known() {
			target = ev.Target.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", ev.Time.Local().Format("2006-01-02 15:04:05"), run, seq, ev.Kind, ev.Tool, why, target, ev.PolicyRev)
		return nil
	}
	for {
		if err := s.Scan(ctx, q, print); err != nil {
			fmt.Fprintln(e.stderr, "veto log:", err)
			return ExitDeny
		}
		if tw != nil {
			tw.Flush()
		}
		if !*follow {
			return ExitAllow
		}
		select {
		case <-ctx.Done():
			return ExitAllow
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// logWhy is the table's RULE/REASON column: the rule and reason of a
// decision, with what it did to a person's approval (used by an allow,
// refused at resume by a denial), an observation's outcome, and whether an
// approval still holds (its expiry is computed, not an event).
func logWhy(ev *veto.Event, now time.Time) string {
	why := ev.Reason
	if ev.Rule != "" {
		why = ev.Rule + "/" + ev.Reason
	}
	if ev.ToolDenial != "" {
		why = string(ev.ToolDenial)
	}
	if ev.Outcome != "" {
		why = string(ev.Outcome)
	}
	switch {
	case ev.Kind == veto.EventAllowed && ev.WouldDeny != "":
		why = "monitor: would deny " + ev.WouldDeny + "/" + ev.WouldReason
	case ev.Kind == veto.EventAllowed && ev.Approval != 0:
		why = fmt.Sprintf("approved (approval #%d)", ev.Approval)
	case ev.Approval != 0 && ev.Reason == veto.ReasonApprovalRefused:
		why += fmt.Sprintf(" (the person's answer #%d)", ev.Approval)
	case ev.Approval != 0:
		why += fmt.Sprintf(" refused at resume (approval #%d)", ev.Approval)
	case ev.Awaiting == veto.AwaitApproval && ev.Kind == veto.EventDenied:
		why += " awaits approval"
	case ev.Kind == veto.EventApproved && !now.Before(ev.Expires):
		why += " expired " + ev.Expires.Local().Format("2006-01-02 15:04:05")
	case ev.Kind == veto.EventApproved:
		why += " until " + ev.Expires.Local().Format("2006-01-02 15:04:05")
	}
	return why
}

func logVerify(ctx context.Context, e *env, s durableStore, only string) int {
	runs := []string{only}
	if only == "" {
		var err error
		if runs, err = s.Runs(ctx); err != nil {
			fmt.Fprintln(e.stderr, "veto log verify:", err)
			return ExitDeny
		}
	}
	events, broken := 0, 0
	for _, run := range runs {
		first, prev, stored, err := s.Chain(ctx, run)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto log verify:", err)
			return ExitDeny
		}
		events += len(stored)
		if b := eventlog.VerifyChain(stored, first, prev); b != nil {
			fmt.Fprintf(e.stdout, "run %s: broken at event %d: %s\n", run, b.Seq, b.Reason)
			broken++
		}
	}
	if broken > 0 {
		fmt.Fprintf(e.stdout, "%d of %d run(s) broken\n", broken, len(runs))
		return ExitDeny
	}
	fmt.Fprintf(e.stdout, "ok: %d run(s), %d event(s), every chain holds\n", len(runs), events)
	return ExitAllow
}

// parseAge reads 30d, 12h, 90m.
func parseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("want a number of days, as 30d")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration, as 30d, 12h or 90m")
	}
	return d, nil
}

func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := parseAge(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want a time (RFC 3339) or a duration ago (2h, 7d)")
	}
	return time.Now().Add(-d), nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
