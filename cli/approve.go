package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/presence"
)

const approveDescription = `Answer a call a rule asked a person about, or list them. Only a person answers: the
answer is confirmed on your terminal (/dev/tty) by typing the code it shows, and refused
when run by the agent, or on a terminal the agent holds (docs/threat-model.md).

  veto approve                         the calls waiting for a person (the last 24 hours)
  veto approve --show RUN CALL_ID      one waiting call: its arguments (secrets masked), target and hosts
  veto approve RUN CALL_ID [--ttl 10m] one call of that run with the same tool and arguments may pass, once
  veto approve --deny RUN CALL_ID      refuse it (the call keeps asking)

--args HASH binds the answer to the arguments shown (their SHA-256, or its first 12 digits
or more, as the list and --show print it): a question about other arguments is refused.

An approved call is decided again, with the live policy, when it is made; every other rule
still applies. The answer is an event in the run's chain (veto log --all). The page of
veto ui and veto serve answers the same way.`

func runApprove(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "approve", "[RUN CALL_ID] [--deny] [--ttl 10m] [--state FILE | --postgres DSN]", approveDescription)
	deny := fs.Bool("deny", false, "refuse the call instead of approving it")
	show := fs.Bool("show", false, "show the waiting call RUN CALL_ID instead of answering")
	shown := fs.String("args", "", "the argument hash shown (at least its first 12 digits): answer only that call")
	ttl := fs.Duration("ttl", 10*time.Minute, "how long the approval lasts (at most 24h)")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() != 0 && fs.NArg() != 2 {
		fmt.Fprintln(e.stderr, "veto approve: give RUN and CALL_ID, or nothing to list the waiting calls")
		return ExitUsage
	}
	st, err := openServiceState(ctx, *state, *pg, false)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	if st.acquire != nil {
		release, err := st.acquire(ctx)
		if err != nil {
			fmt.Fprintln(e.stderr, "veto approve:", stateCause(err))
			return ExitDeny
		}
		defer release()
	}
	if fs.NArg() == 0 {
		return listQuestions(ctx, e, st)
	}
	if *show {
		return showQuestion(ctx, e, st, fs.Arg(0), fs.Arg(1))
	}
	p, err := policy.Load(policy.Locate("", ""))
	if err != nil {
		p, err = policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve: cannot build the gate:", err)
		return ExitDeny
	}
	g, err := p.Gate(policy.BuildOptions{Store: st.store})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve: cannot build the gate:", err)
		return ExitDeny
	}
	me := veto.Actor{Kind: "user", ID: os.Getenv("USER")}
	if u, err := user.Current(); err == nil {
		me.ID = u.Username
	}
	run, call := fs.Arg(0), fs.Arg(1)
	hash, err := shownHash(ctx, st, run, call, *shown)
	var q veto.Question
	if err == nil {
		q, err = openQuestion(ctx, st, run, call)
	}
	if code, failed := questionFailed(e, err, run, call, *shown); failed {
		return code
	}
	if hash == "" {
		hash = q.ArgsHash // the answer binds to what the prompt shows
	}
	// The answer is a person's: proved on the terminal, after showing
	// what it answers (presence; docs/threat-model.md).
	sh, _ := shownOf(ctx, st, &q, time.Now())
	t, err := presence.Prove(ctx, approvalQuestion(q, sh, !*deny, *ttl))
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve:", err)
		return ExitDeny
	}
	defer t.Close()
	// What is answered is what was shown: the same question, still open.
	now, err := openQuestion(ctx, st, run, call)
	if code, failed := questionFailed(e, err, run, call, *shown); failed {
		return code
	}
	if now.Seq != q.Seq || now.ArgsHash != q.ArgsHash {
		fmt.Fprintf(e.stderr, "veto approve: call %s in run %s was asked again while you answered; nothing was answered, run veto approve again\n", call, run)
		return ExitDeny
	}
	if code, failed := questionFailed(e, g.AnswerShown(ctx, run, call, hash, me, !*deny, *ttl), run, call, *shown); failed {
		return code
	}
	var done string
	if *deny {
		done = fmt.Sprintf("refused call %s of run %s, as user:%s", call, run, me.ID)
	} else {
		done = fmt.Sprintf("approved call %s of run %s for %s, as user:%s: the same call may pass once", call, run, *ttl, me.ID)
	}
	fmt.Fprintln(e.stdout, done)
	fmt.Fprintf(t, "\r\n%s\r\n", done)
	return ExitAllow
}

