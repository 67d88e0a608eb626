package presence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       stat
		err        bool
	}{
		{"plain", "42 (bash) S 7 42 42 34816 42 4194560 1 2 3 4 5 6 7 8 20 0 1 0 123456 1 2", stat{pid: 42, ppid: 7, comm: "bash", tty: 34816, start: 123456}, false},
		{"name with ) and spaces", "9 (a) b (c) R 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 1 2", stat{pid: 9, ppid: 1, comm: "a) b (c", start: 77}, false},
		{"no terminal is 0", "5 (x) S 2 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0", stat{pid: 5, ppid: 2, comm: "x", start: 9}, false},
		{"truncated", "5 (x) S 2 5", stat{}, true},
		{"no parentheses", "5 x S 2 5 5 0", stat{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.line)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("parseStat = %+v, %v; want %+v, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestPtsIndex(t *testing.T) {
	for _, tc := range []struct {
		dev  uint64
		idx  int
		isPt bool
	}{
		{136<<8 | 0, 0, true},
		{136<<8 | 5, 5, true},
		{137<<8 | 1, 257, true},
		{136<<8 | (0x1000 << 12), 4096, true}, // minor's high bits
		{4<<8 | 1, 0, false},                  // /dev/tty1
		{0, 0, false},
	} {
		idx, ok := ptsIndex(tc.dev)
		if idx != tc.idx || ok != tc.isPt {
			t.Errorf("ptsIndex(%#x) = %d %v, want %d %v", tc.dev, idx, ok, tc.idx, tc.isPt)
		}
	}
}

// clean: a name from the state cannot move the cursor or rewrite the
// prompt.
func TestCleanDropsControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"Bash":                   "Bash",
		"c1\x1b[2K\rapprove c9":  "c1?[2K?approve c9",
		"tab\there\nnewline":     "tab?here?newline",
		"\u009b31m":              "?31m",
		strings.Repeat("x", 300): strings.Repeat("x", 200) + "…",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeProc writes a procfs of the given processes (pid → "ppid comm
// start") under a temporary directory.
func fakeProc(t *testing.T, ps map[int]string) proc {
	root := t.TempDir()
	for pid, s := range ps {
		var ppid int
		var comm string
		var start uint64
		fmt.Sscanf(s, "%d %s %d", &ppid, &comm, &start)
		dir := filepath.Join(root, fmt.Sprint(pid))
		os.MkdirAll(dir, 0o755)
		line := fmt.Sprintf("%d (%s) S %d 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, ppid, start)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte("22 1 0:21 / / rw - ext4 /dev/root rw\n"), 0o644)
	return proc{root: root}
}

// The client a hook notes is its nearest ancestor that is not a shell or
// veto's own program; never PID 1, and nothing when veto's program started
// the hook (veto doctor's probe, which noted the person's terminal).
func TestNoteFindsTheClient(t *testing.T) {
	p := fakeProc(t, map[int]string{
		1:  "0 init 1",
		10: "1 claude 100",
		11: "10 sh 110",
		12: "11 veto-hook 120",
		13: "12 veto 130",
		20: "1 bash 200", // a login shell under init
		21: "20 veto 210",
		// veto doctor, run from a person's shell in a terminal, probes
		// veto-hook: the terminal is no client.
		30: "1 tmux 300",
		31: "30 bash 310",
		32: "31 veto 320",      // veto doctor
		33: "32 veto-hook 330", // its probe
		34: "33 veto 340",      // veto hook, handed the probe's event
		35: "32 sh 350",        // a probe through a shell
		36: "35 veto-hook 360",
	})
	for _, tc := range []struct {
		from   int
		want   int
		noting bool
	}{
		{13, 10, true}, // veto hook under veto-hook under sh under claude
		{12, 10, true}, // veto-hook, seen on the server's socket
		{10, 10, true},
		{21, 0, false}, // run by hand from a shell under init: nothing
		{34, 0, false}, // veto doctor's probe: veto started the hook
		{33, 0, false},
		{36, 0, false},
	} {
		reg := registry{dirs: []string{filepath.Join(t.TempDir(), "veto", "clients")}, proc: p}
		os.MkdirAll(filepath.Dir(reg.dirs[0]), 0o700)
		if err := reg.note(tc.from, "claude-code"); err != nil {
			t.Fatalf("note from %d: %v", tc.from, err)
		}
		live, err := reg.live()
		if err != nil {
			t.Fatal(err)
		}
		_, ok := live[tc.want]
		if ok != tc.noting || (!tc.noting && len(live) != 0) {
			t.Errorf("from %d: live %v, want %d noted: %v", tc.from, live, tc.want, tc.noting)
		}
	}
}

// An entry whose start time or boot differs is a process that is gone
// (its PID reused): not live, and pruned when a client is noted.
func TestStaleEntriesAreNotLive(t *testing.T) {
	p := fakeProc(t, map[int]string{1: "0 init 1", 10: "1 claude 100", 30: "1 node 300"})
	os.MkdirAll(filepath.Join(p.root, "sys", "kernel", "random"), 0o755)
	os.WriteFile(filepath.Join(p.root, "sys", "kernel", "random", "boot_id"), []byte("boot-b\n"), 0o644)
	dir := filepath.Join(t.TempDir(), "veto", "clients")
	os.MkdirAll(dir, 0o700)
	os.Chmod(filepath.Dir(dir), 0o700)
	reg := registry{dirs: []string{dir}, proc: p}
	write := func(pid int, start uint64, boot string) {
		e := entry{PID: pid, Start: start, Comm: "claude", Boot: boot}
		if err := reg.write(dir, e); err != nil {
			t.Fatal(err)
		}
	}
	write(10, 99, "boot-b")  // PID reused: start differs
	write(30, 300, "boot-a") // an earlier boot
	write(40, 400, "boot-b") // gone
	live, err := reg.live()
	if err != nil || len(live) != 0 {
		t.Fatalf("live = %v, %v; want none", live, err)
	}
	write(10, 100, "boot-b")
	live, err = reg.live()
	if err != nil || len(live) != 1 || live[10].Start != 100 {
		t.Fatalf("live = %v, %v; want process 10", live, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "10-100" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("after noting, the registry holds %v; want only 10-100", names)
	}
}

// A registry that another user could write, or that lies under a FUSE
// mount, is refused: its emptiness proves nothing.
func TestUntrustedRegistryIsRefused(t *testing.T) {
	p := fakeProc(t, map[int]string{1: "0 init 1"})
	base := t.TempDir()
	dir := filepath.Join(base, "veto", "clients")
	os.MkdirAll(dir, 0o700)
	os.Chmod(filepath.Join(base, "veto"), 0o700)
	reg := registry{dirs: []string{dir}, proc: p}
	if _, err := reg.live(); err != nil {
		t.Fatalf("a private registry: %v", err)
	}
	os.Chmod(dir, 0o777)
	if _, err := reg.live(); err == nil || !strings.Contains(err.Error(), "no one else can enter") {
		t.Fatalf("a registry others may write: %v", err)
	}
	os.Chmod(dir, 0o700)
	mi := fmt.Sprintf("22 1 0:21 / / rw - ext4 /dev/root rw\n90 22 0:50 / %s rw,nosuid - fuse.sshfs host: rw\n", strings.ReplaceAll(filepath.Join(base, "veto"), " ", `\040`))
	os.WriteFile(filepath.Join(p.root, "self", "mountinfo"), []byte(mi), 0o644)
	if _, err := reg.live(); err == nil || !strings.Contains(err.Error(), "FUSE") {
		t.Fatalf("a registry under a FUSE mount: %v", err)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/a\040b\011c`); got != "/a b\tc" {
		t.Fatalf("unescapeMount = %q", got)
	}
}

// BenchmarkNoteNoted is the hook's cost on every call once its client is
// noted: the walk up to the client and one stat of its entry.
func BenchmarkNoteNoted(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "veto", "clients")
	os.MkdirAll(filepath.Dir(dir), 0o700)
	reg := registry{dirs: []string{dir}, proc: proc{root: "/proc"}}
	if err := reg.note(os.Getpid(), "bench"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := reg.note(os.Getpid(), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckCaller is the ancestry check of Prove: the registry read
// and the walk to PID 1.
func BenchmarkCheckCaller(b *testing.B) {
	c := checker{reg: defaultRegistry()}
	for b.Loop() {
		if err := c.caller(); err != nil {
			b.Fatal(err)
		}
	}
}

// A guarded process whose descriptors cannot be read at one look (as
// while it starts or ends) is looked at again: the refusal stands only
// when every look fails, and a master held is refused at the first.
func TestTerminalLooksAgainAtAnUnreadableHolder(t *testing.T) {
	self := os.Getpid()
	for _, tc := range []struct {
		name     string
		readable int // the look (1-based) from which the holder's descriptors read; 0 never
		holds    bool
		reason   string
		looks    int
	}{
		{"readable at the second look", 2, false, "", 2},
		{"readable at the third look", 3, false, "", 3},
		{"never readable", 0, false, "failed", 3},
		{"holds the master", 1, true, "agent_terminal", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeProc(t, map[int]string{1: "0 init 1", 10: "1 claude 100", 11: "10 node 110"})
			// This process, on /dev/pts/5 (major 136).
			dir := filepath.Join(p.root, fmt.Sprint(self))
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "stat"), []byte(fmt.Sprintf("%d (veto) S 1 1 1 %d -1 0 0 0 0 0 0 0 0 0 20 0 1 0 900 0 0\n", self, 136<<8|5)), 0o644)
			reg := registry{dirs: []string{filepath.Join(t.TempDir(), "veto", "clients")}, proc: p}
			os.MkdirAll(filepath.Dir(reg.dirs[0]), 0o700)
			if err := reg.note(10, "claude-code"); err != nil {
				t.Fatal(err)
			}
			fd := filepath.Join(p.root, "11", "fd")
			readable := func() {
				os.Remove(fd)
				os.MkdirAll(fd, 0o755)
				if tc.holds {
					os.Symlink("/dev/ptmx", filepath.Join(fd, "7"))
					os.MkdirAll(filepath.Join(p.root, "11", "fdinfo"), 0o755)
					os.WriteFile(filepath.Join(p.root, "11", "fdinfo", "7"), []byte("pos:\t0\nflags:\t02\ntty-index:\t5\n"), 0o644)
				}
			}
			os.WriteFile(fd, nil, 0o644) // not a directory: ReadDir fails
			looks := 1
			if tc.readable == 1 {
				readable()
			}
			c := checker{reg: reg, pause: func() {
				looks++
				if looks == tc.readable {
					readable()
				}
			}}
			err := c.terminal()
			var r *Refusal
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && (!errors.As(err, &r) || r.Reason != tc.reason):
				t.Fatalf("got %v, want the refusal %s", err, tc.reason)
			}
			if looks != tc.looks {
				t.Errorf("%d looks, want %d", looks, tc.looks)
			}
		})
	}
}
