//go:build linux && amd64

package supervise

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperLoop is the test binary run as a workload (SUPERVISE_TEST_HELPER=loop): SUPERVISE_LOOP is "open N PATH"
// (open and close PATH N times) or "exec N PATH" (execve PATH, which fails, N times). It prints the p50, p90 and
// mean of one system call in ns.
func helperLoop() {
	f := strings.Fields(os.Getenv("SUPERVISE_LOOP"))
	n, _ := strconv.Atoi(f[1])
	path := f[2]
	d := make([]time.Duration, n)
	argv := []string{path}
	for i := range d {
		t0 := time.Now()
		switch f[0] {
		case "open":
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
		case "exec":
			unix.Exec(path, argv, nil)
		}
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	fmt.Printf("%d %d %d\n", d[n/2].Nanoseconds(), d[n*9/10].Nanoseconds(), (sum / time.Duration(n)).Nanoseconds())
	os.Exit(0)
}

// fastDecider is what a decider that filters fast costs: a prefix test and a counter.
func fastDecider(home string, count *atomic.Int64) func(Request) Verdict {
	aws := filepath.Join(home, ".aws") + "/"
	return func(r Request) Verdict {
		count.Add(1)
		if r.Kind == Open && strings.HasPrefix(r.Path, aws) {
			return Verdict{Rule: "bench", Reason: "credential_read"}
		}
		return Verdict{Allow: true}
	}
}

// bare runs argv without the supervisor, in a new network namespace all the same.
func bare(b *testing.B, w *world, argv []string, env []string) (string, time.Duration) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, w.work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%q: %v", argv, err)
	}
	return out.String(), time.Since(t0)
}

func supervised(b *testing.B, w *world, argv []string, env []string, count *atomic.Int64) (string, time.Duration) {
	var out bytes.Buffer
	cfg := Config{Argv: argv, Env: env, Dir: w.work, Stdout: &out, Stderr: os.Stderr, NetNS: true,
		Decide: fastDecider(w.home, count)}
	t0 := time.Now()
	code, err := Run(b.Context(), cfg)
	if err != nil || code != 0 {
		b.Fatalf("%q: %d %v", argv, code, err)
	}
	return out.String(), time.Since(t0)
}

func newBenchWorld(b *testing.B) *world {
	if os.Geteuid() != 0 || !Probe().UserNotif {
		b.Skip("needs root and seccomp user notification")
	}
	home := b.TempDir()
	w := &world{home: home, work: filepath.Join(home, "work")}
	os.MkdirAll(filepath.Join(home, "work", "files"), 0o755)
	os.MkdirAll(filepath.Join(home, ".aws"), 0o755)
	os.WriteFile(filepath.Join(home, "work", "notes.txt"), []byte("notes\n"), 0o644)
	w.env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C"}
	return w
}

// benchLoop measures one system call's p50 from inside the workload, with and without the supervisor, and
// reports the difference as the cost of deciding it.
func benchLoop(b *testing.B, mode string) {
	w := newBenchWorld(b)
	path := filepath.Join(w.work, "notes.txt")
	n := max(b.N, 1000)
	env := append(slices.Clone(w.env), "SUPERVISE_TEST_HELPER=loop", fmt.Sprintf("SUPERVISE_LOOP=%s %d %s", mode, n, path))
	argv := []string{os.Args[0], "-test.run=^$"}
	parse := func(s string) (p50, p90, mean float64) {
		fmt.Sscan(s, &p50, &p90, &mean)
		return
	}
	b.ResetTimer()
	var count atomic.Int64
	outS, _ := supervised(b, w, argv, env, &count)
	outB, _ := bare(b, w, argv, env)
	b.StopTimer()
	s50, s90, smean := parse(outS)
	b50, _, _ := parse(outB)
	b.ReportMetric(s50, "p50-ns/"+mode)
	b.ReportMetric(s90, "p90-ns/"+mode)
	b.ReportMetric(b50, "p50-ns/"+mode+"-bare")
	b.ReportMetric(s50-b50, "p50-ns/decided-"+mode)
	b.ReportMetric(smean, "mean-ns/"+mode)
	b.ReportMetric(0, "ns/op")
	if count.Load() < int64(n) {
		b.Errorf("%d decisions for %d calls", count.Load(), n)
	}
}

func BenchmarkDecidedOpen(b *testing.B) { benchLoop(b, "open") }
func BenchmarkDecidedExec(b *testing.B) { benchLoop(b, "exec") }

// BenchmarkBuildLike runs hundreds of short processes (300 /bin/true, then 300 cat of small files) with and
// without the supervisor and reports the ratio of wall time, and of CPU time (the supervisor's and the command's
// against the command's alone: on a loaded machine each round trip to the supervisor waits for a CPU twice, which
// the wall-time ratio shows and the CPU ratio does not).
func BenchmarkBuildLike(b *testing.B) {
	w := newBenchWorld(b)
	for i := range 300 {
		os.WriteFile(filepath.Join(w.work, "files", fmt.Sprintf("f%03d.c", i)), []byte("int x;\n"), 0o644)
	}
	for _, c := range []struct{ name, script string }{
		{"true", "for i in $(seq 300); do /bin/true; done; echo done"},
		{"cat", "for f in files/*; do cat \"$f\"; done | wc -l"},
	} {
		b.Run(c.name, func(b *testing.B) {
			argv := []string{"sh", "-c", c.script}
			var sup, bar, supCPU, barCPU time.Duration
			var count atomic.Int64
			for range b.N {
				c0 := cpu()
				o1, d1 := supervised(b, w, argv, w.env, &count)
				c1 := cpu()
				o2, d2 := bare(b, w, argv, w.env)
				c2 := cpu()
				supCPU += c1 - c0
				barCPU += c2 - c1
				if o1 != o2 {
					b.Fatalf("outputs differ: %q %q", o1, o2)
				}
				sup += d1
				bar += d2
			}
			b.ReportMetric(float64(sup.Milliseconds())/float64(b.N), "ms/supervised")
			b.ReportMetric(float64(bar.Milliseconds())/float64(b.N), "ms/bare")
			b.ReportMetric(float64(sup)/float64(bar), "ratio")
			b.ReportMetric(float64(supCPU)/float64(barCPU), "cpu-ratio")
			b.ReportMetric(float64(count.Load())/float64(b.N), "decisions/run")
		})
	}
}

// cpu is the CPU time this process and its reaped children have used: the supervisor's and the command's, or the
// command's alone for a bare run (the test's own share between two calls is small).
func cpu() time.Duration {
	var self, kids unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &self)
	unix.Getrusage(unix.RUSAGE_CHILDREN, &kids)
	tv := func(t unix.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
