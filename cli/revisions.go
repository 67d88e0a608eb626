package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/state"
)

const revisionsDescription = `Policy revisions on the shared database: every veto serve, serve-hooks and mcp on it
decides with the revision marked active, within 2 s of a change.

  veto policy push FILE... [--shadow] [--postgres DSN | --state FILE] [--by WHO]
      validate the files as veto validate does, store them as a revision (its id is the
      hash of the files' names and bytes) and make it active; with --shadow, decide every
      live call with it beside the active one and record where they differ, changing no
      verdict. A push that does not validate stores nothing and says why.
  veto policy revisions [--postgres DSN | --state FILE]   every revision, newest first
  veto policy activate REV [--postgres DSN | --state FILE]   make a stored revision active
      (a rollback is activating an older one)
  veto policy activate --shadow REV|none     make REV the shadow, or end the shadow
  veto policy diff [REV] [--postgres DSN | --state FILE]
      the calls the shadow revision (or REV) decided otherwise, by rule

A pushed revision is the whole policy past the built-in default, trusted as the user's
file is; an instance's own policy files apply only while no revision is active. Only an
operator pushes or activates: veto.control refuses both to the agent.`

// isRevisionCommand reports whether args name one of the revision
// subcommands, which read flags of their own.
func isRevisionCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "push", "revisions", "activate", "diff":
		return true
	}
	return false
}

func runRevisions(ctx context.Context, e *env, args []string) int {
	sub, args := args[0], args[1:]
	fs := newFlags(e, "policy "+sub, "[flags]", revisionsDescription)
	statePath := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "the shared PostgreSQL database (a DSN)")
	shadow := fs.Bool("shadow", false, "push, activate: mark the revision as the shadow, not the active one")
	by := fs.String("by", "", "who pushes or activates, recorded with it (default: USER@HOST)")
	pos, code, done := parseInterspersed(e, fs, args)
	if done {
		return code
	}
	who := *by
	if who == "" {
		who = whoAmI()
	}
	switch {
	case sub == "push" && len(pos) == 0:
		fmt.Fprintln(e.stderr, "veto policy push: give the policy files to push")
		return ExitUsage
	case sub == "activate" && len(pos) != 1:
		fmt.Fprintln(e.stderr, "veto policy activate: give one revision id")
		return ExitUsage
	case sub == "revisions" && len(pos) != 0, sub == "diff" && len(pos) > 1:
		fmt.Fprintf(e.stderr, "veto policy %s: unexpected argument %q\n", sub, pos[len(pos)-1])
		return ExitUsage
	}
	var files []policy.NamedFile
	var p *policy.Policy
	if sub == "push" {
		// Validate before touching the database: a push that does not
		// validate changes nothing.
		var ok bool
		if files, p, ok = readRevision(e, pos); !ok {
			return ExitDeny
		}
	}
	st, err := openServiceState(ctx, *statePath, *pg, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto policy %s: cannot open the state: %s\n", sub, stateCause(err))
		return ExitDeny
	}
	defer st.close()
	revs := st.revisions()
	now := time.Now()
	head := state.HeadActive
	if *shadow {
		head = state.HeadShadow
	}
	switch sub {
	case "push":
		rev := state.Revision{ID: p.Revision(), By: who, At: now}
		for _, f := range files {
			rev.Files = append(rev.Files, state.RevisionFile{Name: f.Name, Body: f.Body})
		}
		if err := revs.Push(ctx, rev, head); err != nil {
			fmt.Fprintf(e.stderr, "veto policy push: the revision could not be stored: %s\n", stateCause(err))
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "pushed revision %s (%d file(s)) and made it %s\n", rev.ID, len(files), head)
	case "activate":
		id := pos[0]
		if *shadow && id == "none" {
			id = ""
		}
		if err := revs.Mark(ctx, head, id, who, now); err != nil {
			if errors.Is(err, state.ErrNoRevision) {
				fmt.Fprintf(e.stderr, "veto policy activate: no revision %q is stored; veto policy revisions lists them\n", id)
				return ExitDeny
			}
			fmt.Fprintf(e.stderr, "veto policy activate: %s\n", stateCause(err))
			return ExitDeny
		}
		if id == "" {
			fmt.Fprintln(e.stdout, "the shadow revision is ended")
		} else {
			fmt.Fprintf(e.stdout, "revision %s is %s\n", id, head)
		}
	case "revisions":
		return listRevisions(ctx, e, revs)
	case "diff":
		return showDiff(ctx, e, revs, pos)
	}
	return ExitAllow
}

