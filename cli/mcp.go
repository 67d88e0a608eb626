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
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/state"
)

const mcpDescription = `Stand in front of one MCP server and decide every tools/call through veto before the
server sees it. Each call is decided as the tool mcp__NAME__TOOL; a denial is a tool result
with isError and veto's reason, and what each allowed call did is recorded.

  veto mcp --name NAME [flags] -- COMMAND [ARGS...]   the server over stdio
  veto mcp --name NAME --url URL [flags]              the server over streamable HTTP
  veto mcp pins --name NAME [--show]                  the server's tools and their pins
  veto mcp approve --name NAME [TOOL...]              pin the definitions last seen (a person,
                                                      confirmed on the terminal)

The agent reaches the gateway over stdio (or streamable HTTP on a loopback address with
--listen). The first time a server is listed, its tools' definitions (name, description,
input schema, annotations) are pinned; a tool that changes later, or appears later, is left
out of the listing and refused (tool_definition_changed, tool_new) until a person reads it
(veto mcp pins --show) and approves it. One gateway process is one run (--run, or a new one),
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
	case *name == "" || strings.Contains(*name, "__"):
		fmt.Fprintln(e.stderr, "veto mcp: --name is required (the server's name, without \"__\")")
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
	p, err := policy.Load(lo)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp: the policy does not load; run: veto validate")
		fmt.Fprintln(e.stderr, err)
		return ExitDeny
	}

	var upstream mcp.Transport
	if *url != "" {
		upstream = &mcp.StreamableClientTransport{Endpoint: *url, MaxRetries: -1}
	} else {
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Stderr = e.stderr
		upstream = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	ctx, quit := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer quit()
	gw, err := mcpgate.New(ctx, mcpgate.Config{
		Name: *name, Upstream: upstream, Pins: pins, Acquire: st.acquire, Run: ref, Actor: actor, Cwd: cwd,
		Build:    mcpgate.PolicyBuild(p, policy.BuildOptions{Store: st.store, Logger: log}),
		Deadline: *deadline, Logger: log,
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp:", gatewayCause(err))
		return ExitDeny
	}
	defer gw.Close()
	if *listen == "" {
		err = gw.Serve(ctx, &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}})
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(e.stderr, "veto mcp: the agent's session ended:", err)
		}
		return ExitAllow
	}
	return serveMCPHTTP(ctx, e, gw, *listen, log)
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
	// The SDK's own log may quote messages, arguments among them: off.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gw.Server() }, &mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp:", err)
		return ExitDeny
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go gw.KeepSynced(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Fprintf(e.stderr, "veto mcp: listening on http://%s\n", l.Addr())
	select {
	case err := <-done:
		fmt.Fprintln(e.stderr, "veto mcp:", err)
		return ExitDeny
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return ExitAllow
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

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

func runMCPPins(ctx context.Context, e *env, sub string, args []string) int {
	synopsis := "pins --name NAME [--show]"
	if sub == "approve" {
		synopsis = "approve --name NAME [TOOL...]"
	}
	fs := newFlags(e, "mcp "+sub, synopsis, mcpDescription)
	name := fs.String("name", "", "the server's name")
	show := fs.Bool("show", false, "pins: print the definition last seen of each tool awaiting approval")
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "a PostgreSQL database instead (a DSN)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if *name == "" {
		fmt.Fprintf(e.stderr, "veto mcp %s: --name is required\n", sub)
		return ExitUsage
	}
	if sub == "pins" && fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "veto mcp pins: takes no arguments")
		return ExitUsage
	}
	st, err := openServiceState(ctx, *state, *pg, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto mcp %s: cannot open the state: %s\n", sub, stateCause(err))
		return ExitDeny
	}
	defer st.close()
	pins, err := openPins(ctx, st)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto mcp %s: cannot open the pin tables: %s\n", sub, stateCause(err))
		return ExitDeny
	}
	if st.acquire != nil {
		release, err := st.acquire(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "veto mcp %s: cannot use the state: %s\n", sub, stateCause(err))
			return ExitDeny
		}
		defer release()
	}
	if sub == "approve" {
		done, code, failed := approvePins(ctx, e, pins, *name, fs.Args())
		if failed {
			return code
		}
		for _, t := range done {
			fmt.Fprintf(e.stdout, "approved %s\n", mcpgate.ToolName(*name, t))
		}
		if len(done) == 0 {
			fmt.Fprintf(e.stderr, "veto mcp approve: no tool of %s awaits approval", *name)
			if fs.NArg() > 0 {
				fmt.Fprint(e.stderr, " among those named")
			}
			fmt.Fprintln(e.stderr)
			return ExitDeny
		}
		return ExitAllow
	}
	list, err := pins.List(ctx, *name)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp pins: the pins could not be read")
		return ExitDeny
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSTATUS\tSEEN\tCHANGED")
	for _, pin := range list {
		status := "pinned"
		switch {
		case pin.Pinned == "":
			status = "new: awaits approval"
		case pin.Awaiting():
			status = "changed: awaits approval"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", pin.Tool, status, short(pin.Seen), pin.Changed.UTC().Format(time.RFC3339))
	}
	tw.Flush()
	if *show {
		for _, pin := range list {
			if pin.Awaiting() {
				fmt.Fprintf(e.stdout, "\n%s (%s), as last seen:\n%s\n", pin.Tool, short(pin.Seen), pin.Definition)
			}
		}
	}
	return ExitAllow
}

func short(hash string) string {
	h := strings.TrimPrefix(hash, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// approvePins pins the definitions last seen of the server's tools that
// await approval (those named, or all), once a person confirmed them on
// the terminal (presence): each binds to the definition shown, so one
// seen since stays refused. None awaiting is no prompt and no tool done.
func approvePins(ctx context.Context, e *env, pins *mcpgate.Pins, server string, names []string) (done []string, code int, failed bool) {
	list, err := pins.List(ctx, server)
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp approve: the pins could not be read")
		return nil, ExitDeny, true
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var shown []mcpgate.Pin
	var details [][2]string
	for _, pin := range list {
		if !pin.Awaiting() || (len(want) > 0 && !want[pin.Tool]) {
			continue
		}
		shown = append(shown, pin)
		status := "changed"
		if pin.Pinned == "" {
			status = "new"
		}
		details = append(details, [2]string{mcpgate.ToolName(server, pin.Tool), status + ", definition " + short(pin.Seen) + " (veto mcp pins --show)"})
	}
	if len(shown) == 0 {
		return nil, 0, false
	}
	t, err := presence.Prove(ctx, presence.Question{Command: "veto mcp approve",
		Action:  fmt.Sprintf("PIN the definitions last seen of %d tool(s) of the MCP server %s: the gateway lets them be called", len(shown), server),
		Details: details, Confirm: true})
	if err != nil {
		fmt.Fprintln(e.stderr, "veto mcp approve:", err)
		return nil, ExitDeny, true
	}
	defer t.Close()
	for _, pin := range shown {
		ok, err := pins.ApproveSeen(ctx, server, pin.Tool, pin.Seen, time.Now())
		if err != nil {
			fmt.Fprintln(e.stderr, "veto mcp approve: the pins could not be written")
			return done, ExitDeny, true
		}
		if ok {
			done = append(done, pin.Tool)
			fmt.Fprintf(t, "\r\napproved %s", mcpgate.ToolName(server, pin.Tool))
		} else {
			fmt.Fprintf(e.stderr, "veto mcp approve: %s changed again while you answered; it still awaits approval\n", mcpgate.ToolName(server, pin.Tool))
		}
	}
	fmt.Fprint(t, "\r\n")
	return done, 0, false
}
