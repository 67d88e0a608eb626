//go:build linux && amd64

package supervise

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestEchoRuns(t *testing.T) {
	w := newWorld(t)
	r := w.run(w.config("echo", "hello", "world"))
	if r.code != 0 || r.stdout != "hello world\n" {
		t.Fatalf("got %d %q %q", r.code, r.stdout, r.stderr)
	}
	var execs int
	for _, q := range w.seen {
		if q.Kind == Exec && strings.HasSuffix(q.Path, "/echo") {
			execs++
			if len(q.Argv) != 3 || q.Argv[1] != "hello" {
				t.Errorf("argv %q", q.Argv)
			}
		}
	}
	if execs != 1 {
		t.Errorf("%d execs of echo decided, want 1: %+v", execs, w.seen)
	}
}

// shape is one way to reach the canary the static analyzer cannot see through, and the same shape doing harmless
// work. {{H}} in a script is HOME.
type shape struct {
	name      string
	setup     map[string]string // files to write below HOME, before the run
	bad, good []string          // argv; the bad one reaches for the canary or runs "forbidden"
	goodOut   string            // what the good one prints
	stop      Kind              // where the bad one is stopped
	exitZero  bool              // the bad one exits 0 all the same (find ignores its -exec's failure)
}

var pyBad = `import os
p = os.path.join(os.environ["HOME"], "." + "swa"[::-1], "cred" + "entials")
print(open(p).read())
`

var pyGood = `import os
p = os.path.join(os.environ["HOME"], "work", "notes" + ".txt")
print(open(p).read(), end="")
`

var shapes = []shape{
	{
		name:  "script file",
		setup: map[string]string{"work/bad.sh": "#!/bin/sh\ncat \"$HOME/.aws/credentials\"\n", "work/good.sh": "#!/bin/sh\ncat notes.txt\n"},
		bad:   []string{"sh", "-c", "./bad.sh"}, good: []string{"sh", "-c", "./good.sh"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name: "bash script by name",
		setup: map[string]string{"work/build.sh": "set -e\nf=$HOME/.aws\ncat \"$f/credentials\"\n",
			"work/build2.sh": "set -e\nf=$HOME/work\ncat \"$f/notes.txt\"\n"},
		bad: []string{"bash", "./build.sh"}, good: []string{"bash", "./build2.sh"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name: "interpreter builds the path",
		bad:  []string{"python3", "-c", pyBad}, good: []string{"python3", "-c", pyGood},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "find -exec",
		bad:     []string{"find", "{{H}}", "-name", "credentials", "-exec", "cat", "{}", ";"},
		good:    []string{"find", "{{H}}/work", "-name", "notes.txt", "-exec", "cat", "{}", ";"},
		goodOut: "harmless notes\n", stop: Open, exitZero: true,
	},
	{
		name:    "xargs",
		bad:     []string{"sh", "-c", "echo .aws/credentials | (cd \"$HOME\" && xargs cat)"},
		good:    []string{"sh", "-c", "echo notes.txt | xargs cat"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "shell function",
		bad:     []string{"bash", "-c", "show() { cat \"$HOME/$1/$2\"; }; show .aws credentials"},
		good:    []string{"bash", "-c", "show() { cat \"$HOME/$1/$2\"; }; show work notes.txt"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "binary copied under another name",
		bad:     []string{"sh", "-c", "cp /bin/cat \"$HOME/x\" && \"$HOME/x\" \"$HOME/.aws/credentials\""},
		good:    []string{"sh", "-c", "cp /bin/cat \"$HOME/x\" && \"$HOME/x\" notes.txt"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "relative path from the credential directory",
		bad:     []string{"sh", "-c", "cd \"$HOME/.aws\" && cat credentials"},
		good:    []string{"sh", "-c", "cd \"$HOME/work\" && cat notes.txt"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "symbolic link to the credential",
		bad:     []string{"sh", "-c", "ln -s \"$HOME/.aws/credentials\" link && cat link"},
		good:    []string{"sh", "-c", "ln -s \"$HOME/work/notes.txt\" link && cat link"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "through /proc/self/cwd",
		bad:     []string{"cat", "/proc/self/cwd/../.aws/credentials"},
		good:    []string{"cat", "/proc/self/cwd/notes.txt"},
		goodOut: "harmless notes\n", stop: Open,
	},
	{
		name:    "a program named forbidden",
		bad:     []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/forbidden\" && \"$HOME/bin/forbidden\" ran"},
		good:    []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/allowed\" && \"$HOME/bin/allowed\" ran"},
		goodOut: "ran\n", stop: Exec,
	},
	{
		name:    "forbidden program through find -exec",
		bad:     []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/forbidden\" && find . -name notes.txt -exec \"$HOME/bin/forbidden\" {} ';'"},
		good:    []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/allowed\" && find . -name notes.txt -exec \"$HOME/bin/allowed\" {} ';'"},
		goodOut: "./notes.txt\n", stop: Exec,
	},
	{
		name:    "forbidden program from python",
		bad:     []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/forbidden\" && python3 -c 'import os,subprocess; subprocess.run([os.environ[\"HOME\"]+\"/bin/forb\"+\"idden\", \"ran\"])'"},
		good:    []string{"sh", "-c", "cp /bin/echo \"$HOME/bin/allowed\" && python3 -c 'import os,subprocess; subprocess.run([os.environ[\"HOME\"]+\"/bin/allo\"+\"wed\", \"ran\"])'"},
		goodOut: "ran\n", stop: Exec,
	},
}

func (w *world) argv(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, "{{H}}", w.home)
	}
	return out
}

