//go:build linux

package presence_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/presence/presencetest"
)

// The test binary plays every part in these tests, by role (a variable of
// the test binary only; veto has no such switch):
//
//	approver  calls presence.Prove, as veto approve does
//	client    a guarded agent client: it notes itself in the registry, as
//	          the hook does for the client that runs it, then attacks
//	          (roleDo says how)
const (
	roleEnv = "PRESENCE_TEST_ROLE"
	roleDo  = "PRESENCE_TEST_DO"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "approver":
		os.Exit(approver())
	case "client":
		os.Exit(client())
	}
	os.Exit(m.Run())
}

// approver is veto approve's use of Prove: exit 0 and "confirmed" when a
// person typed the code, else exit 1 and the refusal.
func approver() int {
	t, err := presence.Prove(context.Background(), presence.Question{
		Command: "veto approve", Action: "approve call c1 of run r1, once, within 10m",
		Details: [][2]string{{"tool", "Bash"}, {"rule", "deploy-needs-person (deploy_needs_person)"}, {"asked", "2026-12-01 10:00:00"}},
		Confirm: true,
	})
	if err != nil {
		r, _ := err.(*presence.Refusal)
		if r == nil {
			fmt.Fprintln(os.Stderr, "not a refusal:", err)
			return 3
		}
		fmt.Fprintf(os.Stderr, "refused %s: %s\n", r.Reason, r.Message)
		return 1
	}
	defer t.Close()
	fmt.Fprintln(t, "\r\nconfirmed")
	fmt.Println("confirmed")
	return 0
}

// approverCmd is the approver, run by this test binary.
func approverCmd(t *testing.T) *exec.Cmd {
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), roleEnv+"=approver")
	return cmd
}

func self(t *testing.T) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// client is a guarded agent client: it notes itself in the registry as
// the hook notes the client that runs it, then tries to answer for the
// person.
func client() int {
	if err := presence.Note(os.Getpid(), "test-client"); err != nil {
		fmt.Fprintln(os.Stderr, "note:", err)
		return 4
	}
	self, _ := os.Executable()
	switch os.Getenv(roleDo) {
	case "script":
		// The agent's own terminal: script -c runs the approver on a
		// pseudo-terminal whose master script holds; the agent reads the
		// prompt from script's output and types the code into its input.
		cmd := exec.Command("script", "-qec", "env "+roleEnv+"=approver "+self, "/dev/null")
		cmd.Env = withoutRole(os.Environ())
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "script:", err)
			return 5
		}
		typeCodes(out, in, os.Stdout)
		return exitOf(cmd.Wait())
	case "hold":
		// The master of a pair the test opened is this client's (fd 3):
		// it answers whatever prompt appears there, until its stdin ends.
		m := os.NewFile(3, "master")
		go typeCodes(m, m, os.Stdout)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "run":
		// The person's terminal (fd 3, a slave whose master the test
		// holds) is the approver's; the approver is this client's child.
		cmd := exec.Command(self)
		cmd.Env = append(withoutRole(os.Environ()), roleEnv+"=approver")
		cmd.ExtraFiles = []*os.File{os.NewFile(3, "slave")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		return exitOf(cmd.Run())
	}
	return 6
}

// typeCodes copies what r shows to log, and types every code a prompt
// shows into w: the attack.
func typeCodes(r io.Reader, w io.Writer, log io.Writer) {
	br := bufio.NewReader(r)
	var seen bytes.Buffer
	buf := make([]byte, 1024)
	for {
		n, err := br.Read(buf)
		seen.Write(buf[:n])
		log.Write(buf[:n])
		if m := presencetest.CodeRE.FindSubmatch(seen.Bytes()); m != nil {
			fmt.Fprintf(w, "%s\r", m[1])
			seen.Reset()
		}
		if err != nil {
			return
		}
	}
}

func withoutRole(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, roleEnv+"=") && !strings.HasPrefix(kv, roleDo+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func exitOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return 7
	}
	return 0
}

func clientCmd(t *testing.T, do string) *exec.Cmd {
	cmd := exec.Command(self(t))
	cmd.Env = append(withoutRole(os.Environ()), roleEnv+"=client", roleDo+"="+do)
	return cmd
}

// run runs cmd and returns its exit code, stdout and stderr.
func run(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	cmd.Stderr = &errb
	err := cmd.Run()
	code := exitOf(err)
	if code == 7 {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return code, out.String(), errb.String()
}

func wantRefused(t *testing.T, code int, stderr, reason, says string) {
	t.Helper()
	if code != 1 || !strings.Contains(stderr, "refused "+reason+":") || !strings.Contains(stderr, says) {
		t.Fatalf("exit %d, stderr %q; want exit 1, refused %s, saying %q", code, stderr, reason, says)
	}
}

func needLinux(t *testing.T) {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("needs Linux's /proc")
	}
}

