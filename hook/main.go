package hook

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto/agent"
)

// Main is veto-hook: the lean hook program. It answers like veto hook
// CLIENT, without CEL and PostgreSQL linked, so it starts in less time;
// an event whose policy has CEL rules is handed, as read, to veto hook
// CLIENT ($VETO_FULL, else the veto binary next to this one, else veto on
// PATH). If veto cannot be run, the call is blocked.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("veto-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", os.Getenv("VETO_STATE"), "the SQLite state file")
	timeout := fs.Duration("timeout", 2*time.Second, "refuse the call when no answer is ready in this time")
	approve := fs.Bool("approve", false, "answer allow for the user (skips the client's own permission prompt)")
	if len(args) == 0 || !slices.Contains(Clients, args[0]) {
		fmt.Fprintln(stderr, "veto-hook: want a client: "+strings.Join(Clients, ", "))
		return 64
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 64
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "veto-hook: unexpected argument %q\n", fs.Arg(0))
		return 64
	}
	a := AdapterFor(args[0])
	o := Options{State: *state, Timeout: *timeout, Approve: *approve}
	in, err := io.ReadAll(io.LimitReader(stdin, agent.MaxEvent+1))
	if err != nil || len(in) > agent.MaxEvent {
		r := a.Deny("veto could not read the hook event, so the call is blocked.")
		io.WriteString(stdout, r.Stdout)
		io.WriteString(stderr, r.Stderr)
		return r.Exit
	}
	// A hook server, when one runs under the same environment, answers
	// with its state already open; otherwise this process answers.
	if sock := SocketPath(); os.Getenv("VETO_NO_SERVER") == "" {
		if _, err := os.Stat(sock); err == nil {
			if r, ok := ask(sock, args[0], in, o, *timeout); ok {
				io.WriteString(stdout, r.Stdout)
				io.WriteString(stderr, r.Stderr)
				return r.Exit
			}
		}
	}
	r, b, err := Reply(context.Background(), a, bytes.NewReader(in), o)
	if errors.Is(err, ErrNeedsCEL) {
		if code, ok := handOn(append([]string{"hook"}, args...), b, stdout, stderr); ok {
			return code
		}
	}
	io.WriteString(stdout, r.Stdout)
	io.WriteString(stderr, r.Stderr)
	return r.Exit
}

// handOn runs veto with args on the event bytes; ok is false when veto
// cannot be started.
func handOn(args []string, event []byte, stdout, stderr io.Writer) (int, bool) {
	full := os.Getenv("VETO_FULL")
	if full != "" && !isExec(full) {
		return 0, false
	}
	if self, err := os.Executable(); err == nil && full == "" {
		if p := filepath.Join(filepath.Dir(self), "veto"); isExec(p) {
			full = p
		}
	}
	if full == "" {
		p, err := exec.LookPath("veto")
		if err != nil {
			return 0, false
		}
		full = p
	}
	cmd := exec.Command(full, args...)
	cmd.Stdin = bytes.NewReader(event)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), true
	}
	return 0, false
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