// readRevision reads the files to push and validates them as one
// revision, as veto validate does, and builds its gate; problems are
// printed.
func readRevision(e *env, paths []string) ([]policy.NamedFile, *policy.Policy, bool) {
	var files []policy.NamedFile
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(e.stdout, "%s: cannot read the policy file: %s\n", path, errText(err))
			return nil, nil, false
		}
		files = append(files, policy.NamedFile{Name: filepath.Base(path), Body: b})
	}
	p, err := policy.LoadRevision(files, &lazyCEL{})
	if err == nil {
		_, err = p.Gate(policy.BuildOptions{Store: memstore.New()})
	}
	if err != nil {
		fmt.Fprintln(e.stdout, err)
		if ps, ok := err.(policy.Problems); ok {
			fmt.Fprintf(e.stdout, "%d problem(s); nothing was pushed\n", len(ps))
		} else {
			fmt.Fprintln(e.stdout, "nothing was pushed")
		}
		return nil, nil, false
	}
	return files, p, true
}

func listRevisions(ctx context.Context, e *env, revs *state.Revisions) int {
	list, err := revs.List(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto policy revisions: %s\n", stateCause(err))
		return ExitDeny
	}
	heads, err := revs.Heads(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto policy revisions: %s\n", stateCause(err))
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tPUSHED\tBY\tHEAD")
	for _, r := range list {
		var mark []string
		if r.ID == heads.Active {
			mark = append(mark, "active since "+heads.ActiveAt.Format(time.RFC3339))
		}
		if r.ID == heads.Shadow {
			mark = append(mark, "shadow since "+heads.ShadowAt.Format(time.RFC3339))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.At.Format(time.RFC3339), r.By, strings.Join(mark, ", "))
	}
	tw.Flush()
	if heads.Active == "" {
		fmt.Fprintln(e.stdout, "no revision is active: each instance decides with its own policy files")
	}
	return ExitAllow
}

// showDiff lists the shadow revision's differences from the active one,
// grouped by what each did.
func showDiff(ctx context.Context, e *env, revs *state.Revisions, pos []string) int {
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	} else {
		heads, err := revs.Heads(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "veto policy diff: %s\n", stateCause(err))
			return ExitDeny
		}
		if id = heads.Shadow; id == "" {
			fmt.Fprintln(e.stderr, "veto policy diff: no revision is the shadow; name one, or push one with --shadow")
			return ExitDeny
		}
	}
	groups, err := revs.Diffs(ctx, id)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto policy diff: %s\n", stateCause(err))
		return ExitDeny
	}
	if len(groups) == 0 {
		fmt.Fprintf(e.stdout, "the shadow revision %s decided every call it saw as the active one did\n", id)
		return ExitAllow
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CALLS\tTOOL\tACTIVE\tSHADOW\tLAST")
	total := 0
	for _, g := range groups {
		total += g.Calls
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", g.Calls, g.Tool, verdictCell(g.Active, g.ActiveRule, g.ActiveReason),
			verdictCell(g.Shadow, g.ShadowRule, g.ShadowReason), g.At.Format(time.RFC3339))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "%d call(s) decided otherwise by %s\n", total, id)
	return ExitAllow
}

func verdictCell(verdict, rule, reason string) string {
	if rule == "" && reason == "" {
		return verdict
	}
	if rule == "" {
		return verdict + " (" + reason + ")"
	}
	return verdict + " " + rule + " (" + reason + ")"
}

// whoAmI names the person pushing: the OS user at this host.
func whoAmI() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += "@" + h
	}
	return name
}
