package cli

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/replay"
)

const replayDescription = `Re-decide a recorded session under a policy and report every verdict that would change:
the what-if to run before tightening a policy.

  veto replay --transcript ~/.claude/projects/P/SESSION.jsonl [--policy NEW.yaml] [--state FILE | --postgres DSN] [--json]
  veto replay --cases DIR --policy NEW.yaml [--json]

The calls come from the client's transcript (veto keeps no copy of arguments); veto's own
events for that session (from its state) give the verdicts they got and the world facts
its rules saw. Replay reads the world only from those records and resolves paths without
touching the filesystem: a fact that was not recorded fails the rule that needs it.
The policy is the one that applies in the session's directory, plus --policy.

With --cases, the calls are those of veto test's case files: each case is decided under its
own policy and then with --policy added, and every verdict that changes is reported.`

func runReplay(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "replay", "--transcript FILE [--policy FILE] [--state FILE | --postgres DSN] [--json]", replayDescription)
	transcript := fs.String("transcript", "", "the Claude Code session transcript (JSONL)")
	file := fs.String("policy", "", "the policy file to replay under, after the user's and the project's")
	state := fs.String("state", os.Getenv("VETO_STATE"), "veto's SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	dsn := fs.String("postgres", "", "a PostgreSQL state instead")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cases := fs.String("cases", "", "replay the cases of veto test's files in this directory instead")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if *cases != "" {
		return replayCases(ctx, e, *cases, *file, *asJSON)
	}
	if *transcript == "" || fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "veto replay: --transcript FILE (or --cases DIR) is required")
		return ExitUsage
	}
	f, err := os.Open(*transcript)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay:", err)
		return ExitUsage
	}
	calls, err := replay.ClaudeTranscript(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay:", err)
		return ExitUsage
	}
	if len(calls) == 0 {
		fmt.Fprintln(e.stderr, "veto replay: the transcript holds no tool calls")
		return ExitUsage
	}
	s, _, err := openStore(ctx, *state, *dsn)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay: cannot open veto's state:", err)
		return ExitDeny
	}
	defer s.Close()
	events, err := s.Events(ctx, calls[0].Call.Run.Ref, 0)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay:", err)
		return ExitDeny
	}
	first := calls[0].Call
	p, err := loadPolicy(first.Cwd, "", *file)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}
	home, _ := os.UserHomeDir()
	o := replay.Options{Home: home}
	if isTerminal(e.stderr) {
		o.Progress = func(done, total int) {
			if done%50 == 0 || done == total {
				fmt.Fprintf(e.stderr, "\rreplaying %d/%d", done, total)
				if done == total {
					fmt.Fprintln(e.stderr)
				}
			}
		}
	}
	rep, err := replay.Run(ctx, calls, events, p, o)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay:", err)
		return ExitDeny
	}
	if *asJSON {
		writeJSON(e.stdout, rep)
		return ExitAllow
	}
	printReplay(e, rep, p)
	return ExitAllow
}

func printReplay(e *env, rep *replay.Report, p *policy.Policy) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "calls\t%d\n", rep.Calls)
	fmt.Fprintf(tw, "unchanged\t%d\n", rep.Unchanged)
	fmt.Fprintf(tw, "newly denied\t%d\n", rep.NewlyDenied)
	fmt.Fprintf(tw, "newly allowed\t%d\n", rep.NewlyAllowed)
	fmt.Fprintf(tw, "denied by another rule\t%d\n", rep.OtherRule)
	fmt.Fprintf(tw, "no verdict recorded\t%d\n", rep.Unrecorded)
	fmt.Fprintf(tw, "policy\t%s\n", p.Revision())
	tw.Flush()
	if len(rep.Changes) == 0 {
		return
	}
	fmt.Fprintln(e.stdout)
	tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCALL\tTOOL\tBEFORE\tAFTER")
	for _, c := range rep.Changes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.Index, c.CallID, c.Tool, c.Before, c.After)
	}
	tw.Flush()
}

// replayCases decides every case of the test files in dir twice, without
// and with the policy file, and reports the verdicts that change.
func replayCases(ctx context.Context, e *env, dir, file string, asJSON bool) int {
	if file == "" {
		fmt.Fprintln(e.stderr, "veto replay --cases: --policy FILE is required: the policy to replay under")
		return ExitUsage
	}
	extra, err := policy.ReadFile(policy.KindFlag, file, false)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}
	paths, err := testFiles(dir)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto replay:", err)
		return ExitUsage
	}
	rep := replay.Report{}
	for _, p := range paths {
		tf, err := readTestFile(p)
		if err != nil {
			fmt.Fprintf(e.stderr, "veto replay: %s: %v\n", p, err)
			return ExitUsage
		}
		for i, tc := range tf.Cases {
			rep.Calls++
			before, msg := decideCase(ctx, p, tf.Policy, nil, tc)
			if msg != "" {
				fmt.Fprintf(e.stderr, "veto replay: %s: %s: %s\n", p, tc.Name, msg)
				return ExitDeny
			}
			after, msg := decideCase(ctx, p, tf.Policy, extra, tc)
			if msg != "" {
				fmt.Fprintf(e.stderr, "veto replay: %s: %s: %s\n", p, tc.Name, msg)
				return ExitDeny
			}
			b := replay.Verdict{Allowed: before.Allowed, Known: true, Rule: before.Rule, Reason: before.Reason}
			a := replay.Verdict{Allowed: after.Allowed, Known: true, Rule: after.Rule, Reason: after.Reason}
			if b == a {
				rep.Unchanged++
				continue
			}
			switch {
			case b.Allowed:
				rep.NewlyDenied++
			case a.Allowed:
				rep.NewlyAllowed++
			default:
				rep.OtherRule++
			}
			name := tc.Name
			if name == "" {
				name = fmt.Sprintf("case %d", i+1)
			}
			rep.Changes = append(rep.Changes, replay.Change{Index: rep.Calls, CallID: p + ": " + name, Tool: fmt.Sprint(tc.Call["tool"]), Before: b, After: a})
		}
	}
	if asJSON {
		writeJSON(e.stdout, rep)
		return ExitAllow
	}
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}, extra}, &lazyCEL{})
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}
	printReplay(e, &rep, p)
	return ExitAllow
}
