// Package hook answers one hook event of an agent client: decode it, load
// the policy, open the state, decide or record, and reply in the client's
// protocol, failing closed on every error. veto hook CLIENT answers with
// it in its own process, and veto serve-hooks answers veto-hook's requests
// with it (package wire is veto-hook, which links none of this).
package hook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/internal/loaded"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/state"
)

// Clients are the agent clients veto speaks to, by the name commands take
// (the client table's, package clients).
var Clients = wire.Clients

// AdapterFor returns the adapter of a client from agent's registry (nil
// for a name none is registered for: the program links package adapters),
// with this process's environment (the client's, for veto hook).
func AdapterFor(name string) agent.Adapter {
	return agent.For(name, agent.Env{ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR"), Vars: wire.ClientEnvNow()})
}

// Options are one hook invocation's settings.
type Options struct {
	State string // the SQLite state file; "" : the default path
	// Postgres, when set, is a PostgreSQL DSN (VETO_POSTGRES, --postgres):
	// decisions are made on that database instead of the SQLite state,
	// shared by every veto that names it.
	Postgres string
	Timeout  time.Duration // refuse the call when no answer is ready by then
	Approve  bool          // answer allow for the user
	// AskedAt, when set, is when veto-hook sent this event to a hook
	// server that did not answer: a decision recorded for the call since
	// then is that server's, and is the answer (the call is not decided
	// twice).
	AskedAt time.Time
	// Compiler compiles CEL rules; nil means this program has no CEL, and
	// an event whose policy has CEL rules is answered ErrNeedsCEL.
	Compiler policy.Compiler
	// Supervisor, when set, is the command line that runs a command under
	// veto exec with this state (policy.BuildOptions'): a shell command
	// the analyzer cannot vouch for is then allowed rewritten to run
	// under it, for a client that runs rewritten calls. Nil: refused.
	Supervisor []string

	// open opens the state; nil opens it for this event and closes it
	// after (state.Once). The hook server keeps its stores open.
	open state.Opener
	// gates, when set, keeps built gates by policy files and state.
	gates *gateCache
}

// ErrNeedsCEL is Reply's error when the policy has CEL rules and Options
// has no Compiler; the call is blocked.
var ErrNeedsCEL = errors.New("hook: the policy has CEL rules")

// Reply answers the event read from stdin. Whatever goes wrong, a tool
// call is blocked.
func Reply(ctx context.Context, a agent.Adapter, stdin io.Reader, o Options) (agent.Reply, error) {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	// The deadline covers reading the event too: a client that never
	// closes stdin is refused within it.
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	b, err := wire.ReadEvent(stdin, agent.MaxEvent+1, o.Timeout)
	if errors.Is(err, wire.ErrSlowInput) {
		return a.Deny(fmt.Sprintf("veto did not receive the whole hook event within %s (its input was not closed), so the call is blocked.", o.Timeout)), nil
	}
	return replyTo(ctx, a, b, err, o)
}

// replyTo answers the event b (read with error err) within ctx's
// deadline: Reply's once the event is read, and the hook server's, which
// has the event in its request.
func replyTo(ctx context.Context, a agent.Adapter, b []byte, err error, o Options) (agent.Reply, error) {
	if err != nil || len(b) > agent.MaxEvent {
		return a.Deny("veto could not read the hook event, so the call is blocked."), nil
	}
	// Another client's payload at this client's hook (Copilot CLI runs
	// Claude Code's hooks): decided as the sender's, answered in its form.
	a = agent.Sender(a, b)
	type answer struct {
		r   agent.Reply
		err error
	}
	done := make(chan answer, 1)
	deciders.run(func() {
		defer func() {
			if recover() != nil {
				done <- answer{r: a.Deny("veto failed while deciding, so the call is blocked.")}
			}
		}()
		r, err := handle(ctx, a, b, o)
		// Waiting for a person's answer: asked again, with the state
		// opened afresh each time, until it comes or the time left is
		// what deciding needs; then no opinion, and the client's own
		// prompt asks the person.
		margin := max(time.Second, o.Timeout/10)
		for errors.Is(err, errNotYet) {
			if dl, _ := ctx.Deadline(); time.Until(dl) < margin+pollAnswer {
				r, err = agent.Reply{}, nil
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(pollAnswer):
			}
			r, err = handle(ctx, a, b, o)
		}
		done <- answer{r, err}
	})
	late := func() agent.Reply {
		return a.Deny(fmt.Sprintf("veto did not decide within %s, so the call is blocked.", o.Timeout))
	}
	select {
	case x := <-done:
		if ctx.Err() != nil {
			// Out of time as well: the deadline is the cause of whatever
			// failed, and an answer after it is not given.
			return late(), nil
		}
		return x.r, x.err
	case <-ctx.Done():
		return late(), nil
	}
}

// activeRevision is the revision a shared PostgreSQL database marks
// active ("" none, or an SQLite state: its files decide); a hook server
// asks at most once a second.
func activeRevision(ctx context.Context, o Options, name state.Name, s veto.Store) (string, error) {
	if !name.Postgres() {
		return "", nil
	}
	d, ok := s.(interface{ DB() *sql.DB })
	if !ok {
		return "", nil
	}
	return o.gates.heads(ctx, name, d.DB())
}

// noCEL stands in for a compiler in a program without CEL: it notes that
// one was needed.
type noCEL struct{ needed bool }

func (n *noCEL) Compile(policy.RuleSpec) (veto.Rule, error) {
	n.needed = true
	return nil, ErrNeedsCEL
}

// errNotYet is handle's answer to an event that waits for a person's
// answer that has not come yet.
var errNotYet = errors.New("hook: no answer yet")

// pollAnswer is how often a waiting event looks for a person's answer.
const pollAnswer = 250 * time.Millisecond

func handle(ctx context.Context, a agent.Adapter, b []byte, o Options) (agent.Reply, error) {
	ev, err := a.Decode(b)
	if err != nil {
		return a.Deny("veto could not read the hook event (" + err.Error() + "), so the call is blocked."), nil
	}
	if ev.Kind == agent.Ignore {
		return agent.Reply{}, nil
	}
	if ev.Kind == agent.Config {
		return configReply(a, &ev), nil
	}
	// failed answers a broken setup: a tool call is blocked; for the other
	// events the failure is reported without blocking (the tool already ran).
	failed := func(msg string) agent.Reply {
		if ev.Kind == agent.Decide {
			return a.Deny(msg)
		}
		return agent.Reply{Exit: 1, Stderr: msg + "\n"}
	}
	lo := policy.Locate(ev.Cwd, ev.ProjectDir)
	lo.Compiler = o.Compiler
	var stand *noCEL
	if lo.Compiler == nil {
		stand = &noCEL{}
		lo.Compiler = stand
	}
	// The state is proved sound before every answer, the cached gate's
	// as well: a file damaged, replaced or newer is refused, its cause
	// named.
	name, err := state.Name{Path: o.State, DSN: o.Postgres}.Resolve()
	if err != nil {
		return failed(stateRefused(err)), nil
	}
	open := o.open
	if open == nil {
		open = func(ctx context.Context, n state.Name) (veto.Store, func(), error) {
			return state.Once(ctx, n, BusyTimeout(o.Timeout))
		}
	}
	// Every kind left appends what it does (a run's start, a decision, an
	// observation): its appends prove the state's schema where they write.
	s, done, err := open(loaded.Appends(ctx), name)
	if err != nil {
		return failed(stateRefused(err)), nil
	}
	defer done()
	// On a shared PostgreSQL database, the revision marked active there
	// is the policy (veto policy push), in place of the files.
	active, err := activeRevision(ctx, o, name, s)
	if err != nil {
		return failed("veto cannot read the policy revision its database marks active: " + causeText(err) + ", so the call is blocked (state_unavailable)."), nil
	}
	var key string
	if o.gates != nil {
		// The DSN may hold a password: it names the store only in the
		// gate cache's key, never in a message.
		key = fmt.Sprintf("%s%p", o.gates.key(lo, state.Key(name)), s)
		if active != "" {
			key = fmt.Sprintf("revision %s %s%p", active, state.Key(name), s)
		}
	}
	p, g := o.gates.get(key)
	if g == nil {
		if active != "" {
			db := s.(interface{ DB() *sql.DB }).DB()
			p, err = live.Stored(ctx, state.NewRevisions(func() *sql.DB { return db }, "postgres"), active, lo.Compiler)
		} else {
			p, err = policy.Load(lo)
		}
		if stand != nil && stand.needed {
			return failed("veto cannot compile the policy's CEL rules here, so the call is blocked."), ErrNeedsCEL
		}
		if err != nil {
			var ps policy.Problems
			switch {
			case errors.As(err, &ps) && len(ps) > 0 && active != "":
				return failed(fmt.Sprintf("veto's policy revision %s does not load here (%s), so the call is blocked", active, ps[0])), nil
			case errors.As(err, &ps) && len(ps) > 0:
				return failed(fmt.Sprintf("veto's policy does not load (%s), so the call is blocked until it is fixed; run: veto validate", ps[0])), nil
			case active != "":
				return failed("veto cannot load the policy revision its database marks active (" + active + "): " + err.Error() + ", so the call is blocked."), nil
			}
			return failed("veto's policy does not load, so the call is blocked; run: veto validate"), nil
		}
		var pr veto.Probe // a one-shot process: the policy's live probe, which remembers nothing
		if o.gates != nil {
			pr = o.gates.probe
		}
		if g, err = p.Gate(policy.BuildOptions{Store: s, Probe: pr, Supervisor: supervisorFor(o)}); err != nil {
			return failed("veto could not build its rules, so the call is blocked."), nil
		}
		o.gates.put(key, p, g)
	}
	switch ev.Kind {
	case agent.Start:
		if err := g.Start(ctx, veto.Run{Ref: ev.Session, Fresh: ev.Fresh}); err != nil {
			return agent.Reply{Exit: 1, Stderr: veto.Because("veto could not record the session's start", err, ".") + "\n"}, nil
		}
		return agent.Reply{}, nil
	case agent.Decide:
		// A server that recorded its decision and did not give it (it
		// died, or was stopped past veto-hook's deadline): its decision is
		// the answer, never a second one. Only a decision recorded since
		// veto-hook asked, for the same tool, is taken: an older one with
		// the same id is another call's (some clients' ids repeat).
		if !o.AskedAt.IsZero() {
			if r, ok := recorded(ctx, a, s, &ev.Call, o.AskedAt, o.Approve || p.Approve, lostAnswer); ok {
				return r, nil
			}
		}
		// A call the client's own registration of veto decided just
		// before (it runs first): its decision is the answer. None found,
		// the call is decided here.
		if d := twinRegistered(&ev); d > 0 {
			if r, ok := recorded(ctx, a, s, &ev.Call, time.Now().Add(-2*d), o.Approve || p.Approve, twinAnswer); ok {
				return r, nil
			}
		}
		rw, rewrites := a.(agent.Rewriter)
		ev.Call.Rewrites = rewrites
		v := g.Decide(ctx, &ev.Call)
		if !v.Allowed {
			if as, ok := a.(agent.Asker); ok && v.Ask {
				// A question the client can put to a person: held for
				// one, or asked at its own prompt.
				if r, ok := as.Ask(&ev, v); ok {
					return r, nil
				}
			}
			return a.Deny(agent.Reason(v)), nil
		}
		// A call a person approved is allowed for the user: the
		// client's own prompt would ask a second time.
		approve := o.Approve || p.Approve || v.Approved()
		if v.Args != nil && rewrites {
			// Patched (a default timeout, a command run under veto
			// exec): the client runs veto's input.
			return rw.AllowWith(v.Args, approve), nil
		}
		return a.Allow(approve), nil
	case agent.Permission:
		// The client's prompt is about to ask a person about a call veto
		// asked about: the answer given on veto's page, once there, is
		// the person's, and the call is decided again with it. Anything
		// else is no opinion: the prompt asks the person.
		pm, ok := a.(agent.Permitter)
		if !ok {
			return agent.Reply{}, nil
		}
		id, answered, found, err := g.Question(ctx, &ev.Call)
		if err != nil || !found {
			return agent.Reply{}, nil
		}
		if !answered {
			return agent.Reply{}, errNotYet
		}
		ev.Call.ID = id
		v := g.Decide(ctx, &ev.Call)
		if !v.Allowed {
			return pm.Permit(false, agent.Reason(v)), nil
		}
		return pm.Permit(true, ""), nil
	case agent.Observe:
		if twinRegistered(&ev) > 0 {
			return agent.Reply{}, nil // the client's own registration observes it
		}
		var err error
		if pr, ok := a.(agent.Prompter); ok {
			if client, ok := pr.Prompted(&ev); ok {
				// The client ran a call veto put to its own prompt: where
				// the question waits unanswered, the person said yes there.
				_, err = g.ObserveAnswered(ctx, &ev.Call, ev.Outcome, veto.PromptActor(osUser(), client))
			} else {
				err = g.ObserveCall(ctx, &ev.Call, ev.Outcome)
			}
		} else {
			err = g.ObserveCall(ctx, &ev.Call, ev.Outcome)
		}
		if err != nil {
			return agent.Reply{Exit: 1, Stderr: veto.Because("veto could not record what the call did", err, ".") + "\n"}, nil
		}
	}
	return agent.Reply{}, nil
}

// osUser is the OS user veto runs as, the person at the client's
// terminal: the agent runs as the same user, which is why an answer is
// taken from the client's own report only (agent.Prompter).
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "uid-" + strconv.Itoa(os.Getuid())
}

// BusyTimeout is how long a store waits for another writer's lock when
// an answer is due within timeout: three quarters of it, so that a lock
// held too long is refused as locked before the deadline refuses the call
// as late.
func BusyTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return timeout * 3 / 4
}

