//go:build linux && amd64

package supervise

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// The ioctl numbers computed as the kernel's headers define them agree with the ones golang.org/x/sys lists.
func TestIoctlNumbers(t *testing.T) {
	if ioctlNotifRecv != unix.SECCOMP_IOCTL_NOTIF_RECV || ioctlNotifSend != unix.SECCOMP_IOCTL_NOTIF_SEND ||
		ioctlNotifIDValid != 0x40082102 || ioctlNotifSetFlag != 0x40082104 {
		t.Errorf("recv %#x send %#x id_valid %#x", ioctlNotifRecv, ioctlNotifSend, ioctlNotifIDValid)
	}
}

func TestFilterAssembles(t *testing.T) {
	prog, err := filter()
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) > 100 {
		t.Errorf("%d instructions", len(prog))
	}
	if last := prog[len(prog)-1]; last.K != unix.SECCOMP_RET_KILL_PROCESS {
		t.Errorf("last instruction %+v", last)
	}
}

func TestProbe(t *testing.T) {
	f := Probe()
	t.Logf("%+v", f)
	if f.UserNotif && f.Landlock > 0 && f.Why != "" || (!f.UserNotif || f.Landlock == 0) && f.Why == "" {
		t.Errorf("UserNotif %v with Why %q", f.UserNotif, f.Why)
	}
}

func TestCanon(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "f"), nil, 0o644)
	os.Symlink("a/b", filepath.Join(dir, "rel"))
	os.Symlink(filepath.Join(dir, "a", "b", "f"), filepath.Join(dir, "abs"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	pid := os.Getpid()
	me := strconv.Itoa(pid)
	for _, c := range []struct {
		in     string
		follow bool
		want   string
	}{
		{dir + "/rel/f", true, dir + "/a/b/f"},
		{dir + "/rel/../x", true, dir + "/a/x"},
		{dir + "/abs", true, dir + "/a/b/f"},
		{dir + "/abs", false, dir + "/abs"},
		{dir + "/rel/", false, dir + "/a/b"},
		{dir + "/new/file", true, dir + "/new/file"},
		{dir + "/./a//b/./f", true, dir + "/a/b/f"},
		{"/proc/self/status", true, "/proc/" + me + "/status"},
		{"/proc/thread-self", false, "/proc/" + me + "/task/" + me},
		{"/../../etc", true, "/etc"},
	} {
		got, err := canon(pid, c.in, c.follow)
		if err != nil || got != c.want {
			t.Errorf("canon(%q, %v) = %q, %v; want %q", c.in, c.follow, got, err, c.want)
		}
	}
	os.Symlink("/a/b", filepath.Join(dir, "inroot"))
	for _, c := range []struct{ in, want string }{
		{"/rel/f", dir + "/a/b/f"},
		{"../../../rel/f", dir + "/a/b/f"},
		{"/inroot/f", dir + "/a/b/f"},
		{"a/../../x", dir + "/x"},
	} {
		if got, err := canonIn(pid, dir, c.in, true); err != nil || got != c.want {
			t.Errorf("canonIn(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := canon(pid, dir+"/loop", true); err == nil {
		t.Errorf("a symlink loop: no error")
	}
	if got, err := resolvePath(pid, atFdcwd, "x/y", true); err != nil || !filepath.IsAbs(got) {
		t.Errorf("relative: %q %v", got, err)
	}
}

func TestFloorOf(t *testing.T) {
	f := floorOf(&Floor{WriteRoots: []string{".", "/usr/../tmp"}, DenyRead: []string{"sub/x"}, NoTemp: true},
		[]string{"TMPDIR=/var/tmp"}, "/etc")
	if f.Write[0] != "/etc" || f.Write[1] != "/tmp" || f.DenyRead[0] != "/etc/sub/x" {
		t.Errorf("%+v", f)
	}
	for _, p := range f.Write {
		if p == "/var/tmp" {
			t.Errorf("NoTemp: %+v", f)
		}
	}
	if g := floorOf(&Floor{}, []string{"TMPDIR=/var/tmp"}, "/"); g.Write[len(g.Write)-1] != "/var/tmp" {
		t.Errorf("TMPDIR: %+v", g)
	}
}

func TestHandledByABI(t *testing.T) {
	if handledFS(1)&unix.LANDLOCK_ACCESS_FS_REFER != 0 || handledFS(2)&unix.LANDLOCK_ACCESS_FS_TRUNCATE != 0 ||
		handledFS(3)&unix.LANDLOCK_ACCESS_FS_TRUNCATE == 0 || handledFS(7)&unix.LANDLOCK_ACCESS_FS_READ_DIR != 0 {
		t.Errorf("%#x %#x %#x", handledFS(1), handledFS(2), handledFS(7))
	}
}