func TestShapesStoppedAndHarmlessRun(t *testing.T) {
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			w := newWorld(t)
			for rel, text := range sh.setup {
				w.write(rel, text)
			}
			r := w.run(w.config(w.argv(sh.bad)...))
			refused := w.refused()
			if len(refused) == 0 {
				t.Fatalf("bad: nothing refused (exit %d)\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
			if refused[0].Kind != sh.stop {
				t.Errorf("bad: first refusal %v, want %v", refused[0], sh.stop)
			}
			if sh.stop == Exec && strings.Contains(r.stdout, "ran") || sh.stop == Exec && strings.Contains(r.stdout, "notes") {
				t.Errorf("bad: the forbidden program ran: %q", r.stdout)
			}
			if r.code == 0 && sh.stop == Open && !sh.exitZero {
				t.Errorf("bad: exit 0 after a refused open")
			}

			w2 := newWorld(t)
			for rel, text := range sh.setup {
				w2.write(rel, text)
			}
			r = w2.run(w2.config(w2.argv(sh.good)...))
			if r.code != 0 || r.stdout != sh.goodOut {
				t.Errorf("good: exit %d, stdout %q, want %q; stderr %q", r.code, r.stdout, sh.goodOut, r.stderr)
			}
			if ref := w2.refused(); len(ref) != 0 {
				t.Errorf("good: refused %+v", ref)
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		argv []string
		want int
	}{
		{[]string{"true"}, 0},
		{[]string{"sh", "-c", "exit 7"}, 7},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + 15},
		{[]string{"sh", "-c", "kill -KILL $$"}, 128 + 9},
		{[]string{"sh", "-c", "no-such-program-here"}, 127},
	} {
		if r := w.run(w.config(c.argv...)); r.code != c.want {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.argv, r.code, c.want, r.stderr)
		}
	}
}

func TestTopLevelRefusedAndNotFound(t *testing.T) {
	w := newWorld(t)
	p := filepath.Join(w.home, "bin", "forbidden")
	if err := os.Symlink("/bin/echo", p); err != nil {
		t.Fatal(err)
	}
	r := w.run(w.config(p, "ran"))
	if r.code != 126 || strings.Contains(r.stdout, "ran") {
		t.Errorf("refused program: exit %d stdout %q, want 126 and nothing", r.code, r.stdout)
	}
	if _, err := Run(t.Context(), w.config("no-such-program-here")); err == nil {
		t.Errorf("a program not found: no error")
	}
}

