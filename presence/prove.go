package presence

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Question is what a person is asked to confirm, and by which command.
type Question struct {
	// Command is the command that asks ("veto approve"): the prompt says
	// it appeared because that command was run on this terminal.
	Command string
	// Action says what the answer does, in a line ("approve call c1 of
	// run r1, once, within 10m").
	Action string
	// Details are what the question's event holds (tool, rule, reason,
	// when it was asked), as label and value; values are shown with
	// control characters replaced, so that a name cannot redraw the
	// prompt.
	Details [][2]string
	// Confirm asks for the typed code. Without it Prove only checks that
	// the terminal is a person's (veto ui, which then writes its key
	// there).
	Confirm bool
}

// Refusal is Prove's error: why no person's answer was taken. Reason is
// a stable code; the message says what to do.
type Refusal struct {
	Reason  string // guarded_caller, agent_terminal, no_terminal, namespace, registry, not_confirmed, unsupported, failed
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Terminal is the person's controlling terminal, proved: what a command
// writes on it only the person sees. Close it when done.
type Terminal struct{ f *os.File }

// Write writes on the person's terminal.
func (t *Terminal) Write(b []byte) (int, error) { return t.f.Write(b) }

// Close closes the terminal.
func (t *Terminal) Close() error { return t.f.Close() }

// Prove proves that a person is at this process's controlling terminal,
// and when q.Confirm that the person typed the code shown there. It is
// the one check veto approve, veto mcp approve and veto ui make before
// they act; an error is a *Refusal.
func Prove(ctx context.Context, q Question) (*Terminal, error) {
	return checker{reg: defaultRegistry(), tty: "/dev/tty", wait: 5 * time.Minute}.prove(ctx, q)
}

// Note records, for Prove, that pid (this hook's own process, or
// veto-hook's on the server's socket) was started by a guarded client of
// the named kind: its nearest ancestor that is not a shell or veto's own
// program. It writes once per client; an error means it could not.
func Note(pid int, client string) error {
	return defaultRegistry().note(pid, client)
}

// checker is Prove with its inputs: the registry, the terminal's path and
// how long the person has to answer.
type checker struct {
	reg  registry
	tty  string
	wait time.Duration
	// pause is the wait between two looks at the terminal's holders
	// (50 ms when nil).
	pause func()
}

func (c checker) prove(ctx context.Context, q Question) (*Terminal, error) {
	if err := c.caller(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(c.tty, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &Refusal{"no_terminal", q.Command + " needs a person, who answers only on a terminal (/dev/tty cannot be opened): run it yourself, in a terminal of yours"}
	}
	if err := c.terminal(); err != nil {
		f.Close()
		return nil, err
	}
	t := &Terminal{f: f}
	if !q.Confirm {
		return t, nil
	}
	if err := c.confirm(ctx, f, q); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// caller refuses a process that a guarded client runs, or that runs where
// the registry cannot be trusted. Nothing is written on the terminal: the
// agent's process may share the person's, and a prompt raised for the
// agent is one the person might answer.
func (c checker) caller() error {
	if runtime.GOOS != "linux" {
		return &Refusal{"unsupported", "a person's answer is taken here only on Linux, where veto can tell a person's terminal from the agent's; answer on the page of veto serve"}
	}
	if ns, err := c.reg.proc.namespace("user"); err != nil || ns != initialUserNS {
		return &Refusal{"namespace", "a person's answer is taken only in the initial user namespace: inside another, the processes and files veto checks can be shown otherwise"}
	}
	live, err := c.reg.live()
	if err != nil {
		return &Refusal{"registry", "the registry of guarded clients cannot be trusted, so no person's answer is taken: " + err.Error()}
	}
	pid := os.Getpid()
	for range 4096 {
		s, err := c.reg.proc.stat(pid)
		if err != nil {
			return &Refusal{"failed", "this process's ancestry cannot be read, so no person's answer is taken"}
		}
		if e, ok := live[s.pid]; ok && e.Start == s.start {
			return &Refusal{"guarded_caller", fmt.Sprintf("this was run by a guarded agent client (%s, process %d, %s): only a person answers, from a terminal of their own; nothing was asked", clean(e.Comm), e.PID, e.Client)}
		}
		if s.ppid == 0 {
			return nil
		}
		pid = s.ppid
	}
	return &Refusal{"failed", "this process's ancestry does not end, so no person's answer is taken"}
}

// terminal refuses a controlling terminal that is a pseudo-terminal whose
// master a guarded client, or a process it started, holds or may hold.
// A look that cannot finish (a process that hides its descriptors, or
// whose descriptors cannot be read, as one does while it starts or ends)
// is taken again, up to three times in all, 50 ms apart; a master held is
// refused at once, and a refusal that persists stands.
func (c checker) terminal() error {
	pause := c.pause
	if pause == nil {
		pause = func() { time.Sleep(50 * time.Millisecond) }
	}
	for try := 1; ; try++ {
		again, err := c.terminalOnce()
		if !again || try == 3 {
			return err
		}
		pause()
	}
}

// terminalOnce is one look; again is true when its refusal may not stand.
func (c checker) terminalOnce() (again bool, err error) {
	self, err := c.reg.proc.stat(os.Getpid())
	if err != nil {
		return false, &Refusal{"failed", "this process's terminal cannot be read, so no person's answer is taken"}
	}
	idx, isPty := ptsIndex(self.tty)
	if !isPty {
		return false, nil // a console or serial line: nothing holds a master
	}
	live, err := c.reg.live()
	if err != nil {
		return false, &Refusal{"registry", "the registry of guarded clients cannot be trusted, so no person's answer is taken: " + err.Error()}
	}
	if len(live) == 0 {
		return false, nil
	}
	all, err := c.reg.proc.all()
	if err != nil {
		return true, &Refusal{"failed", "the processes cannot be listed, so no person's answer is taken"}
	}
	for _, s := range all {
		e, guarded := guardedBy(all, live, s)
		if !guarded {
			continue
		}
		masters, hidden, err := c.reg.proc.ptyMasters(s.pid)
		if err != nil {
			return true, &Refusal{"failed", "the terminals' holders cannot be read, so no person's answer is taken"}
		}
		what := fmt.Sprintf("process %d (%s), started by the guarded agent client %s (process %d)", s.pid, clean(s.comm), clean(e.Comm), e.PID)
		if hidden {
			return true, &Refusal{"agent_terminal", "this terminal may be the agent's: " + what + " hides its descriptors; only a person answers, from a terminal of their own; nothing was asked"}
		}
		for _, m := range masters {
			if m == idx {
				return false, &Refusal{"agent_terminal", "this terminal is the agent's: " + what + " holds it; only a person answers, from a terminal of their own; nothing was asked"}
			}
		}
	}
	return false, nil
}

// guardedBy reports whether s is a live guarded client or a descendant of
// one, and which.
func guardedBy(all map[int]stat, live map[int]entry, s stat) (entry, bool) {
	for range 4096 {
		if e, ok := live[s.pid]; ok && e.Start == s.start {
			return e, true
		}
		p, ok := all[s.ppid]
		if !ok || s.ppid == 0 {
			return entry{}, false
		}
		s = p
	}
	return entry{}, false
}

// codeAlphabet has no letters that read alike (0/o, 1/l/i).
const codeAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// newCode is a random code of six characters: one guess in about 887
// million, and one guess is all a prompt takes.
func newCode() string {
	b := make([]byte, 6)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// confirm shows q on the terminal and reads the code back from it.
func (c checker) confirm(ctx context.Context, f *os.File, q Question) error {
	code := newCode()
	discardInput(f)
	if _, err := io.WriteString(f, prompt(q, code)); err != nil {
		return &Refusal{"failed", "the terminal cannot be written, so nothing was answered"}
	}
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	f.SetReadDeadline(time.Now().Add(c.wait))
	go func() {
		s, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
		got <- line{s, err}
	}()
	var l line
	select {
	case l = <-got:
	case <-ctx.Done():
		f.SetReadDeadline(time.Now())
		l = <-got
		l.err = ctx.Err()
	}
	if l.err != nil && !(errors.Is(l.err, io.EOF) && l.s != "") {
		io.WriteString(f, "\nNo answer: nothing was answered.\n")
		return &Refusal{"not_confirmed", "no code was typed on the terminal, so nothing was answered"}
	}
	if strings.TrimSpace(l.s) != code {
		io.WriteString(f, "That is not the code: nothing was answered.\n")
		return &Refusal{"not_confirmed", "the code typed on the terminal was not the one shown, so nothing was answered"}
	}
	return nil
}

// prompt is the text a person reads: why it appeared, what the answer
// does, the question's details, and the code.
func prompt(q Question, code string) string {
	var b strings.Builder
	ppid := os.Getppid()
	parent := "?"
	if s, err := (proc{root: "/proc"}).stat(ppid); err == nil {
		parent = clean(s.comm)
	}
	fmt.Fprintf(&b, "\r\nveto asks for a person's answer on this terminal, because %s was run here\r\n", clean(q.Command))
	fmt.Fprintf(&b, "(process %d, started by %s, process %d). If you did not just run it, press Enter.\r\n\r\n", os.Getpid(), parent, ppid)
	fmt.Fprintf(&b, "  %s\r\n", clean(q.Action))
	for _, d := range q.Details {
		fmt.Fprintf(&b, "  %-10s %s\r\n", clean(d[0]), clean(d[1]))
	}
	fmt.Fprintf(&b, "\r\nType %s and press Enter to do this; anything else does nothing: ", code)
	return b.String()
}

// clean replaces control characters (escape sequences among them), so a
// value from the state cannot move the cursor or rewrite the prompt, and
// bounds its length.
func clean(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == 200 {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfffd {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// discardInput drops what was typed on the terminal before the prompt:
// an answer must come after the code is shown.
func discardInput(f *os.File) {
	const tcflsh, tciflush = 0x540B, 0
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_IOCTL, fd, tcflsh, tciflush)
	})
}
