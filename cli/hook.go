package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/claudecode"
	"github.com/vetohq/veto/codex"
	"github.com/vetohq/veto/copilotcli"
	"github.com/vetohq/veto/cursor"
	"github.com/vetohq/veto/geminicli"
	"github.com/vetohq/veto/policy"
)

// clients are the agent clients veto speaks to, by the name commands take.
var clients = []string{"claude-code", "gemini-cli", "copilot-cli", "cursor", "codex"}

func adapterFor(name string) agent.Adapter {
	switch name {
	case "claude-code":
		return claudecode.Adapter{ProjectDir: os.Getenv("CLAUDE_PROJECT_DIR")}
	case "gemini-cli":
		return geminicli.Adapter{}
	case "copilot-cli":
		return copilotcli.Adapter{}
	case "cursor":
		return cursor.Adapter{}
	case "codex":
		return codex.Adapter{}
	}
	return nil
}

const hookDescription = `Answer one hook event of an agent client, read on stdin, in the client's protocol.

  veto hook claude-code    SessionStart, PreToolUse, PostToolUse, PostToolUseFailure
  veto hook gemini-cli     SessionStart, BeforeTool, AfterTool
  veto hook copilot-cli    sessionStart, preToolUse, postToolUse
  veto hook cursor         beforeShellExecution, beforeReadFile, beforeMCPExecution, preToolUse, afterFileEdit
  veto hook codex          SessionStart, PreToolUse, PostToolUse (Claude-shaped)

veto fails closed: an unreadable event, a policy that does not load, a state that cannot
be opened, a panic or its own deadline all block the call, in the form the client obeys.
Decisions and what calls did are recorded in the SQLite state ($XDG_STATE_HOME/veto/veto.db,
or --state FILE, or $VETO_STATE).`

func runHook(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "hook", strings.Join(clients, "|")+" [--state FILE] [--timeout 2s]", hookDescription)
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	timeout := fs.Duration("timeout", 2*time.Second, "refuse the call when no answer is ready in this time")
	approve := fs.Bool("approve", false, "answer allow for the user (skips the client's own permission prompt)")
	if len(args) == 0 || !slices.Contains(clients, args[0]) {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if code, done := parse(e, fs, args); done {
				return code
			}
		}
		fmt.Fprintln(e.stderr, "veto hook: want a client: "+strings.Join(clients, ", "))
		return ExitUsage
	}
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	reply := hookReply(ctx, adapterFor(args[0]), e.stdin, *state, *timeout, *approve)
	io.WriteString(e.stdout, reply.Stdout)
	io.WriteString(e.stderr, reply.Stderr)
	return reply.Exit
}

// hookReply runs the hook under a deadline; whatever goes wrong, a tool
// call is blocked.
func hookReply(ctx context.Context, a agent.Adapter, stdin io.Reader, state string, timeout time.Duration, approve bool) agent.Reply {
	b, err := io.ReadAll(io.LimitReader(stdin, agent.MaxEvent+1))
	if err != nil || len(b) > agent.MaxEvent {
		return a.Deny("veto could not read the hook event, so the call is blocked.")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan agent.Reply, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- a.Deny("veto failed while deciding, so the call is blocked.")
			}
		}()
		done <- handleHook(ctx, a, b, state, approve)
	}()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		return a.Deny(fmt.Sprintf("veto did not decide within %s, so the call is blocked.", timeout))
	}
}

func handleHook(ctx context.Context, a agent.Adapter, b []byte, state string, approve bool) agent.Reply {
	ev, err := a.Decode(b)
	if err != nil {
		return a.Deny("veto could not read the hook event (" + err.Error() + "), so the call is blocked.")
	}
	if ev.Kind == agent.Ignore {
		return agent.Reply{}
	}
	// failed answers a broken setup: a tool call is blocked; for the other
	// events the failure is reported without blocking (the tool already ran).
	failed := func(msg string) agent.Reply {
		if ev.Kind == agent.Decide {
			return a.Deny(msg)
		}
		return agent.Reply{Exit: 1, Stderr: msg + "\n"}
	}
	p, err := loadPolicy(ev.Cwd, ev.ProjectDir, "")
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
	switch ev.Kind {
	case agent.Start:
		if err := g.Start(ctx, veto.Run{Ref: ev.Session, Fresh: ev.Fresh}); err != nil {
			return agent.Reply{Exit: 1, Stderr: "veto could not record the session's start.\n"}
		}
		return agent.Reply{}
	case agent.Decide:
		v := g.Decide(ctx, &ev.Call)
		if !v.Allowed {
			return a.Deny(claudecode.Reason(v))
		}
		return a.Allow(approve || p.Approve)
	case agent.Observe:
		if err := g.ObserveCall(ctx, &ev.Call, ev.Outcome); err != nil {
			return agent.Reply{Exit: 1, Stderr: "veto could not record what the call did.\n"}
		}
	}
	return agent.Reply{}
}