func TestDecidePanicRefuses(t *testing.T) {
	w := newWorld(t)
	cfg := w.config("cat", "notes.txt")
	cfg.Decide = func(r Request) Verdict {
		if r.Kind == Open && strings.HasSuffix(r.Path, "/notes.txt") {
			panic("decider bug")
		}
		return Verdict{Allow: true}
	}
	r := w.run(cfg)
	if r.code == 0 || strings.Contains(r.stdout, "harmless") {
		t.Errorf("after a panic: exit %d stdout %q", r.code, r.stdout)
	}
	cfg = w.config("echo", "ran")
	cfg.Decide = func(r Request) Verdict { panic("decider bug") }
	if r := w.run(cfg); r.code != 126 || r.stdout != "" {
		t.Errorf("panic on the first exec: exit %d stdout %q", r.code, r.stdout)
	}
	cfg.Decide = nil
	if r := w.run(cfg); r.code != 126 || r.stdout != "" {
		t.Errorf("no decider: exit %d stdout %q", r.code, r.stdout)
	}
}

// A refused file operation fails with EACCES; a refused exec or connect with EPERM.
func TestRefusalErrors(t *testing.T) {
	w := newWorld(t)
	code := `import errno, os, socket, subprocess
h = os.environ["HOME"]
def e(f):
    try:
        f()
        return "ok"
    except OSError as x:
        return errno.errorcode[x.errno]
s = socket.socket()
print("open", e(lambda: open(h + "/.aws/credentials")))
print("exec", e(lambda: subprocess.run([h + "/bin/forbidden"])))
print("connect", e(lambda: s.connect(("127.0.0.1", 4444))))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("sendto", e(lambda: u.sendto(b"x", ("127.0.0.1", 4444))))
print("sendto-ok", e(lambda: u.sendto(b"x", ("127.0.0.1", 4445))))
print("unlink", e(lambda: os.unlink(h + "/work/keep")))
print("rename", e(lambda: os.rename(h + "/work/keep", h + "/work/moved")))
print("mkdir", e(lambda: os.mkdir(h + "/work/nodir")))
print("symlink", e(lambda: os.symlink(h + "/work/keep", h + "/work/nolink")))
print("link", e(lambda: os.link(h + "/work/keep", h + "/work/nolink")))
print("truncate", e(lambda: os.truncate(h + "/work/keep", 0)))
`
	w.write("work/keep", "keep\n")
	if err := os.Symlink("/bin/echo", filepath.Join(w.home, "bin", "forbidden")); err != nil {
		t.Fatal(err)
	}
	cfg := w.config("python3", "-c", code)
	base := w.decide
	cfg.Decide = func(r Request) Verdict {
		v := base(r)
		switch {
		case r.Kind == Connect && r.Addr.Port() == 4444:
			v.Allow = false
		case r.Kind != Open && r.Kind != Exec && r.Kind != Connect && strings.Contains(r.Path, "/work/"):
			v.Allow = false
		case r.Syscall == "truncate" && r.Write && r.Flags&unix.O_TRUNC != 0:
			v.Allow = false
		}
		return v
	}
	r := w.run(cfg)
	want := "open EACCES\nexec EPERM\nconnect EPERM\nsendto EPERM\nsendto-ok ok\nunlink EACCES\nrename EACCES\n" +
		"mkdir EACCES\nsymlink EACCES\nlink EACCES\ntruncate EACCES\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s\nstderr %s", r.stdout, want, r.stderr)
	}
	var kinds = map[Kind]bool{}
	for _, q := range w.seen {
		kinds[q.Kind] = true
		if q.Kind == Connect && q.Addr.Port() == 4444 && q.Addr.Addr().String() != "127.0.0.1" {
			t.Errorf("connect address %v", q.Addr)
		}
		if q.Kind == Rename && (!strings.HasSuffix(q.Path, "/work/keep") || !strings.HasSuffix(q.Path2, "/work/moved")) {
			t.Errorf("rename %q → %q", q.Path, q.Path2)
		}
	}
	for _, k := range []Kind{Exec, Open, Connect, Unlink, Rename, Mkdir, Link, Symlink} {
		if !kinds[k] {
			t.Errorf("no %v request seen", k)
		}
	}
}