// No terminal at all (a new session, stdin /dev/null): nothing to prove
// a person with, and no prompt anywhere.
func TestProofNeedsATerminal(t *testing.T) {
	needLinux(t)
	cmd := approverCmd(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	code, stdout, stderr := run(t, cmd)
	wantRefused(t, code, stderr, "no_terminal", "/dev/tty cannot be opened")
	if strings.Contains(stdout, "confirmed") {
		t.Fatal("confirmed without a terminal")
	}
}

// A pipe is no terminal: the code (or "yes") on stdin is never read.
func TestProofIsNotReadFromAPipe(t *testing.T) {
	needLinux(t)
	cmd := approverCmd(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin = strings.NewReader("yes\ny\n")
	code, _, stderr := run(t, cmd)
	wantRefused(t, code, stderr, "no_terminal", "only on a terminal")
}

// With a person's terminal, a pipe on stdin does not matter: the code is
// read from the terminal, and what the pipe holds is not taken.
func TestPersonAnswersOnTheTerminalWhatEverStdinHolds(t *testing.T) {
	needLinux(t)
	cmd := approverCmd(t)
	cmd.Stdin = strings.NewReader("yes\n")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	screen, code, err := presencetest.Run(cmd, func(code string) string { return code })
	if err != nil || code != 0 || !strings.Contains(stdout.String(), "confirmed") {
		t.Fatalf("exit %d (%v), stdout %q\nscreen: %s", code, err, stdout.String(), screen)
	}
}

// A person's terminal (the test holds its master and is no guarded
// client): the prompt says what is approved and why it appeared; the code
// typed passes, another fails.
func TestPersonsTerminalWithTheCode(t *testing.T) {
	needLinux(t)
	for _, tc := range []struct {
		name string
		typ  func(code string) string
		exit int
		says string
	}{
		{"right code", func(c string) string { return c }, 0, "confirmed"},
		{"wrong code", func(string) string { return "abcdef" }, 1, "refused not_confirmed: the code typed on the terminal was not the one shown"},
		{"yes is not the code", func(string) string { return "yes" }, 1, "refused not_confirmed"},
		{"nothing typed", func(string) string { return "" }, 1, "refused not_confirmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := approverCmd(t)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			screen, code, err := presencetest.Run(cmd, tc.typ)
			if err != nil || code != tc.exit || !strings.Contains(stdout.String()+stderr.String(), tc.says) {
				t.Fatalf("exit %d (%v), want %d saying %q; stdout %q stderr %q\nscreen: %s", code, err, tc.exit, tc.says, stdout.String(), stderr.String(), screen)
			}
			for _, want := range []string{"because veto approve was run here", "approve call c1 of run r1", "tool       Bash", "deploy-needs-person (deploy_needs_person)", "If you did not just run it"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the prompt does not say %q:\n%s", want, screen)
				}
			}
			if strings.Contains(stdout.String()+stderr.String(), "Type ") {
				t.Error("the prompt (and its code) went to stdout or stderr, which the agent may read")
			}
		})
	}
}

// The agent's own pseudo-terminal: a guarded client runs script -qc with
// the approver in it and types every code it is shown into script. The
// approver descends from the client: refused, and nothing is prompted.
func TestAgentsScriptCannotProve(t *testing.T) {
	needLinux(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1)")
	}
	code, stdout, stderr := run(t, clientCmd(t, "script"))
	if code != 1 || !strings.Contains(stdout+stderr, "refused guarded_caller: this was run by a guarded agent client") {
		t.Fatalf("exit %d; stdout %q stderr %q", code, stdout, stderr)
	}
	if strings.Contains(stdout, "Type ") || strings.Contains(stdout, "confirmed") {
		t.Fatalf("the agent's terminal was prompted: %q", stdout)
	}
}

