package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/rules/control"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/state"
)

const mcpDescription = `Stand in front of one MCP server and decide every tools/call through veto before the
server sees it. Each call is decided as the tool mcp__NAME__TOOL; a denial is a tool result
with isError and veto's reason, and what each allowed call did is recorded.

  veto mcp --name NAME [flags] -- COMMAND [ARGS...]   the server over stdio
  veto mcp --name NAME --url URL [flags]              the server over streamable HTTP
  veto mcp pins --name NAME [--show]                  the server's tools and their pins
  veto mcp approve --name NAME HASH...                pin the definitions pins --show printed, by
                                                      their hashes (a person, confirmed on the
                                                      terminal; refused when the server's differs)

The agent reaches the gateway over stdio (or streamable HTTP on a loopback address with
--listen). The first time a server is listed, its tools' definitions (name, description,
input schema, annotations) are pinned; a tool that changes later, or appears later, is left
out of the listing and refused (tool_definition_changed, tool_new) until a person reads it
(veto mcp pins --show prints each whole, with its hash) and approves it by that hash: a
definition seen since is not approved. A definition over 64 KiB is never shown cut, never
pinned and never approved. Tool names outside the MCP set (letters, digits, _ - .) are
neither listed nor called. One gateway process is one run (--run, or a new one),
so history rules work across its calls. The policy is the one veto hook reads for the
directory the gateway runs in, and --policy. See docs/mcp.md.`

func runMCP(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "approve", "pins":
			return runMCPPins(ctx, e, args[0], args[1:])
		}
	}
	fs := newFlags(e, "mcp", "--name NAME [flags] (-- COMMAND [ARGS...] | --url URL)", mcpDescription)
	name := fs.String("name", "", "the server's name, as the agent's configuration names it (tools are mcp__NAME__TOOL)")
	url := fs.String("url", "", "the server's streamable HTTP endpoint, instead of a command")
	listen := fs.String("listen", "", "serve the agent over streamable HTTP on this loopback address instead of stdio")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file (default: $XDG_STATE_HOME/veto/veto.db)")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "decide on this PostgreSQL database (a DSN)")
	policyFile := fs.String("policy", "", "a policy file applied after the others")
	run := fs.String("run", "", "the run every call belongs to (default: a new run)")
	actorFlag := fs.String("actor", "agent:mcp", "the actor the calls act as, KIND:ID")
	deadline := fs.Duration("deadline", 2*time.Second, "refuse a call not decided in this time")
	level := fs.String("log-level", "warn", "log to stderr as JSON at this level: off, debug, info, warn, error")
	if code, done := parse(e, fs, args); done {
		return code
	}
	log, err := logger(e.stderr, *level)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp:", err)
		return ExitUsage
	}
	command := fs.Args()
	switch {
	case !mcpgate.ValidServerName(*name):
		fmt.Fprintln(e.stderr, "veto mcp: --name is required (the server's name: printable, at most 64 bytes, without \"__\")")
		return ExitUsage
	case (*url == "") == (len(command) == 0):
		fmt.Fprintln(e.stderr, "veto mcp: give the server as -- COMMAND [ARGS...] or as --url URL, one of them")
		return ExitUsage
	}
	if *listen != "" {
		if ok, err := isLoopback(*listen); err != nil || !ok {
			fmt.Fprintln(e.stderr, "veto mcp: --listen takes a loopback address (host:port): the gateway has no authentication")
			return ExitUsage
		}
	}
	actor, err := server.ParseActor(*actorFlag)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: --actor:", err)
		return ExitUsage
	}
	ref := *run
	if ref == "" {
		var b [8]byte
		rand.Read(b[:])
		ref = "mcp-" + *name + "-" + hex.EncodeToString(b[:])
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: the working directory cannot be read")
		return ExitDeny
	}

	st, err := openServiceState(ctx, *state, *pg, false)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: cannot open the state:", stateCause(err))
		return ExitDeny
	}
	defer st.close()
	pins, err := openPins(ctx, st)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: cannot open the pin tables:", stateCause(err))
		return ExitDeny
	}
	lo := policy.Locate(cwd, "")
	lo.FlagPath = *policyFile
	lo.Compiler = &lazyCEL{}
	// The files are reloaded as they change: while this runs, they are
	// veto's, refused to the agent wherever they lie.
	defer control.Reloading("mcp", policyPaths(lo)...)()
	bo := policy.BuildOptions{Store: st.store, Logger: log}
	// The policy is the shared database's active revision, else the
	// files; a change is taken while the gateway runs (watchPolicy).
	lv, err := live.Start(ctx, live.Source{Files: lo, Revisions: st.revisions(), Logger: log, Acquire: st.acquire,
		Build: func(p *policy.Policy) (*veto.Gate, error) { return p.Gate(bo) }})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: the policy does not load; run: veto validate")
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}

	var upstream mcpgate.Transport
	if *url != "" {
		upstream = &mcpgate.HTTPTransport{URL: *url}
	} else {
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Stderr = e.stderr
		upstream = &mcpgate.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	gw, err := mcpgate.New(ctx, mcpgate.Config{
		Name: *name, Upstream: upstream, Pins: pins, Acquire: st.acquire, Together: st.together, Run: ref, Actor: actor, Cwd: cwd,
		Build:    mcpgate.PolicyBuild(lv.Current().Policy, bo),
		Deadline: *deadline, Logger: log,
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp:", gatewayCause(err))
		return ExitDeny
	}
	go watchPolicy(ctx, lv, gw, bo, log)
	code := ExitAllow
	if *listen == "" {
		err = gw.Serve(ctx, &mcpgate.IOTransport{Reader: e.stdin, Writer: e.stdout})
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(e.stderr, "veto mcp: the agent's session ended:", err)
		}
	} else {
		code = serveMCPHTTP(ctx, e, gw, *listen, log)
	}
	gw.Close()
	if gw.ServerSilent() {
		// The server is connected to by the agent's own initialize, which
		// the gateway relays: a command that is no MCP server shows here.
		fmt.Fprintln(e.stderr, "veto mcp: connecting to the server failed: it ended without answering as an MCP server (its own messages, if any, are above)")
		return ExitDeny
	}
	return code
}