// io_uring, ptrace, process_vm_writev, chroot, mount and setns are refused by the filter itself (as root too).
func TestFilterRefusals(t *testing.T) {
	w := newWorld(t)
	code := `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
for name, nr, args in (("io_uring_setup", 425, (8, buf)), ("ptrace", 101, (0, 0, 0, 0)), ("process_vm_writev", 311, (1, 0, 0, 0, 0, 0)),
        ("chroot", 161, (b"/tmp",)), ("mount", 165, (b"none", b"/mnt", b"tmpfs", 0, 0)), ("setns", 308, (0, 0)), ("fsopen", 430, (b"tmpfs", 0)),
        ("open_by_handle_at", 304, (-100, buf, 0)), ("userfaultfd", 323, (0,)),
        ("mknod-chr", 133, (b"chr", 0o20600, 259)), ("mknodat-blk", 259, (-100, b"blk", 0o60600, 259))):
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno())
import os
os.mkfifo("fifo")
print("mkfifo", os.path.exists("fifo"))
`
	r := w.run(w.config("python3", "-c", code))
	want := "io_uring_setup -1 1\nptrace -1 1\nprocess_vm_writev -1 1\nchroot -1 1\nmount -1 1\nsetns -1 1\nfsopen -1 1\n" +
		"open_by_handle_at -1 1\nuserfaultfd -1 1\nmknod-chr -1 1\nmknodat-blk -1 1\nmkfifo True\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s\nstderr %s", r.stdout, want, r.stderr)
	}
}

