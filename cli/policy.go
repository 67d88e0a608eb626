package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
)

// lazyCEL builds the CEL environment only when a policy has a CEL rule.
type lazyCEL struct {
	once sync.Once
	c    *celrule.Compiler
	err  error
}

func (l *lazyCEL) Compile(r policy.RuleSpec) (veto.Rule, error) {
	l.once.Do(func() { l.c, l.err = celrule.New() })
	if l.err != nil {
		return nil, l.err
	}
	return l.c.Compile(r)
}

// loadPolicy loads the policy files of a call running in cwd, with the
// --policy file when given.
func loadPolicy(cwd, workspace, flagPath string) (*policy.Policy, error) {
	o := policy.Locate(cwd, workspace)
	o.FlagPath = flagPath
	o.Compiler = &lazyCEL{}
	return policy.Load(o)
}

// gateFor builds the gate of a policy on an in-memory store.
func gateFor(p *policy.Policy, log *slog.Logger) (*veto.Gate, error) {
	return p.Gate(policy.BuildOptions{Store: memstore.New(), Logger: log})
}

// policyRefusal is check's answer when the policy cannot be loaded: no
// gate exists to decide, so the call is refused.
func policyRefusal(e *env, c *veto.Call, err error) int {
	fmt.Fprintln(e.stderr, "veto: the policy does not load, so every call is refused:")
	fmt.Fprintln(e.stderr, err)
	writeJSON(e.stdout, veto.Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: "policy", Reason: "policy_invalid",
		Risk: veto.RiskHigh, Message: "veto's policy files have problems, so every call is refused until they are fixed."})
	return ExitDeny
}

const policyDescription = `Show the policy veto would apply.

  veto policy show [--policy FILE] [--cwd DIR]   the effective policy, every file merged, with where each part came from
  veto policy default                            the built-in default as a commented veto.yaml to start from
  veto policy schema                             the JSON Schema of veto.yaml, for editors
  veto policy push|revisions|activate|diff       revisions on the shared database (veto policy push -h)`

func runPolicy(ctx context.Context, e *env, args []string) int {
	if isRevisionCommand(args) {
		return runRevisions(ctx, e, args)
	}
	fs := newFlags(e, "policy", "show|default|schema [flags]", policyDescription)
	file := fs.String("policy", "", "a policy file applied after the user's and the project's")
	cwd := fs.String("cwd", ".", "the directory whose project policy applies")
	if code, done := parse(e, fs, args); done {
		return code
	}
	switch fs.Arg(0) {
	case "default":
		io.WriteString(e.stdout, policy.DefaultYAML())
		return ExitAllow
	case "schema":
		e.stdout.Write(policy.Schema())
		return ExitAllow
	case "show":
		rest := fs.Args()[1:]
		if err := fs.Parse(rest); err != nil {
			return ExitUsage
		}
		dir, err := absDir(*cwd)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto policy show:", err)
			return ExitUsage
		}
		p, err := loadPolicy(dir, "", *file)
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			return ExitDeny
		}
		io.WriteString(e.stdout, showPolicy(p))
		return ExitAllow
	case "":
		fmt.Fprintln(e.stderr, "veto policy: want show, default or schema")
		return ExitUsage
	}
	fmt.Fprintf(e.stderr, "veto policy: unknown subcommand %q; want show, default or schema\n", fs.Arg(0))
	return ExitUsage
}

// showPolicy renders the effective policy with the origin of each part.
func showPolicy(p *policy.Policy) string {
	var b strings.Builder
	b.WriteString("# The effective policy: every file merged, in order.\n")
	for _, l := range p.Layers {
		fmt.Fprintf(&b, "#   %-8s %s\n", l.Kind, l.Path)
	}
	fmt.Fprintf(&b, "# revision %s\n", p.Revision())
	for _, s := range p.Show() {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

const validateDescription = `Compile the policy and report every problem: a file:line:col and a sentence each.

With FILE, check that file (as --policy would apply it); without, check the files that
apply in the current directory. Exit status: 0 when there is no problem, 1 otherwise.`

func runValidate(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "validate", "[FILE]", validateDescription)
	if code, done := parse(e, fs, args); done {
		return code
	}
	var p *policy.Policy
	var err error
	switch fs.NArg() {
	case 0:
		p, err = loadPolicy(".", "", "")
	case 1:
		p, err = policy.Load(policy.LoadOptions{FlagPath: fs.Arg(0), Compiler: &lazyCEL{}})
	default:
		fmt.Fprintln(e.stderr, "veto validate: give at most one file")
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintln(e.stdout, err)
		if ps, ok := err.(policy.Problems); ok {
			fmt.Fprintf(e.stdout, "%d problem(s)\n", len(ps))
		}
		return ExitDeny
	}
	var names []string
	for _, l := range p.Layers[1:] {
		names = append(names, l.Path)
	}
	fmt.Fprintf(e.stdout, "ok: %d file(s), %d rule(s) of your own: %s\n", len(names), len(p.Rules), strings.Join(append([]string{"builtin"}, names...), ", "))
	return ExitAllow
}

const explainDescription = `Explain the decision on one call: every rule in order with its outcome and why,
the target, the history it was decided on, and the verdict. Nothing is recorded.

The call is JSON on stdin (as veto check reads it), or given with --tool and --arg:

  veto explain --tool Bash --arg command='git reset --hard'`

// argFlags collects --arg name=value.
type argFlags map[string]any

func (a argFlags) String() string { return "" }
func (a argFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value")
	}
	a[k] = v
	return nil
}

