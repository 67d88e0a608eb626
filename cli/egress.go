package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
)

const egressDescription = `Add a host to one run's egress allow-list, or list what was added.

  veto egress allow HOST --run R   add HOST (a name, *.domain, host:port, an address or a CIDR)
  veto egress list --run R         print the entries events added to the run's list

An addition is an event in the run's log, so a replay decides each call under the list in
force when it was made. It matters in egress allowlist mode; the policy's egress.allow is the
list every run starts with. The run must have made a call already (see veto log).`

func runEgress(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || (args[0] != "allow" && args[0] != "list") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprintln(e.stdout, egressDescription)
			return ExitAllow
		}
		fmt.Fprintln(e.stderr, "veto egress: want a subcommand: allow HOST --run R, or list --run R")
		return ExitUsage
	}
	sub := args[0]
	fs := newFlags(e, "egress "+sub, "HOST --run R", egressDescription)
	state := fs.String("state", "", "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	dsn := fs.String("postgres", "", "a PostgreSQL database instead: postgres://user@host:port/db")
	run := fs.String("run", "", "the run (as veto log shows it)")
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	var pos []string
	for fs.NArg() > 0 {
		pos = append(pos, fs.Arg(0))
		if code, done := parse(e, fs, fs.Args()[1:]); done {
			return code
		}
	}
	want := 0
	if sub == "allow" {
		want = 1
	}
	if len(pos) != want {
		fmt.Fprintf(e.stderr, "veto egress %s: want %d argument(s), got %d\n", sub, want, len(pos))
		return ExitUsage
	}
	if *run == "" {
		fmt.Fprintf(e.stderr, "veto egress %s: --run is required\n", sub)
		return ExitUsage
	}
	host := ""
	if sub == "allow" {
		host = pos[0]
		if _, err := egress.ParseList([]string{host}); err != nil {
			fmt.Fprintf(e.stderr, "veto egress allow: %v\n", err)
			return ExitUsage
		}
	}
	s, where, err := openStore(ctx, *state, *dsn)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto egress: cannot open the state:", err)
		return ExitDeny
	}
	defer s.Close()
	if sub == "list" {
		st, err := s.Load(ctx, *run)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto egress list:", err)
			return ExitDeny
		}
		ek := st.Knowledge
		if !st.Exists() || ek == nil {
			fmt.Fprintf(e.stderr, "veto egress list: run %q has no events in %s\n", *run, where)
			return ExitDeny
		}
		hosts, err := ek.Egress(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto egress list:", err)
			return ExitDeny
		}
		for _, h := range hosts {
			fmt.Fprintln(e.stdout, h)
		}
		return ExitAllow
	}
	g, err := veto.NewGate(veto.Config{Store: s})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto egress allow:", err)
		return ExitDeny
	}
	switch err := g.AllowEgress(ctx, *run, host); {
	case errors.Is(err, veto.ErrNoRun):
		fmt.Fprintf(e.stderr, "veto egress allow: run %q has no events in %s yet; add the host to the policy's egress.allow, or allow it after the run's first call\n", *run, where)
		return ExitDeny
	case err != nil:
		fmt.Fprintln(e.stderr, "veto egress allow:", err)
		return ExitDeny
	}
	fmt.Fprintf(e.stdout, "run %s: egress to %s allowed\n", *run, host)
	return ExitAllow
}