// stateRefused is the reason a call is blocked when its state is refused:
// the cause and the state's path, never a driver's message.
func stateRefused(err error) string {
	return "veto cannot use its state: " + causeText(err) + ", so the call is blocked (state_unavailable)."
}

func causeText(err error) string {
	if se := veto.StateErrorOf(err); se != nil {
		return se.Reason()
	}
	return "it cannot be reached"
}

// decidedStore is a store that finds a call's recorded decision.
type decidedStore interface {
	Decided(ctx context.Context, run, callID string) (veto.Event, bool, error)
}

// twinRegistered is the shortest timeout of veto's hooks in ev's client's
// own settings for ev's project or user, 0 when none registers veto
// (agent.Event.Twin). The client's own hook ran just before, within that
// timeout: a decision of the call recorded within twice it is that
// hook's (the two run one after the other).
func twinRegistered(ev *agent.Event) time.Duration {
	if ev.Twin == nil {
		return 0
	}
	return wire.Registered(ev.Twin, ev.Cwd)
}

// The messages of a recorded decision given as the answer: a hook server
// that recorded it and did not answer; a client's own registration.
const (
	lostAnswer = "the hook server refused this call and did not answer in time; this is its recorded decision."
	twinAnswer = "veto's own hook for this client refused this call just before; this is its recorded decision."
)

