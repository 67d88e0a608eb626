// Command bench measures what a hook costs an agent per tool call, whole
// process, side by side in one interleaved run: (a) the floor program,
// (b) veto-hook claude-code as veto init registers it, with durable state
// and the server it starts on demand, (b') veto-hook with no server (every
// event handed to veto hook), (b”) veto hook claude-code itself, (c)
// cc-safety-net from npm when it is installed, and (d) the floors of a
// hook a server answers: the floor's work and a Unix socket round trip to
// a server that answers at once (floorask, floorserve), or that first
// commits one row in SQLite, or that records the event as veto does with
// nothing decided (veto's gate with no rule), and the floor of a hook that
// commits that row itself (floorcommit); on the same mix of Claude Code
// PreToolUse events (Bash, Read, Edit).
//
//	go run ./bench [-rounds 60] [-ccsn path/to/cc-safety-net.js] [-before DIR]
//
// -before names a directory holding another build's veto and veto-hook
// (an older one): it then runs as a contender too, with a server and a
// state of its own, between the others, so that before and after come
// from one interleaved run on a machine whose speed moves between runs.
//
// cc-safety-net: npm install --prefix bench/node cc-safety-net@2.4.5 (the
// harness looks there by default).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 60, "rounds; each runs every event through every contender")
	ccsn := flag.String("ccsn", "bench/node/node_modules/cc-safety-net/dist/bin/cc-safety-net.js", "cc-safety-net's script (skipped when missing)")
	before := flag.String("before", "", "a directory with another build's veto and veto-hook, measured beside this one")
	flag.Parse()
	if err := run(*rounds, *ccsn, *before); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type contender struct {
	name string
	argv []string
	env  []string
	runs []time.Duration
	cpu  time.Duration // the runs' own CPU time (user and system)
	// server, when set, is the hook server's process: the CPU it spends
	// during this contender's runs is summed in serverCPU.
	server    int
	serverCPU time.Duration
}

