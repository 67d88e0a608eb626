package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/shell"
	"github.com/vetohq/veto/state"
	"github.com/vetohq/veto/supervise"
	"github.com/vetohq/veto/tools"
)

const execDescription = `Run COMMAND under veto's supervisor, which decides, as events of the run, what the
command does while it runs: every program it starts (the command rules, on the program
and its argv as one simple command), every file it opens for writing, creates, moves or
removes, every read of a file that may hold credentials (the file rules, on the path as
the kernel resolves it), and every connection it makes (egress). A refused one fails with
EPERM, and a line on stderr names the rule and the reason. Under the decisions, Landlock
keeps writes in the write roots and reads out of the credential directories.

veto rewrites a shell call the analyzer cannot vouch for to run under veto exec, where the
client runs a rewritten call (shell.exec in the policy; see docs/exec.md). An agent may run
it too: its command is analysed as any wrapper's, and the supervisor only adds to that.

Linux only: seccomp user notification (5.5 and later) and Landlock. Exit status: the
command's (128+N when a signal N ended it); 126 when veto cannot supervise it, and it
does not run; 2 for bad usage.`

// ExitCannotRun is veto exec's exit status when the command is not run.
const ExitCannotRun = 126

func runExec(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "exec", "[--run RUN] [--state FILE] -- COMMAND [ARG...]", execDescription)
	run := fs.String("run", "", "the run whose events these decisions are (default: a new run of its own)")
	stateFile := fs.String("state", "", "the SQLite state file (default: veto's; VETO_POSTGRES names a PostgreSQL database instead)")
	if code, done := parse(e, fs, args); done {
		return code
	}
	argv := fs.Args()
	if len(argv) == 0 {
		fmt.Fprintln(e.stderr, "veto exec: give the command to run, after --")
		return ExitUsage
	}
	if *run != "" && !veto.ValidName(*run) {
		fmt.Fprintln(e.stderr, "veto exec: --run holds a character a run's name may not have")
		return ExitUsage
	}
	refuse := func(why string) int {
		fmt.Fprintf(e.stderr, "veto exec: %s, so the command does not run.\n", why)
		return ExitCannotRun
	}
	if f := supervise.Probe(); !f.UserNotif {
		return refuse("this system cannot supervise a command (" + f.Why + ")")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return refuse("the working directory cannot be read")
	}
	p, err := loadPolicy(cwd, "", "")
	if err != nil {
		var ps policy.Problems
		if errors.As(err, &ps) && len(ps) > 0 {
			return refuse(fmt.Sprintf("veto's policy does not load (%s)", ps[0]))
		}
		return refuse("veto's policy does not load")
	}
	name, err := state.Name{Path: *stateFile, DSN: os.Getenv("VETO_POSTGRES")}.Resolve()
	if err != nil {
		return refuse("veto cannot use its state: " + state.Cause(err))
	}
	s, done, err := state.Once(ctx, name, 5*time.Second)
	if err != nil {
		return refuse("veto cannot use its state: " + state.Cause(err))
	}
	defer done()
	sup := &rule.Supervision{}
	g, err := p.Gate(policy.BuildOptions{Store: s, Supervising: true, Supervision: sup})
	if err != nil || sup.ReadMatters == nil || sup.Floor == nil {
		return refuse("veto could not build its rules")
	}
	ref := *run
	if ref == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		ref = "exec-" + hex.EncodeToString(b[:])
		if err := g.Start(ctx, veto.Run{Ref: ref, Fresh: true}); err != nil {
			return refuse(veto.Because("veto could not record the run's start", err, ""))
		}
	}
	roots, deny, err := sup.Floor(cwd)
	if err != nil {
		return refuse("veto cannot place the command's write roots")
	}
	d := &decider{ctx: ctx, g: g, run: ref, readMatters: sup.ReadMatters, stderr: e.stderr, allowed: map[string]bool{},
		read: map[string]bool{}, last: map[int]string{}}
	cfg := supervise.Config{Argv: argv, Dir: cwd, Decide: d.decide, Landlock: &supervise.Floor{WriteRoots: roots, DenyRead: deny},
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr}
	code, err := supervise.Run(ctx, cfg)
	if err != nil {
		return refuse(err.Error())
	}
	return code
}

// decider decides the supervised command's requests as calls of veto
// exec's tools (package tools), one at a time, in the run.
type decider struct {
	ctx         context.Context
	g           *veto.Gate
	run         string
	readMatters func(string) bool
	stderr      io.Writer

	mu      sync.Mutex
	allowed map[string]bool // programs, reads and writes allowed: the same one is not decided again
	read    map[string]bool // whether a read of each path matters (readMatters)
	last    map[int]string  // the last refusal line written for each process
	n       int
}

// matters is readMatters, remembered: every program the command starts
// opens the same libraries and data files.
func (d *decider) matters(path string) bool {
	d.mu.Lock()
	m, ok := d.read[path]
	d.mu.Unlock()
	if ok {
		return m
	}
	m = d.readMatters(path)
	d.mu.Lock()
	if len(d.read) < maxAllowed {
		d.read[path] = m
	}
	d.mu.Unlock()
	return m
}

// maxAllowed bounds the remembered allows.
const maxAllowed = 1 << 16