// recorded is the reply to a call that has a decision recorded in its run
// at since or later, for its tool: that decision's verdict, a refusal
// with msg.
func recorded(ctx context.Context, a agent.Adapter, s veto.Store, c *veto.Call, since time.Time, approve bool, msg string) (agent.Reply, bool) {
	ds, ok := s.(decidedStore)
	if !ok || c.ID == "" || c.Run.Ref == "" {
		return agent.Reply{}, false
	}
	e, ok, err := ds.Decided(ctx, c.Run.Ref, c.ID)
	if err != nil || !ok || e.Time.Before(since) || e.Tool != c.Tool {
		return agent.Reply{}, false
	}
	if e.Kind == veto.EventAllowed && !e.Patched {
		return a.Allow(approve), true
	}
	if e.Kind == veto.EventAllowed {
		// Allowed with input veto rewrote (a command under veto exec),
		// which went with the lost answer: the model's input is not what
		// was allowed.
		return a.Deny("the hook server allowed this call rewritten and did not answer in time, so it is blocked; ask again."), true
	}
	v := veto.Verdict{CallID: e.CallID, Tool: e.Tool, Run: c.Run.Ref, Stage: e.Stage, Rule: e.Rule, Reason: e.Reason,
		ToolDenial: e.ToolDenial, Risk: e.Risk, Target: e.Target,
		Message: msg}
	if v.Reason == "" {
		v.Reason = string(e.ToolDenial)
	}
	return a.Deny(agent.Reason(v)), true
}

// supervisorFor is the command line that runs a command under veto exec
// with this event's state, or nil: on PostgreSQL, whose DSN may hold a
// password and is never written into a command, a command the analyzer
// cannot vouch for is refused as before.
func supervisorFor(o Options) []string {
	if o.Supervisor == nil || o.Postgres != "" {
		return nil
	}
	line := append([]string(nil), o.Supervisor...)
	if o.State != "" {
		line = append(line, "--state", o.State)
	}
	return line
}