func run(rounds int, ccsn, before string) error {
	tmp, err := os.MkdirTemp("", "veto-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bin")
	for _, b := range []struct{ out, pkg string }{{"floor", "./bench/floor"}, {"floorask", "./bench/floorask"}, {"floorserve", "./bench/floorserve"}, {"floorcommit", "./bench/floorcommit"}, {"veto", "./cmd/veto"}, {"veto-hook", "./cmd/veto-hook"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bin, b.out), b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b.pkg, err)
		}
	}
	ws := filepath.Join(tmp, "ws")
	for _, d := range []string{".git", "src"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	events := eventsFor(ws)
	state := filepath.Join(tmp, "state", "veto.db")
	// The server's state is its own, as a user's is: a state another
	// process writes between its answers (veto hook, the contenders below)
	// is proved again, and reopened, at the server's next answer.
	served := filepath.Join(tmp, "state", "served.db")
	// Every contender runs in a HOME of its own, as a user's first session
	// would: no settings or policy of this machine's user is read, and the
	// server veto-hook starts keeps its state here.
	home := filepath.Join(tmp, "home")
	for _, d := range []string{home, filepath.Join(tmp, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	sandbox = []string{"HOME=" + home, "TMPDIR=" + filepath.Join(tmp, "tmp"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_RUNTIME_DIR=", "VETO_MANAGED_POLICY=" + filepath.Join(tmp, "managed.yaml")}
	// veto-hook starts the server itself on the first call, as it does for
	// a user; removing tmp at the end removes its socket and ends it.
	sock := filepath.Join(tmp, "run", "hook.sock")
	cs := []*contender{
		{name: "floor (decode JSON, exit)", argv: []string{filepath.Join(bin, "floor")}},
		{name: "veto-hook claude-code", argv: []string{filepath.Join(bin, "veto-hook"), "claude-code"}, env: []string{"VETO_STATE=" + served, "VETO_SOCKET=" + sock}},
		{name: "veto-hook, no server", argv: []string{filepath.Join(bin, "veto-hook"), "claude-code"}, env: []string{"VETO_STATE=" + state, "VETO_NO_SERVER=1"}},
		{name: "veto hook claude-code (full)", argv: []string{filepath.Join(bin, "veto"), "hook", "claude-code"}, env: []string{"VETO_STATE=" + state}},
	}
	// The floors of a hook a server answers (floorask, floorserve): the
	// floor's work and one round trip over a Unix socket to a server
	// that answers at once, or that first commits one row in SQLite with
	// veto's settings; and of a hook that records alone (floorcommit):
	// the floor's work and that row committed in its own process. Nothing
	// that hands its event to a server, or records it in SQLite itself,
	// costs less.
	asked := []*contender{
		{name: "floor + a server's answer", argv: []string{filepath.Join(bin, "floorask"), filepath.Join(tmp, "run", "floor.sock")}},
		{name: "floor + a server's commit", argv: []string{filepath.Join(bin, "floorask"), filepath.Join(tmp, "run", "floor-db.sock")}},
		{name: "floor + a server's veto record", argv: []string{filepath.Join(bin, "floorask"), filepath.Join(tmp, "run", "floor-rec.sock")}},
		{name: "floor + its own commit", argv: []string{filepath.Join(bin, "floorcommit"), filepath.Join(tmp, "floor-own.db")}},
	}
	if err := os.MkdirAll(filepath.Join(tmp, "run"), 0o700); err != nil {
		return err
	}
	for i, args := range [][]string{{filepath.Join(tmp, "run", "floor.sock")}, {filepath.Join(tmp, "run", "floor-db.sock"), filepath.Join(tmp, "floor.db")},
		{filepath.Join(tmp, "run", "floor-rec.sock"), filepath.Join(tmp, "floor-rec.db"), "record"}} {
		srv := exec.Command(filepath.Join(bin, "floorserve"), args...)
		srv.Stderr = os.Stderr
		if err := srv.Start(); err != nil {
			return err
		}
		defer func() { srv.Process.Kill(); srv.Wait() }()
		asked[i].server = srv.Process.Pid
		for tries := 0; ; tries++ {
			if _, err := os.Stat(args[0]); err == nil {
				break
			}
			if tries == 100 {
				return fmt.Errorf("floorserve %v did not listen", args)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The other build, with a server and a state of its own (its
	// veto-hook hands events to the veto beside it).
	var prior *contender
	beforeSock := filepath.Join(tmp, "run", "hook-before.sock")
	if before != "" {
		dir, err := filepath.Abs(before)
		if err != nil {
			return err
		}
		for _, f := range []string{"veto", "veto-hook"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("-before: %w", err)
			}
		}
		prior = &contender{name: "veto-hook (before)", argv: []string{filepath.Join(dir, "veto-hook"), "claude-code"},
			env: []string{"VETO_STATE=" + filepath.Join(tmp, "state", "served-before.db"), "VETO_SOCKET=" + beforeSock}}
	}
	if abs, err := filepath.Abs(ccsn); err == nil {
		ccsn = abs
	}
	if _, err := os.Stat(ccsn); err == nil {
		if node, err := exec.LookPath("node"); err == nil {
			cs = append(cs, &contender{name: "cc-safety-net 2.4.5 (node)", argv: []string{node, ccsn, "hook", "--coding-cli"}})
		}
	} else {
		fmt.Fprintf(os.Stderr, "bench: %s not found; cc-safety-net skipped (npm install --prefix bench/node cc-safety-net@2.4.5)\n", ccsn)
	}
	cs = append(cs, asked...)
	// The other build runs next to this one, first in every other round,
	// so that neither always follows the same contender.
	order, swapped := cs, cs
	if prior != nil {
		order = append([]*contender{cs[0], cs[1], prior}, cs[2:]...)
		swapped = append([]*contender{cs[0], prior, cs[1]}, cs[2:]...)
	}
	// Open the session the way Claude Code does (this starts the server),
	// wait for the server, then warm every contender once.
	start := `{"session_id":"bench","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if _, err := once(cs[1], start, ws); err != nil {
		return fmt.Errorf("veto SessionStart: %w", err)
	}
	if _, err := once(cs[3], start, ws); err != nil {
		return fmt.Errorf("veto SessionStart: %w", err)
	}
	socks := []string{sock}
	if prior != nil {
		if _, err := once(prior, start, ws); err != nil {
			return fmt.Errorf("veto SessionStart (before): %w", err)
		}
		socks = append(socks, beforeSock)
	}
	for _, sk := range socks {
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(sk); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := os.Stat(sk); err != nil {
			return fmt.Errorf("veto-hook started no server at %s: %w", sk, err)
		}
	}
	for _, c := range order {
		for _, e := range events {
			if _, err := once(c, e, ws); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		c.runs, c.cpu, c.serverCPU = nil, 0, 0
	}
	// CPU time moves less with the machine's load than wall time does:
	// each run's own, and the server's during veto-hook's runs.
	cs[1].server = serverPID(sock)
	if prior != nil {
		prior.server = serverPID(beforeSock)
	}
	for r := 0; r < rounds; r++ {
		turn := order
		if r%2 == 1 {
			turn = swapped
		}
		for _, e := range events {
			for _, c := range turn {
				if _, err := once(c, e, ws); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
		}
	}
	fmt.Printf("%d rounds × %d events (Bash, Read, Edit PreToolUse), interleaved; whole-process wall time; load average %s\n\n", rounds, len(events), loadavg())
	fmt.Printf("%-30s %10s %10s %10s %10s %12s\n", "contender", "median", "p90", "runs", "cpu/run", "server/run")
	med := map[string]time.Duration{}
	for _, c := range order {
		m, p90 := quantile(c.runs, 0.5), quantile(c.runs, 0.9)
		med[c.name] = m
		srv := ""
		if c.server > 0 {
			srv = round(c.serverCPU / time.Duration(len(c.runs)))
		}
		fmt.Printf("%-30s %10s %10s %10d %10s %12s\n", c.name, round(m), round(p90), len(c.runs), round(c.cpu/time.Duration(len(c.runs))), srv)
	}
	floor, veto := med[cs[0].name], med[cs[1].name]
	fmt.Printf("\nveto-hook / floor                %.2f×\n", float64(veto)/float64(floor))
	if n := time.Duration(len(cs[1].runs)); n > 0 && cs[0].cpu > 0 && cs[1].server > 0 {
		fcpu := cs[0].cpu / time.Duration(len(cs[0].runs))
		fmt.Printf("veto-hook CPU, own + server's / floor's CPU  %.2f× (%s + %s, %s)\n", float64(cs[1].cpu/n+cs[1].serverCPU/n)/float64(fcpu),
			round(cs[1].cpu/n), round(cs[1].serverCPU/n), round(fcpu))
	}
	if prior != nil {
		fmt.Printf("veto-hook (before) / floor       %.2f×\n", float64(med[prior.name])/float64(floor))
		if n, pn := time.Duration(len(cs[1].runs)), time.Duration(len(prior.runs)); n > 0 && pn > 0 && prior.server > 0 {
			fmt.Printf("server CPU per call, this build / before  %s / %s\n", round(cs[1].serverCPU/n), round(prior.serverCPU/pn))
		}
	}
	fmt.Printf("veto-hook, no server / floor     %.2f×\n", float64(med[cs[2].name])/float64(floor))
	fmt.Printf("veto hook (full) / floor         %.2f×\n", float64(med[cs[3].name])/float64(floor))
	for _, a := range asked {
		fmt.Printf("%-32s %.2f×\n", a.name+" / floor", float64(med[a.name])/float64(floor))
	}
	for _, c := range cs {
		if strings.HasPrefix(c.name, "cc-safety-net") {
			fmt.Printf("cc-safety-net / veto-hook        %.1f×\n", float64(med[c.name])/float64(veto))
		}
	}
	return nil
}

func eventsFor(ws string) []string {
	ev := func(id, tool, input string) string {
		return `{"session_id":"bench","transcript_path":"/dev/null","cwd":"` + ws + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"` +
			tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `"}`
	}
	main := ws + "/src/main.go"
	return []string{
		ev("toolu_b1", "Bash", `{"command":"go test ./... 2>&1 | tail -20"}`),
		ev("toolu_r1", "Read", `{"file_path":"`+main+`"}`),
		ev("toolu_b2", "Bash", `{"command":"git status --short && git diff --stat"}`),
		ev("toolu_e1", "Edit", `{"file_path":"`+main+`","old_string":"func main() {}","new_string":"func main() {}"}`),
		ev("toolu_b3", "Bash", `{"command":"rg -n 'TODO' src | head"}`),
	}
}

// sandbox is the environment every contender runs under (run sets it).
var sandbox []string

// once runs c on one event and records its wall time. Exit 0 and 2 are
// answers (allow, deny); anything else is a failure of the harness.
func once(c *contender, event, dir string) (time.Duration, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), sandbox...), c.env...)
	cmd.Stdin = strings.NewReader(event)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	s0 := cpuOf(c.server)
	t := time.Now()
	err := cmd.Run()
	d := time.Since(t)
	c.serverCPU += cpuOf(c.server) - s0
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		err = nil
	}
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	c.runs = append(c.runs, d)
	c.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return d, nil
}

// serverPID finds the hook server listening on sock (0: none found).
func serverPID(sock string) int {
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("\x00serve-hooks\x00")) && bytes.Contains(b, []byte("\x00"+sock+"\x00")) {
			return pid
		}
	}
	return 0
}

// cpuOf is the CPU time process pid has spent (user and system, in clock
// ticks of 10 ms: read it over many runs); 0 for no process.
func cpuOf(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

// loadavg is the machine's load averages (1, 5, 15 minutes), which the
// figures depend on.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[int(q*float64(len(s)-1))]
}

func round(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