func runExplain(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "explain", "[--tool NAME --arg k=v ...] [--policy FILE] [--json] [< call.json]", explainDescription)
	tool := fs.String("tool", "", "the tool to call (instead of JSON on stdin)")
	callArgs := argFlags{}
	fs.Var(callArgs, "arg", "an argument of the call as name=value (repeatable)")
	cwd := fs.String("cwd", ".", "the call's working directory, with --tool")
	file := fs.String("policy", "", "a policy file applied after the user's and the project's")
	asJSON := fs.Bool("json", false, "print the explanation as JSON")
	if code, done := parse(e, fs, args); done {
		return code
	}
	var c veto.Call
	if *tool != "" {
		dir, err := absDir(*cwd)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto explain:", err)
			return ExitUsage
		}
		c = veto.Call{Tool: *tool, Args: map[string]any(callArgs), Cwd: dir, Run: veto.Run{Fresh: true}}
	} else {
		if len(callArgs) > 0 {
			fmt.Fprintln(e.stderr, "veto explain: --arg needs --tool")
			return ExitUsage
		}
		var code int
		if c, code = readCall(e, "veto explain"); code != 0 {
			return code
		}
	}
	p, err := loadPolicy(c.Cwd, c.Workspace, *file)
	if err != nil {
		return policyRefusal(e, &c, err)
	}
	g, err := gateFor(p, nil)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto explain: cannot build the gate:", err)
		return ExitDeny
	}
	x := g.Explain(ctx, &c)
	if *asJSON {
		writeJSON(e.stdout, map[string]any{"verdict": x.Verdict, "target": x.Target, "history": map[string]any{
			"observations": x.HistoryLen, "complete": x.HistoryComplete}, "rules": x.Rules, "policy": p.Revision()})
	} else {
		printExplanation(e.stdout, &x, p)
	}
	if x.Verdict.Allowed {
		return ExitAllow
	}
	return ExitDeny
}

func printExplanation(w io.Writer, x *veto.Explanation, p *policy.Policy) {
	v := x.Verdict
	fmt.Fprintf(w, "call      %s (%s)\n", v.Tool, v.CallID)
	fmt.Fprintf(w, "target    %s\n", v.Target)
	complete := "incomplete"
	if x.HistoryComplete {
		complete = "complete"
	}
	fmt.Fprintf(w, "history   %d observation(s), %s\n", x.HistoryLen, complete)
	fmt.Fprintf(w, "policy    %s (%d file(s))\n\n", p.Revision(), len(p.Layers))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tOUTCOME\tREASON\t")
	for _, s := range x.Rules {
		mark := ""
		switch {
		case !v.Allowed && v.Stage == veto.StageRule && s.Rule == v.Rule:
			mark = "<- decides"
		case v.Allowed && s.Rule == v.WouldDeny:
			mark = "<- monitor: would deny; the call runs"
		case s.Monitor:
			mark = "(monitor)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Rule, s.Outcome, s.Reason, mark)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, s := range x.Rules {
		for _, k := range s.Known {
			fmt.Fprintf(w, "knows     %s: %s\n", s.Rule, k)
		}
	}
	if v.Allowed && v.WouldDeny != "" {
		fmt.Fprintf(w, "verdict   allow (monitor mode: %s/%s would deny it)\n", v.WouldDeny, v.WouldReason)
		return
	}
	if v.Allowed {
		fmt.Fprintln(w, "verdict   allow")
		return
	}
	why := v.Reason
	if v.Rule != "" {
		why = v.Rule + "/" + v.Reason
	}
	if v.ToolDenial != "" {
		why += "/" + string(v.ToolDenial)
	}
	fmt.Fprintf(w, "verdict   deny at %s: %s (risk %s)\n          %s\n", v.Stage, why, v.Risk, v.Message)
}