// watchPolicy gives the gateway each policy the live source takes: a
// revision activated or a file edited decides the next call. A change
// that does not load or build is logged, and the last good one decides.
func watchPolicy(ctx context.Context, lv *live.Live, gw *mcpgate.Gateway, bo policy.BuildOptions, log *slog.Logger) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !lv.Check(ctx) {
			continue
		}
		cur := lv.Current()
		if err := gw.Rebuild(ctx, mcpgate.PolicyBuild(cur.Policy, bo)); err != nil {
			log.Error("veto mcp: the new policy's gate cannot be built; deciding with the last good one", "revision", cur.Rev)
		}
	}
}

// gatewayCause says why the gateway did not start: the step, and for the
// state its cause; never what the server or a driver said.
func gatewayCause(err error) string {
	var se *mcpgate.StartError
	if !errors.As(err, &se) {
		return "the gateway did not start"
	}
	if se.State {
		return se.Step + " failed: " + stateCause(se.Err)
	}
	return se.Step + " failed: the server did not answer as an MCP server (its own messages, if any, are above)"
}

func serveMCPHTTP(ctx context.Context, e *env, gw *mcpgate.Gateway, addr string, log *slog.Logger) int {
	h := mcpgate.NewHTTPHandler()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp:", err)
		return ExitDeny
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	served := make(chan struct{})
	go func() {
		// One session: when it ends (the agent deleted it, or the server
		// is gone), so does the gateway.
		gw.Serve(ctx, h)
		close(served)
	}()
	fmt.Fprintf(e.stderr, "veto mcp: listening on http://%s\n", l.Addr())
	select {
	case err := <-done:
		fmt.Fprintln(e.stderr, "veto mcp:", err)
		return ExitDeny
	case <-ctx.Done():
	case <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return ExitAllow
}

// openPins opens the gateway's pin tables in the state's database.
func openPins(ctx context.Context, st *serviceState) (*mcpgate.Pins, error) {
	if st.acquire != nil {
		release, err := st.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return mcpgate.OpenPins(ctx, st.db, state.Markers(st.dialect))
}
