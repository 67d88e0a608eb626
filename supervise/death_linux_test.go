//go:build linux && amd64

package supervise

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deathCode forks: the child (the supervisor's direct child) sleeps; the grandchild opens work/block, which the
// helper supervisor's decider never answers, then opens notes.txt, and writes what each open returned.
const deathCode = `import os, time, errno
h = os.environ["HOME"]
out = open(h + "/work/result", "w", buffering=1)
pid = os.fork()
if pid == 0:
    open(h + "/work/gpid", "w").write(str(os.getpid()))
    for name in ("block", "notes.txt"):
        try:
            open(h + "/work/" + name)
            out.write(name + " ok\n")
        except OSError as x:
            out.write(name + " " + errno.errorcode[x.errno] + "\n")
    os._exit(0)
open(h + "/work/pid", "w").write(str(os.getpid()))
time.sleep(100)
`

// helperSupervisor is the test binary run as a supervisor for TestChildDiesWithSupervisor to kill.
func helperSupervisor() {
	home := os.Getenv("SUPERVISE_TEST_HOME")
	block := filepath.Join(home, "work", "block")
	code, err := Run(context.Background(), Config{
		Argv:  []string{"python3", "-c", deathCode},
		Env:   []string{"HOME=" + home, "PATH=/usr/bin:/bin"},
		Dir:   filepath.Join(home, "work"),
		NetNS: true,
		Decide: func(r Request) Verdict {
			if r.Kind == Open && r.Path == block {
				select {} // never answered: the grandchild's open is pending when the supervisor dies
			}
			return Verdict{Allow: true}
		},
	})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
	}
	os.Exit(code)
}

func readInt(t *testing.T, p string, deadline time.Time) int {
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			n, err := strconv.Atoi(string(b))
			if err == nil {
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never written", p)
	return 0
}

func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// TestChildDiesWithSupervisor: when the supervisor is killed, its direct child dies (PR_SET_PDEATHSIG), and what
// is left of the tree gets ENOSYS for a notified system call, pending or new (the listener closed with the
// supervisor).
//
// E34
func TestChildDiesWithSupervisor(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SUPERVISE_TEST_HELPER=supervisor", "SUPERVISE_TEST_HOME="+w.home)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	pid := readInt(t, filepath.Join(w.work, "pid"), deadline)
	gpid := readInt(t, filepath.Join(w.work, "gpid"), deadline)
	for {
		wchan, _ := os.ReadFile("/proc/" + strconv.Itoa(gpid) + "/wchan")
		if strings.Contains(string(wchan), "seccomp") {
			break // the grandchild waits on its open of work/block
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild never waited on the supervisor (wchan %q)", wchan)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the supervised child %d outlived its supervisor", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var result string
	for {
		b, _ := os.ReadFile(filepath.Join(w.work, "result"))
		if result = string(b); strings.Count(result, "\n") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild did not report: %q", result)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := "block ENOSYS\nnotes.txt ENOSYS\n"; result != want {
		t.Errorf("after the supervisor died: %q, want %q", result, want)
	}
}

// afterCode leaves a grandchild behind that, once the command has exited and Run has returned, tries an open.
const afterCode = `import os, time, errno
h = os.environ["HOME"]
out = open(h + "/work/after", "w", buffering=1)
if os.fork() == 0:
    os.close(0); os.close(1); os.close(2)
    time.sleep(0.5)
    try:
        open(h + "/work/notes.txt")
        out.write("ok\n")
    except OSError as x:
        out.write(errno.errorcode[x.errno] + "\n")
    os._exit(0)
`

// TestLeftoverAfterRun: a process the command leaves behind cannot open (or exec, or connect) once Run has
// returned: the listener is closed and the kernel fails the notified call with ENOSYS.
func TestLeftoverAfterRun(t *testing.T) {
	w := newWorld(t)
	if r := w.run(w.config("python3", "-c", afterCode)); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(w.work, "after"))
		if len(b) > 0 {
			if string(b) != "ENOSYS\n" {
				t.Errorf("the leftover's open after Run returned: %q, want ENOSYS", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the leftover never reported")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
