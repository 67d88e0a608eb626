package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/hook"
)

// clients are the agent clients veto speaks to, by the name commands take.
var clients = hook.Clients

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
	reply := hookReply(ctx, hook.AdapterFor(args[0]), e.stdin, *state, *timeout, *approve)
	io.WriteString(e.stdout, reply.Stdout)
	io.WriteString(e.stderr, reply.Stderr)
	return reply.Exit
}

// hookReply answers one hook event with veto's full program: CEL rules
// compile here. Whatever goes wrong, a tool call is blocked.
func hookReply(ctx context.Context, a agent.Adapter, stdin io.Reader, state string, timeout time.Duration, approve bool) agent.Reply {
	r, _ := hook.Reply(ctx, a, stdin, hook.Options{State: state, Timeout: timeout, Approve: approve, Compiler: &lazyCEL{}})
	return r
}
