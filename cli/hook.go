package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/vetohq/veto/adapters" // every client's adapter, registered with agent
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/presence"
)

// hookDescription is hook's help, from the client table.
func hookDescription() string {
	var lines strings.Builder
	for _, c := range clients.All {
		fmt.Fprintf(&lines, "  veto hook %-14s %s\n", c.Name, strings.Join(c.EventNames(false), ", "))
	}
	return `Answer one hook event of an agent client, read on stdin, in the client's protocol.

` + lines.String() + `
veto fails closed: an unreadable event, a policy that does not load, a state that cannot
be opened, a panic or its own deadline all block the call, in the form the client obeys.
Decisions and what calls did are recorded in the SQLite state ($XDG_STATE_HOME/veto/veto.db,
or --state FILE, or $VETO_STATE), or in a PostgreSQL database shared by many vetos
(--postgres DSN, or $VETO_POSTGRES). With --url (or $VETO_URL) the event goes to veto serve
instead, authenticated by the token in --token-file FILE (veto init CLIENT --url registers it so),
else in $VETO_TOKEN.`
}

func runHook(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "hook", strings.Join(hook.Clients, "|")+" [--state FILE] [--timeout 2s]", hookDescription())
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "decide on this PostgreSQL database (a DSN) instead of the SQLite state")
	timeout := fs.Duration("timeout", 2*time.Second, "refuse the call when no answer is ready in this time")
	approve := fs.Bool("approve", false, "answer allow for the user (skips the client's own permission prompt)")
	askedAt := fs.Int64("asked-at", 0, "veto-hook's: when it sent this event to a hook server that did not answer (Unix ns)")
	tokenFile := fs.String("token-file", "", "with --url: read the token from this file (0600) instead of $"+TokenEnv)
	serveURL := fs.String("url", os.Getenv("VETO_URL"), "forward the event to veto serve at this URL (its token in $"+TokenEnv+") instead of deciding here")
	if len(args) == 0 || !slices.Contains(hook.Clients, args[0]) {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if code, done := parse(e, fs, args); done {
				return code
			}
		}
		fmt.Fprintln(e.stderr, "veto hook: want a client: "+strings.Join(hook.Clients, ", "))
		return ExitUsage
	}
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	// The client that runs this hook is a guarded one: a person's answer
	// never comes from under it (presence).
	presence.Note(os.Getpid(), args[0])
	if *serveURL != "" {
		reply := forwardHook(ctx, hook.AdapterFor(args[0]), args[0], *serveURL, *tokenFile, e.stdin, *timeout)
		io.WriteString(e.stdout, reply.Stdout)
		io.WriteString(e.stderr, reply.Stderr)
		return reply.Exit
	}
	var asked time.Time
	if *askedAt > 0 {
		asked = time.Unix(0, *askedAt)
	}
	reply := hookReply(ctx, hook.AdapterFor(args[0]), e.stdin, hook.Options{State: *state, Postgres: *pg, Timeout: *timeout,
		Approve: *approve, AskedAt: asked, Supervisor: supervisorLine()})
	io.WriteString(e.stdout, reply.Stdout)
	io.WriteString(e.stderr, reply.Stderr)
	return reply.Exit
}

// hookReply answers one hook event with veto's full program: CEL rules
// compile here. Whatever goes wrong, a tool call is blocked.
func hookReply(ctx context.Context, a agent.Adapter, stdin io.Reader, o hook.Options) agent.Reply {
	o.Compiler = &lazyCEL{}
	r, _ := hook.Reply(ctx, a, stdin, o)
	return r
}