// questionFailed prints why a question cannot be answered; failed is
// false for a nil err.
func questionFailed(e *env, err error, run, call, shown string) (code int, failed bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, veto.ErrNotShown):
		fmt.Fprintf(e.stderr, "veto approve: call %s in run %s is asked about with other arguments than %s; look again (--show)\n", call, run, shown)
	case errors.Is(err, veto.ErrNoQuestion):
		fmt.Fprintf(e.stderr, "veto approve: no call %s in run %s waits for a person\n", call, run)
	case errors.Is(err, veto.ErrAnswered):
		fmt.Fprintf(e.stderr, "veto approve: call %s in run %s was answered already\n", call, run)
	default:
		fmt.Fprintln(e.stderr, "veto approve:", err)
	}
	return ExitDeny, true
}

// openQuestion is the open question of call in run, from the run's
// projection.
func openQuestion(ctx context.Context, st *serviceState, run, call string) (veto.Question, error) {
	p, err := st.store.Load(ctx, run)
	if err != nil {
		return veto.Question{}, fmt.Errorf("the run cannot be read: %s", stateCause(err))
	}
	if p.Approvals == nil {
		return veto.Question{}, veto.ErrNoQuestion
	}
	q, ok, err := p.Approvals.Asked(ctx, call)
	switch {
	case err != nil:
		return veto.Question{}, fmt.Errorf("the run cannot be read: %s", stateCause(err))
	case !ok:
		return veto.Question{}, veto.ErrNoQuestion
	case q.Answered:
		return veto.Question{}, veto.ErrAnswered
	}
	return q, nil
}

// approvalQuestion is what the person confirms: the answer, what the
// question holds, and the call's arguments as the state keeps them to
// show (secrets masked), when it still does.
func approvalQuestion(q veto.Question, sh veto.Shown, grant bool, ttl time.Duration) presence.Question {
	action := fmt.Sprintf("APPROVE call %s of run %s: the same call may pass once, within %s", q.CallID, q.Run, ttl)
	if !grant {
		action = fmt.Sprintf("REFUSE call %s of run %s", q.CallID, q.Run)
	}
	d := [][2]string{{"tool", q.Tool}, {"rule", q.Rule + " (" + q.Reason + ")"}}
	if sh.Target.Known() {
		d = append(d, [2]string{"target", string(sh.Target.Kind) + " " + sh.Target.ID})
	}
	for _, h := range sh.Hosts {
		d = append(d, [2]string{"host", h})
	}
	for _, f := range sh.Fields {
		d = append(d, [2]string{f.Name, oneLine(f.Value, 200)})
	}
	if len(sh.Fields) == 0 {
		d = append(d, [2]string{"arguments", "not held (expired, dropped or answered): judge by the hash alone"})
	}
	if q.Risk != veto.RiskNone {
		d = append(d, [2]string{"risk", q.Risk.String()})
	}
	d = append(d, [2]string{"asked", q.Time.Local().Format("2006-01-02 15:04:05")})
	if q.ArgsHash != "" {
		d = append(d, [2]string{"arguments", "SHA-256 " + shortHash(q.ArgsHash)})
	}
	return presence.Question{Command: "veto approve", Action: action, Details: d, Confirm: true}
}