func (d *decider) decide(r supervise.Request) supervise.Verdict {
	tool, args, what := "", map[string]any{}, ""
	memo := ""
	switch r.Kind {
	case supervise.Exec:
		if strings.HasPrefix(r.Path, "/memfd:") || strings.HasSuffix(r.Path, " (deleted)") {
			// A program with no file on disk (memfd_create, a file removed
			// after it was opened): nothing the rules read names it.
			return d.refuse(tools.ExecRun, "running a program", "program_unseen",
				"The program has no file on disk (an anonymous or deleted file), so veto cannot vouch for it.")
		}
		// The program as the kernel found it, with the arguments it was given.
		argv := []string{r.Path}
		if len(r.Argv) > 1 {
			argv = append(argv, r.Argv[1:]...)
		}
		tool, what = tools.ExecRun, "running a program"
		args["command"] = shell.ArgvLine(argv)
		// The same program with the same argv in the same directory is
		// judged the same: the command rules read only these (what it
		// then reaches is decided when it does).
		memo = tool + "\x00" + cwdOf(r.Pid) + "\x00" + args["command"].(string)
	case supervise.Open:
		if r.Write && device(r.Path) {
			// The devices a shell writes to (/dev/null, a terminal):
			// writable under the Landlock floor too.
			return supervise.Verdict{Allow: true}
		}
		if strings.HasPrefix(r.Path, "/proc/") && strings.HasSuffix(r.Path, "/mem") {
			return d.refuse(tools.ExecRead, "reading a process's memory", "process_memory",
				"The command reads a process's memory, which holds its secrets.")
		}
		if !r.Write && procSecret(r.Path) {
			// A process's environment (/proc/N/environ): judged as the
			// command that reads it, an environment dump.
			tool, what = tools.ExecRun, "reading a process's environment"
			args["command"] = shell.ArgvLine([]string{"cat", r.Path})
			break
		}
		if !r.Write {
			if !d.matters(r.Path) {
				return supervise.Verdict{Allow: true}
			}
			tool, what = tools.ExecRead, "reading a file"
		} else {
			tool, what = tools.ExecWrite, "writing a file"
		}
		args["path"] = r.Path
		memo = tool + "\x00" + r.Path
	case supervise.Unlink, supervise.Mkdir, supervise.Symlink:
		tool, what = tools.ExecWrite, "changing a file"
		args["path"] = r.Path
		memo = tool + "\x00" + r.Path
	case supervise.Rename:
		tool, what = tools.ExecMove, "moving a file"
		args["from"], args["to"] = r.Path, r.Path2
	case supervise.Link:
		// A hard link is a second name for the file: judged as a read of
		// it (a credential linked elsewhere) and a write of the new name.
		tool, what = tools.ExecMove, "linking a file"
		args["from"], args["to"] = r.Path, r.Path2
	case supervise.Connect:
		tool, what = tools.ExecConnect, "connecting"
		switch {
		case r.Addr.IsValid():
			args["url"] = "tcp://" + r.Addr.String()
		case r.Path != "":
			args["url"] = "unix:" + r.Path
		default:
			// Another family (netlink, packet, …): allowed as the kernel
			// and Landlock allow it; veto judges addresses.
			return supervise.Verdict{Allow: true}
		}
	default:
		return supervise.Verdict{Rule: "veto.exec", Reason: "unknown_request"}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if memo != "" && d.allowed[memo] {
		return supervise.Verdict{Allow: true}
	}
	d.n++
	cwd := cwdOf(r.Pid)
	c := &veto.Call{ID: fmt.Sprintf("%s-%d-%d", d.run, os.Getpid(), d.n), Tool: tool, Args: args, Cwd: cwd,
		Actor: veto.Actor{Kind: "agent", ID: "veto-exec"}, Run: veto.Run{Ref: d.run}}
	v := d.g.Decide(d.ctx, c)
	if v.Allowed {
		if memo != "" && len(d.allowed) < maxAllowed {
			d.allowed[memo] = true
		}
		return supervise.Verdict{Allow: true}
	}
	rl, reason := v.Rule, v.Reason
	if rl == "" {
		rl = string(v.Stage)
	}
	d.say(r.Pid, fmt.Sprintf("veto: refused %s (%s, %s): %s\n", what, rl, reason, v.Message))
	return supervise.Verdict{Rule: rl, Reason: reason}
}

var (
	probeOnce    sync.Once
	canSupervise bool
)

// supervisorLine is how a hook answered by this process runs a command
// under veto exec: this veto binary's exec, or nil where it cannot (the
// kernel lacks what supervision needs, or this program is not veto).
func supervisorLine() []string {
	probeOnce.Do(func() { canSupervise = supervise.Probe().UserNotif })
	if !canSupervise {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil || filepath.Base(exe) != "veto" {
		return nil
	}
	return []string{exe, "exec"}
}

// procSecret reports whether path is a process's environment.
func procSecret(path string) bool {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return false
	}
	_, file, ok := strings.Cut(rest, "/")
	return ok && file == "environ"
}

// refuse refuses a request no rule can judge, with a line on stderr as
// every refusal has.
func (d *decider) refuse(tool, what, reason, msg string) supervise.Verdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.say(0, fmt.Sprintf("veto: refused %s (%s, %s): %s\n", what, "veto.exec", reason, msg))
	return supervise.Verdict{Rule: "veto.exec", Reason: reason}
}

// say writes a refusal's line to the command's stderr, once for a process
// that meets the same refusal again at once (a shell trying each PATH
// directory in turn). d.mu is held.
func (d *decider) say(pid int, line string) {
	if pid != 0 && d.last[pid] == line {
		return
	}
	if len(d.last) > 1024 {
		clear(d.last)
	}
	d.last[pid] = line
	io.WriteString(d.stderr, line)
}

// cwdOf is a process's working directory, as the kernel has it.
func cwdOf(pid int) string {
	cwd, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	return cwd
}

// device reports whether path is one of the devices every program may
// write (supervise.DeviceWrites, a terminal below /dev/pts).
func device(path string) bool {
	for _, d := range supervise.DeviceWrites {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
