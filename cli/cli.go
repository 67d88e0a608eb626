// Package cli is the veto command: it parses arguments, wires the engine
// to its parts and maps results to exit codes. It holds no rule logic.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/vetohq/veto/clients"
)

// Exit codes of every subcommand.
const (
	ExitAllow = 0 // allowed, or the command succeeded
	ExitDeny  = 1 // denied, or the command found a problem
	ExitUsage = 2 // bad input or bad usage
)

// env is what a command runs with.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"demo", "run a recorded agent session through veto and show every verdict", runDemo},
		{"check", "decide one call read as JSON on stdin", runCheck},
		{"hook", "answer an agent client's hook event (" + strings.Join(clients.Names(), ", ") + ")", runHook},
		{"init", "register veto with an agent client (" + strings.Join(clients.Names(), ", ") + ")", runInit},
		{"uninstall", "remove what init added", runUninstall},
		{"doctor", "check that veto guards the clients it is registered with, and how to fix what is wrong", runDoctor},
		{"serve-hooks", "answer veto-hook from a long-lived process that keeps the state open", runServeHooks},
		{"serve", "decide calls over HTTP/JSON, on SQLite or on PostgreSQL shared by many instances", runServeHTTP},
		{"mcp", "stand in front of an MCP server and decide every tool call it is sent", runMCP},
		{"token", "make, list and revoke the bearer tokens of veto serve", runToken},
		{"approve", "list the calls waiting for a person, or approve or refuse one", runApprove},
		{"ui", "serve the page of decisions, refusals and runs over the local state", runUI},
		{"explain", "explain the decision on one call, rule by rule", runExplain},
		{"policy", "show the effective policy, the default, or the schema", runPolicy},
		{"validate", "compile the policy files and report every problem", runValidate},
		{"test", "run policy test cases", runTest},
		{"log", "list, verify and prune the decision log", runLog},
		{"state", "check that veto's state is sound, naming the cause when not; repair a damaged one", runState},
		{"egress", "add a host to a run's egress allow-list, or list the additions", runEgress},
		{"replay", "re-decide a recorded session under a policy; report what changes", runReplay},
		{"exec", "run a command under the supervisor, which decides each program, file and connection as it happens", runExec},
		{"version", "print veto's version", runVersion},
	}
}

const usage = `veto decides, right before an AI agent's tool call runs, whether that one call may run.

Usage:
  veto <command> [flags]

Commands:
%s
Run 'veto <command> --help' for a command's flags.
`

func printUsage(w io.Writer) {
	var b strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, usage, b.String())
}

// Main runs the veto command with args (without the program name) and
// returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(stdout)
		return ExitAllow
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "veto: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return ExitUsage
}

// newFlags returns a flag set whose --help prints the command's usage to
// stdout and whose errors go to stderr.
func newFlags(e *env, name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet("veto "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: veto %s %s\n\n%s\n", name, synopsis, description)
		if hasFlags(fs) {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) (any bool) {
	fs.VisitAll(func(*flag.Flag) { any = true })
	return any
}

// parse parses flags; done reports that the command should return code.
func parse(e *env, fs *flag.FlagSet, args []string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return ExitAllow, true
		}
		return ExitUsage, true
	}
	return 0, false
}

// parseInterspersed parses args as parse does, with the positional
// arguments allowed among the flags (veto token revoke ID --state FILE,
// the order the help shows): the flag package stops at the first
// positional, so each one is taken and parsing goes on after it. After
// "--" everything is positional.
func parseInterspersed(e *env, fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	for {
		if code, done := parse(e, fs, args); done {
			return nil, code, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), 0, false
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// logger returns a slog logger on stderr at the named level, or an error
// naming the problem.
func logger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	switch level {
	case "off", "":
		return slog.New(slog.DiscardHandler), nil
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, fmt.Errorf("--log-level %q: want off, debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func runVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version", "", "Print veto's version and the Go version it was built with.")
	if code, done := parse(e, fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "veto version: takes no arguments")
		return ExitUsage
	}
	fmt.Fprintf(e.stdout, "veto %s %s %s/%s\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return ExitAllow
}

// Version is veto's version: the module version it was built as, or
// "devel" for a build from a work tree.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