func TestLandlockFloor(t *testing.T) {
	if Probe().Landlock == 0 {
		t.Skip("no Landlock")
	}
	w := newWorld(t)
	allowAll := func(Request) Verdict { return Verdict{Allow: true} }
	floor := &Floor{WriteRoots: []string{w.work}, DenyRead: []string{filepath.Join(w.home, ".aws")}}
	run := func(script string) result {
		cfg := w.config("bash", "-c", script)
		cfg.Decide = allowAll
		cfg.Landlock = floor
		return w.run(cfg)
	}
	// A write outside the roots fails though the decider allows everything.
	r := run("echo x > \"$HOME/outside.txt\"")
	if r.code == 0 {
		t.Errorf("write outside the roots: exit 0")
	}
	if _, err := os.Stat(filepath.Join(w.home, "outside.txt")); err == nil {
		t.Errorf("the file outside the roots was written")
	}
	// A read below DenyRead fails; the canary check is in w.run.
	if r := run("cat \"$HOME/.aws/credentials\""); r.code == 0 {
		t.Errorf("read below DenyRead: exit 0")
	}
	// What a shell does in its roots works: write, read back, a here-document, ls of home, a pipe, /dev/null.
	r = run("echo inside > in.txt && cat in.txt && cat <<END\nheredoc\nEND\nls \"$HOME\" >/dev/null && echo listed | tr a-z A-Z && mkdir -p d/e && mv in.txt d/e/ && rm -r d && ls /tmp >/dev/null && echo done")
	if r.code != 0 || r.stdout != "inside\nheredoc\nLISTED\ndone\n" {
		t.Errorf("shell in its roots: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	// A disk's device node is not readable, whatever DenyRead says; the devices a shell uses are.
	var disk string
	if ents, err := os.ReadDir("/dev"); err == nil {
		for _, e := range ents {
			if e.Type()&os.ModeDevice != 0 && e.Type()&os.ModeCharDevice == 0 && !strings.HasPrefix(e.Name(), "loop") {
				disk = "/dev/" + e.Name()
				break
			}
		}
	}
	if disk != "" {
		if r := run("head -c 16 " + disk + " >/dev/null"); r.code == 0 {
			t.Errorf("read of %s under the floor: exit 0", disk)
		}
	}
	if r := run("head -c 4 /dev/urandom | wc -c && echo hi > /dev/tty 2>/dev/null; cat /dev/null"); r.stdout != "4\n" {
		t.Errorf("devices under the floor: %q %q", r.stdout, r.stderr)
	}
	// Programs in the system still run and read what they need.
	r = run("python3 -c 'print(1+1)' && git --version >/dev/null 2>&1; echo $?")
	if !strings.HasPrefix(r.stdout, "2\n") {
		t.Errorf("python under the floor: %q %q", r.stdout, r.stderr)
	}
}

// The command gets its stdio and nothing of the supervisor's: not the socket, not the listener, not what the
// supervisor inherited (fd 255 is the shell's own copy of its script).
func TestOnlyStdioInherited(t *testing.T) {
	w := newWorld(t)
	r := w.run(w.config("sh", "-c", "ls -l /proc/$$/fd | sed 1d | cut -d' ' -f9-"))
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if f := strings.Fields(line); len(f) < 3 || f[1] != "0" && f[1] != "1" && f[1] != "2" && f[1] != "255" {
			t.Errorf("the command holds %q", line)
		}
	}
	t.Logf("fds: %q", r.stdout)
}

// When the child cannot set up (here: its working directory does not exist), Run returns the reason and the
// command never runs.
func TestSetupFailureDoesNotRun(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(w.home, "ran")
	cfg := w.config("touch", marker)
	cfg.Dir = filepath.Join(w.home, "no", "such", "dir")
	code, err := Run(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "chdir") {
		t.Errorf("Run: %d, %v; want the chdir failure", code, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
	for _, r := range w.seen {
		t.Errorf("a request was decided: %+v", r)
	}
}

// A request that cannot be read fails as the kernel would fail it (and never runs): an empty path, a bad address.
func TestUnreadableRequests(t *testing.T) {
	w := newWorld(t)
	code := `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, nr, args in (("open-empty", 2, (b"", 0)), ("open-fault", 2, (8, 0)), ("execve-fault", 59, (8, 0, 0)),
        ("openat-badfd", 257, (999, b"x", 0))):
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno())
`
	r := w.run(w.config("python3", "-c", code))
	want := "open-empty -1 2\nopen-fault -1 14\nexecve-fault -1 14\nopenat-badfd -1 9\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s\nstderr %s", r.stdout, want, r.stderr)
	}
}

// raceCode opens a path another thread keeps flipping between notes.txt and the credential file: the supervisor
// reads one, the kernel may open the other (the known limit of CONTINUE). It prints only how often it won.
const raceCode = `import ctypes, threading, os
libc = ctypes.CDLL(None, use_errno=True)
h = os.environ["HOME"]
good = (h + "/work/notes.txt").encode()
bad = (h + "/.aws/cred" + "entials").encode()
buf = ctypes.create_string_buffer(max(len(good), len(bad)) + 1)
ctypes.memmove(buf, good, len(good) + 1)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, bad, len(bad) + 1)
        ctypes.memmove(buf, good, len(good) + 1)
t = threading.Thread(target=flip)
t.start()
won = 0
for i in range(2000):
    fd = libc.open(buf, 0)
    if fd >= 0:
        if b"CANARY" in os.read(fd, 200):
            won += 1
        os.close(fd)
stop = True
t.join()
print("won", won)
`

// TestRaceStoppedByFloor: a thread racing on the path argument can get past the decider (logged, not asserted:
// it depends on timing), never past the Landlock floor.
func TestRaceStoppedByFloor(t *testing.T) {
	if Probe().Landlock == 0 {
		t.Skip("no Landlock")
	}
	w := newWorld(t)
	r := w.run(w.config("python3", "-c", raceCode))
	t.Logf("without the floor: %s", strings.TrimSpace(r.stdout))
	cfg := w.config("python3", "-c", raceCode)
	cfg.Landlock = &Floor{WriteRoots: []string{w.work}, DenyRead: []string{filepath.Join(w.home, ".aws")}}
	r = w.run(cfg)
	if r.stdout != "won 0\n" {
		t.Errorf("with the floor: %q (stderr %q)", r.stdout, r.stderr)
	}
}

// openat2 with RESOLVE_IN_ROOT resolves an absolute path within the directory it names: the decider sees the file
// the kernel opens.
func TestOpenat2InRoot(t *testing.T) {
	w := newWorld(t)
	code := `import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
home = os.open(os.environ["HOME"], os.O_RDONLY | os.O_DIRECTORY)
for p in (b"/.aws/credentials", b"/work/notes.txt"):
    how = How(0, 0, 0x10)
    fd = libc.syscall(437, home, p, ctypes.byref(how), ctypes.sizeof(how))
    print(fd >= 0, errno.errorcode.get(ctypes.get_errno(), "") if fd < 0 else "")
`
	r := w.run(w.config("python3", "-c", code))
	if r.stdout != "False EACCES\nTrue \n" {
		t.Errorf("got %q, stderr %q", r.stdout, r.stderr)
	}
}

// The floor cannot be walked around by giving a credential a second name: with HOME a write root and HOME/.aws
// denied, a hard link or a rename of the credential into a readable place fails (Landlock refuses a reparenting
// that would grant the file a right it lacked), and so does reading it afterwards.
func TestFloorLinkAndRename(t *testing.T) {
	if Probe().Landlock < 2 {
		t.Skip("no Landlock ABI 2")
	}
	w := newWorld(t)
	for _, script := range []string{
		"ln \"$HOME/.aws/credentials\" \"$HOME/work/x\"; cat \"$HOME/work/x\"",
		"mv \"$HOME/.aws/credentials\" \"$HOME/work/y\"; cat \"$HOME/work/y\"",
		"mv \"$HOME/.aws\" \"$HOME/work/z\"; cat \"$HOME/work/z/credentials\"",
	} {
		cfg := w.config("sh", "-c", script)
		cfg.Decide = func(Request) Verdict { return Verdict{Allow: true} }
		cfg.Landlock = &Floor{WriteRoots: []string{w.home}, DenyRead: []string{filepath.Join(w.home, ".aws")}}
		if r := w.run(cfg); r.code == 0 {
			t.Errorf("%s: exit 0 (stdout %q)", script, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(w.home, ".aws", "credentials")); err != nil {
		t.Errorf("the credential moved: %v", err)
	}
}

// A caller signalled more often than a decision takes still hears its answer, and the request is decided once: the
// bootstrap's exec (Go preempts it with a signal every 10 ms) and a program on a 1 ms interval timer, each decided in
// 150 ms. Before WAIT_KILLABLE_RECV each signal restarted the system call as a new notification, and a slow decider
// (the race detector on a loaded machine) never answered one in time: veto exec hung (CI's TestScripts/exec).
func TestSignalledCallerHearsItsAnswer(t *testing.T) {
	w := newWorld(t)
	py := `import os, signal
signal.signal(signal.SIGALRM, lambda *a: None)
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
try:
    open(os.path.join(os.environ["HOME"], "work", "slow.txt"), "w")
    said = "opened"
except PermissionError:
    said = "refused"
signal.setitimer(signal.ITIMER_REAL, 0)
print(said)
`
	slow := filepath.Join(w.work, "slow.txt")
	var mu sync.Mutex
	asked := map[string]int{}
	cfg := w.config("python3", "-c", py)
	cfg.Decide = func(r Request) Verdict {
		key := ""
		switch {
		case r.Kind == Exec && strings.HasPrefix(filepath.Base(r.Path), "python3"):
			key = "exec"
		case r.Kind == Open && r.Path == slow:
			key = "open"
		default:
			return w.decide(r)
		}
		mu.Lock()
		asked[key]++
		mu.Unlock()
		time.Sleep(150 * time.Millisecond)
		if key == "open" {
			return Verdict{Rule: "test.slow", Reason: "slow_refusal"}
		}
		return Verdict{Allow: true}
	}
	r := w.run(cfg)
	if r.code != 0 || r.stdout != "refused\n" {
		t.Fatalf("got %d %q %q", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["exec"] != 1 || asked["open"] != 1 {
		t.Errorf("decided the exec %d times and the open %d times, want once each", asked["exec"], asked["open"])
	}
	if _, err := os.Stat(slow); !os.IsNotExist(err) {
		t.Errorf("the refused file was created: %v", err)
	}
}
