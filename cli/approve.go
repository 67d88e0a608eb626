package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"text/tabwriter"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/presence"
)

const approveDescription = `Answer a call a rule asked a person about, or list them. Only a person answers: the
answer is confirmed on your terminal (/dev/tty) by typing the code it shows, and refused
when run by the agent, or on a terminal the agent holds (docs/threat-model.md).

  veto approve                         the calls waiting for a person (the last 24 hours)
  veto approve RUN CALL_ID [--ttl 10m] one call of that run with the same tool and arguments may pass, once
  veto approve --deny RUN CALL_ID      refuse it (the call keeps asking)

An approved call is decided again, with the live policy, when it is made; every other rule
still applies. The answer is an event in the run's chain (veto log --all). The page of
veto ui and veto serve answers the same way.`

func runApprove(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "approve", "[RUN CALL_ID] [--deny] [--ttl 10m] [--state FILE | --postgres DSN]", approveDescription)
	deny := fs.Bool("deny", false, "refuse the call instead of approving it")
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
	q, err := openQuestion(ctx, st.store, run, call)
	if code, failed := questionFailed(e, err, run, call); failed {
		return code
	}
	// The answer is a person's: proved on the terminal, after showing
	// what it answers (presence; docs/threat-model.md).
	t, err := presence.Prove(ctx, approvalQuestion(run, q, !*deny, *ttl))
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve:", err)
		return ExitDeny
	}
	defer t.Close()
	// What is answered is what was shown: the same question, still open.
	now, err := openQuestion(ctx, st.store, run, call)
	if code, failed := questionFailed(e, err, run, call); failed {
		return code
	}
	if now.Seq != q.Seq || now.ArgsHash != q.ArgsHash {
		fmt.Fprintf(e.stderr, "veto approve: call %s in run %s was asked again while you answered; nothing was answered, run veto approve again\n", call, run)
		return ExitDeny
	}
	if code, failed := questionFailed(e, g.Answer(ctx, run, call, me, !*deny, *ttl), run, call); failed {
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
func questionFailed(e *env, err error, run, call string) (code int, failed bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, veto.ErrNoQuestion):
		fmt.Fprintf(e.stderr, "veto approve: no call %s in run %s waits for a person\n", call, run)
	case errors.Is(err, veto.ErrAnswered):
		fmt.Fprintf(e.stderr, "veto approve: call %s in run %s was answered already\n", call, run)
	default:
		fmt.Fprintln(e.stderr, "veto approve:", err)
	}
	return ExitDeny, true
}

// openQuestion is the open question of call in run: its event, the last
// that asked a person about that call id and has no answer since.
func openQuestion(ctx context.Context, s veto.Store, run, call string) (veto.Event, error) {
	evs, err := s.Events(ctx, run, 0)
	if err != nil {
		return veto.Event{}, fmt.Errorf("the run's events cannot be read: %s", stateCause(err))
	}
	var q *veto.Event
	missing := veto.ErrNoQuestion
	for i := range evs {
		ev := &evs[i]
		switch {
		case ev.CallID != call:
		case ev.Kind == veto.EventDenied && ev.Awaiting == veto.AwaitApproval:
			q = ev
		case (ev.Kind == veto.EventApproved || ev.Kind == veto.EventApprovalRefused) && q != nil:
			q, missing = nil, veto.ErrAnswered
		}
	}
	if q == nil {
		return veto.Event{}, missing
	}
	return *q, nil
}

// approvalQuestion is what the person confirms: the answer and what the
// question's event holds (never argument text: its hash only).
func approvalQuestion(run string, q veto.Event, grant bool, ttl time.Duration) presence.Question {
	action := fmt.Sprintf("APPROVE call %s of run %s: the same call may pass once, within %s", q.CallID, run, ttl)
	if !grant {
		action = fmt.Sprintf("REFUSE call %s of run %s", q.CallID, run)
	}
	d := [][2]string{{"tool", q.Tool}, {"rule", q.Rule + " (" + q.Reason + ")"}}
	if q.Target.Kind != "" {
		d = append(d, [2]string{"target", string(q.Target.Kind) + " " + q.Target.ID})
	}
	if q.Risk != veto.RiskNone {
		d = append(d, [2]string{"risk", q.Risk.String()})
	}
	d = append(d, [2]string{"asked", q.Time.Local().Format("2006-01-02 15:04:05")})
	if q.Actor.Kind != "" {
		d = append(d, [2]string{"by", q.Actor.Kind + ":" + q.Actor.ID})
	}
	if q.ArgsHash != "" {
		d = append(d, [2]string{"arguments", "SHA-256 " + shortHash(q.ArgsHash)})
	}
	return presence.Question{Command: "veto approve", Action: action, Details: d, Confirm: true}
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// listQuestions prints the calls waiting for a person.
func listQuestions(ctx context.Context, e *env, st *serviceState) int {
	type key struct{ run, call string }
	open := map[key]veto.Event{}
	var order []key
	q := veto.LogQuery{Since: time.Now().Add(-24 * time.Hour), Kinds: []veto.EventKind{veto.EventDenied, veto.EventApproved, veto.EventApprovalRefused}}
	err := st.log.Scan(ctx, q, func(run string, _ uint64, b []byte) error {
		ev, err := eventlog.DecodeEvent(b)
		if err != nil {
			return nil
		}
		k := key{run, ev.CallID}
		if ev.Kind == veto.EventDenied && ev.Awaiting == veto.AwaitApproval {
			if _, seen := open[k]; !seen {
				order = append(order, k)
			}
			open[k] = ev
		} else if ev.Kind != veto.EventDenied {
			delete(open, k)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto approve:", stateCause(err))
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tRUN\tCALL\tTOOL\tRULE/REASON\tARGUMENTS (SHA-256)")
	for _, k := range order {
		ev, ok := open[k]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s/%s\t%.12s…\n", ev.Time.Local().Format("2006-01-02 15:04:05"), k.run, k.call, ev.Tool, ev.Rule, ev.Reason, ev.ArgsHash)
	}
	tw.Flush()
	return ExitAllow
}
