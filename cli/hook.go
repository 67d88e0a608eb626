package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/policy"
)

const hookDescription = `Answer one hook event of an agent client, read on stdin, in the client's protocol.

  veto hook claude-code    SessionStart, PreToolUse, PostToolUse, PostToolUseFailure

veto fails closed: an unreadable event, a policy that does not load, a state that cannot
be opened, a panic or its own deadline all block the call, in the form the client obeys.
Decisions and what calls did are recorded in the SQLite state ($XDG_STATE_HOME/veto/veto.db,
or --state FILE, or $VETO_STATE).`

func runHook(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "hook", "claude-code [--state FILE] [--timeout 2s]", hookDescription)
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	timeout := fs.Duration("timeout", 2*time.Second, "refuse the call when no answer is ready in this time")
	approve := fs.Bool("approve", false, "answer allow for the user (skips the client's own permission prompt)")
	if len(args) == 0 || args[0] != "claude-code" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			parse(e, fs, args)
			return ExitAllow
		}
		fmt.Fprintln(e.stderr, "veto hook: want a client: claude-code")
		return ExitUsage
	}
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	reply := hookReply(ctx, e.stdin, *state, *timeout, *approve)
	io.WriteString(e.stdout, reply.Stdout)
	io.WriteString(e.stderr, reply.Stderr)
	return reply.Exit
}

// hookReply runs the hook under a deadline; whatever goes wrong, a tool
// call is blocked.
func hookReply(ctx context.Context, stdin io.Reader, state string, timeout time.Duration, approve bool) claudecode.Reply {
	b, err := io.ReadAll(io.LimitReader(stdin, claudecode.MaxEvent+1))
	if err != nil || len(b) > claudecode.MaxEvent {
		return claudecode.Deny("veto could not read the hook event, so the call is blocked.")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan claudecode.Reply, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- claudecode.Deny("veto failed while deciding, so the call is blocked.")
			}
		}()
		done <- handleClaude(ctx, b, state, approve)
	}()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		return claudecode.Deny(fmt.Sprintf("veto did not decide within %s, so the call is blocked.", timeout))
	}
}

func handleClaude(ctx context.Context, b []byte, state string, approve bool) claudecode.Reply {
	ev, err := claudecode.Decode(b)
	if err != nil {
		return claudecode.Deny("veto could not read the hook event (" + err.Error() + "), so the call is blocked.")
	}
	post := ev.HookEventName == claudecode.PostToolUse || ev.HookEventName == claudecode.PostToolUseFailure
	// failed answers a broken setup: a tool call is blocked; for the other
	// events the failure is reported without exit 2 (the tool already ran).
	failed := func(msg string) claudecode.Reply {
		if ev.HookEventName == claudecode.PreToolUse {
			return claudecode.Deny(msg)
		}
		return claudecode.Reply{Exit: 1, Stderr: msg + "\n"}
	}
	projectDir := os.Getenv("CLAUDE_PROJECT_DIR")
	p, err := loadPolicy(ev.Cwd, projectDir, "")
	if err != nil {
		var ps policy.Problems
		if errors.As(err, &ps) && len(ps) > 0 {
			return failed(fmt.Sprintf("veto's policy does not load (%s), so the call is blocked until it is fixed; run: veto validate", ps[0]))
		}
		return failed("veto's policy does not load, so the call is blocked; run: veto validate")
	}
	s, _, err := openStore(ctx, state, "")
	if err != nil {
		return failed("veto cannot open its state, so the call is blocked (state_unavailable).")
	}
	defer s.Close()
	g, err := p.Gate(policy.BuildOptions{Store: s})
	if err != nil {
		return failed("veto could not build its rules, so the call is blocked.")
	}
	switch ev.HookEventName {
	case claudecode.SessionStart:
		fresh := ev.Source == "startup" || ev.Source == "clear" || ev.Source == ""
		if err := g.Start(ctx, veto.Run{Ref: ev.SessionID, Fresh: fresh}); err != nil {
			return claudecode.Reply{Exit: 1, Stderr: "veto could not record the session's start.\n"}
		}
		return claudecode.Reply{}
	case claudecode.PreToolUse:
		c, err := ev.Call(projectDir)
		if err != nil {
			return claudecode.Deny("veto could not read the tool call (" + err.Error() + "), so it is blocked.")
		}
		v := g.Decide(ctx, &c)
		if !v.Allowed {
			return claudecode.Deny(claudecode.Reason(v))
		}
		return claudecode.Allow(approve)
	}
	if post {
		c, err := ev.Call(projectDir)
		if err != nil {
			return claudecode.Reply{Exit: 1, Stderr: "veto could not read the tool result.\n"}
		}
		outcome := veto.Succeeded
		if ev.HookEventName == claudecode.PostToolUseFailure {
			outcome = veto.Failed
			if ev.IsInterrupt {
				outcome = veto.Cancelled
			}
		}
		if err := g.ObserveCall(ctx, &c, outcome); err != nil {
			return claudecode.Reply{Exit: 1, Stderr: "veto could not record what the call did.\n"}
		}
	}
	return claudecode.Reply{}
}