// listQuestions prints the calls waiting for a person (veto.Waiting),
// each with the command, path or URL it holds, secrets masked, when the
// state still holds it.
func listQuestions(ctx context.Context, e *env, st *serviceState) int {
	now := time.Now()
	qs, err := veto.Waiting(ctx, st.log, veto.WaitQuery{Since: now.Add(-veto.ShownFor)})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve:", stateCause(err))
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tRUN\tCALL\tTOOL\tRULE/REASON\tARGUMENTS (SHA-256)\tCALL SHOWS")
	for i := len(qs) - 1; i >= 0; i-- { // oldest first, as a terminal reads
		q := qs[i]
		what := "(arguments not held)"
		if sh, ok := shownOf(ctx, st, &q, now); ok && len(sh.Fields) > 0 {
			what = oneLine(sh.Fields[0].Name+": "+sh.Fields[0].Value, 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\t%.12s…\t%s\n", q.Time.Local().Format("2006-01-02 15:04:05"), q.Run, q.CallID, q.Tool, q.Rule, q.Reason, q.ArgsHash, what)
	}
	tw.Flush()
	return ExitAllow
}

// shownOf is what the state holds to show a person of question q, for
// the very arguments it asks about.
func shownOf(ctx context.Context, st *serviceState, q *veto.Question, now time.Time) (veto.Shown, bool) {
	p, err := st.store.Load(ctx, q.Run)
	if err != nil || p.Approvals == nil {
		return veto.Shown{}, false
	}
	sh, ok, err := p.Approvals.Shown(ctx, q.CallID, now)
	return sh, err == nil && ok && sh.ArgsHash == q.ArgsHash
}

// showQuestion prints one waiting call as a person judges it: what the
// rule asked, the arguments through the tool's roles (secrets masked), the
// target the resolvers found and the hosts.
func showQuestion(ctx context.Context, e *env, st *serviceState, run, call string) int {
	p, err := st.store.Load(ctx, run)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve:", stateCause(err))
		return ExitDeny
	}
	var q veto.Question
	ok := false
	if p.Approvals != nil {
		q, ok, err = p.Approvals.Asked(ctx, call)
	}
	switch {
	case err != nil:
		fmt.Fprintln(e.stderr, "veto approve:", stateCause(err))
		return ExitDeny
	case !ok:
		fmt.Fprintf(e.stderr, "veto approve: no call %s in run %s waits for a person\n", call, run)
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	state := "waiting"
	if q.Answered {
		state = "answered"
	}
	fmt.Fprintf(tw, "run\t%s\ncall\t%s\ntool\t%s\nasked\t%s\t%s\nrule\t%s/%s\nargs\tsha256:%s\n", run, call, q.Tool,
		q.Time.Local().Format("2006-01-02 15:04:05"), state, q.Rule, q.Reason, q.ArgsHash)
	sh, held := shownOf(ctx, st, &q, time.Now())
	if !held {
		fmt.Fprintln(tw, "arguments\tnot held (expired, dropped or answered): judge by the hash alone")
		tw.Flush()
		return ExitAllow
	}
	target := "unknown"
	if sh.Target.Known() {
		target = string(sh.Target.Kind) + " " + sh.Target.ID
	}
	fmt.Fprintf(tw, "target\t%s\n", target)
	for _, h := range sh.Hosts {
		fmt.Fprintf(tw, "host\t%s\n", h)
	}
	tw.Flush()
	for _, f := range sh.Fields {
		label := f.Name
		if f.Role != "" {
			label += " (" + string(f.Role) + ")"
		}
		fmt.Fprintf(e.stdout, "%s:\n%s\n", label, indent(f.Value))
	}
	if sh.Masked > 0 {
		fmt.Fprintf(e.stdout, "(%d value(s) that look like secrets are masked)\n", sh.Masked)
	}
	if sh.Cut {
		fmt.Fprintln(e.stdout, "(some arguments are too long to show whole)")
	}
	return ExitAllow
}

// shownHash resolves --args to the full argument hash of the question of
// call in run: "" binds to whatever the question is about, a prefix of at
// least 12 digits must be the question's.
func shownHash(ctx context.Context, st *serviceState, run, call, prefix string) (string, error) {
	if prefix == "" {
		return "", nil
	}
	prefix = strings.TrimPrefix(strings.TrimSuffix(prefix, "…"), "sha256:")
	if len(prefix) < 12 {
		return "", errors.New("--args: give at least the first 12 digits of the argument hash")
	}
	p, err := st.store.Load(ctx, run)
	if err != nil {
		return "", errors.New(stateCause(err))
	}
	if p.Approvals == nil {
		return "", fmt.Errorf("no call %s in run %s waits for a person", call, run)
	}
	q, ok, err := p.Approvals.Asked(ctx, call)
	switch {
	case err != nil:
		return "", errors.New(stateCause(err))
	case !ok:
		return "", fmt.Errorf("no call %s in run %s waits for a person", call, run)
	case !strings.HasPrefix(q.ArgsHash, prefix):
		return "", veto.ErrNotShown
	}
	return q.ArgsHash, nil
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