// The caller descends from a guarded client, on the person's own terminal
// (the confused deputy: the agent's process shares the person's
// terminal): refused without a prompt the person might answer.
func TestCallerUnderAGuardedClientIsNotPrompted(t *testing.T) {
	needLinux(t)
	p, err := presencetest.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	screen := make(chan string, 1)
	go func() {
		// A prompt, if one wrongly appears, is answered with nothing, so
		// that the test fails at once rather than wait for the code.
		var all []byte
		buf := make([]byte, 1024)
		for {
			n, err := p.Master.Read(buf)
			all = append(all, buf[:n]...)
			if bytes.Contains(all, []byte("Type ")) {
				p.Master.Write([]byte("\r"))
			}
			if err != nil {
				break
			}
		}
		screen <- string(all)
	}()
	cmd := clientCmd(t, "run")
	cmd.ExtraFiles = []*os.File{p.Slave}
	code, _, stderr := run(t, cmd)
	p.Slave.Close()
	wantRefused(t, code, stderr, "guarded_caller", "nothing was asked")
	select {
	case s := <-screen:
		if strings.Contains(s, "Type ") {
			t.Fatalf("the person's terminal showed a prompt: %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the terminal did not close")
	}
}

// A pseudo-terminal pair opened in Go whose master a guarded client holds
// (it would type any code it is shown): the approver, not itself under
// the client, is refused on that terminal, and nothing is prompted.
func TestAgentHeldMasterCannotProve(t *testing.T) {
	needLinux(t)
	p, err := presencetest.Open()
	if err != nil {
		t.Fatal(err)
	}
	holder := clientCmd(t, "hold")
	holder.ExtraFiles = []*os.File{p.Master}
	stop, _ := holder.StdinPipe()
	var seen bytes.Buffer
	holder.Stdout = &seen
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	p.Master.Close() // the client's alone now
	defer func() { stop.Close(); holder.Wait() }()
	waitNoted(t, holder.Process.Pid)

	cmd := approverCmd(t)
	cmd.ExtraFiles = []*os.File{p.Slave}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	code, _, stderr := run(t, cmd)
	p.Slave.Close()
	wantRefused(t, code, stderr, "agent_terminal", "this terminal is the agent's")
	if !strings.Contains(stderr, fmt.Sprintf("(process %d)", holder.Process.Pid)) {
		t.Errorf("the refusal does not name the client: %q", stderr)
	}
	stop.Close()
	holder.Wait()
	if strings.Contains(seen.String(), "Type ") {
		t.Fatalf("the agent's terminal was prompted: %q", seen.String())
	}
}

// waitNoted waits until the registry names pid.
func waitNoted(t *testing.T, pid int) {
	t.Helper()
	for range 200 {
		for _, dir := range registryDirs() {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), strconv.Itoa(pid)+"-") {
					return
				}
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("process %d was not noted in the registry", pid)
}

func registryDirs() []string {
	uid := strconv.Itoa(os.Getuid())
	return []string{filepath.Join("/run/user", uid, "veto", "clients"), filepath.Join("/tmp", "veto-"+uid, "clients")}
}

// A stale entry: the registry names this test's own PID with another
// start time (a client that died, its PID reused). It does not refuse
// the person.
func TestStaleEntryDoesNotRefuseAPerson(t *testing.T) {
	needLinux(t)
	// Note a real client, so that the registry exists, then forge the
	// stale entry beside it.
	holder := clientCmd(t, "hold")
	stop, _ := holder.StdinPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stop.Close(); holder.Wait() }()
	waitNoted(t, holder.Process.Pid)
	dir := ""
	for _, d := range registryDirs() {
		if _, err := os.Stat(d); err == nil {
			dir = d
			break
		}
	}
	start := startOf(t, os.Getpid())
	stale := map[string]any{"pid": os.Getpid(), "start": start + 1, "comm": "claude", "client": "claude-code"}
	b, _ := json.Marshal(stale)
	name := filepath.Join(dir, fmt.Sprintf("%d-%d", os.Getpid(), start+1))
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(name)

	cmd := approverCmd(t)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	screen, code, err := presencetest.Run(cmd, func(c string) string { return c })
	if err != nil || code != 0 || !strings.Contains(stdout.String(), "confirmed") {
		t.Fatalf("exit %d (%v), stdout %q\nscreen: %s", code, err, stdout.String(), screen)
	}
	// And the same entry with the right start time refuses: the entry
	// was read, and only its start time told it from this process.
	right := filepath.Join(dir, fmt.Sprintf("%d-%d", os.Getpid(), start))
	stale["start"] = start
	b, _ = json.Marshal(stale)
	if err := os.WriteFile(right, b, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(right)
	code, _, stderr := run(t, approverCmd(t))
	wantRefused(t, code, stderr, "guarded_caller", "claude")
}

func startOf(t *testing.T, pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Another user namespace (unshare --user, as the agent would to remount
// /proc or hide its tree): refused before anything else.
func TestOtherUserNamespaceIsRefused(t *testing.T) {
	needLinux(t)
	if exec.Command("unshare", "--user", "true").Run() != nil {
		t.Skip("no user namespaces here")
	}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", self(t))
	cmd.Env = append(os.Environ(), roleEnv+"=approver")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	screen, code, err := presencetest.Run(cmd, func(c string) string { return c })
	if err != nil || code != 1 || !strings.Contains(stderr.String(), "refused namespace:") {
		t.Fatalf("exit %d (%v); stderr %q\nscreen: %s", code, err, stderr.String(), screen)
	}
	if strings.Contains(screen, "Type ") {
		t.Fatal("prompted inside another user namespace")
	}
}
