// Command mutate is veto's mutation tester. It applies one mutation at a
// time to the non-test Go files of a package, runs `go test` on that package
// (and any other packages named to cover it) with the mutated file
// substituted through `go test -overlay`, and reports each mutant as killed
// (a test failed), survived (every test passed), timeout (the run took
// longer than the limit) or not viable (the mutant does not compile). The
// work tree is never written: each mutant lives in a temporary directory
// that is removed on exit, also on an interrupt.
//
// Usage:
//
//	go run ./internal/mutate [-timeout 60s] [-test ./memstore,./sqlite] [-sample n [-offset k]] [-list] [-only id] ./eventlog
//	go run ./internal/mutate -listed internal/mutate/listed.json [-only E11,E9]
//
// It is a main package of its own; neither veto nor veto-hook links it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "limit of one mutant's `go test` run")
	tests := flag.String("test", "", "comma-separated extra packages whose tests cover the mutated package")
	list := flag.Bool("list", false, "list the mutants and exit")
	only := flag.String("only", "", "comma-separated mutant ids to run (as listed by -list)")
	file := flag.String("file", "", "regexp: mutate only files whose base name matches")
	run := flag.String("run", "", "passed to go test -run")
	verbose := flag.Bool("v", false, "print each mutant's result as it is known")
	sample := flag.Int("sample", 1, "run every n-th mutant only (a bounded estimate; 1 runs all)")
	offset := flag.Int("offset", 0, "with -sample n: start at this mutant (0 to n-1), for another sample of the same size")
	keep := flag.String("overlay", "", "with one -only id: write that mutant's overlay to this file and exit (for running tests by hand)")
	listed := flag.String("listed", "", "run the hand-made mutations of this JSON file, each against its own test (-only: ids starting so), instead of a package's")
	flag.Parse()
	if *listed != "" {
		ls, err := loadListed(*listed)
		if err != nil {
			fatal(err)
		}
		tmp, err := os.MkdirTemp("", "veto-mutate-")
		if err != nil {
			fatal(err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		bad := runListed(ctx, ls, *only, tmp, *timeout)
		stop()
		os.RemoveAll(tmp)
		if bad > 0 {
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mutate [flags] ./package")
		os.Exit(2)
	}
	pkg := flag.Arg(0)
	dir, err := filepath.Abs(pkg)
	if err != nil {
		fatal(err)
	}
	var fileRE *regexp.Regexp
	if *file != "" {
		fileRE = regexp.MustCompile(*file)
	}
	mutants, err := collect(dir, fileRE)
	if err != nil {
		fatal(err)
	}
	if *only != "" {
		want := map[string]bool{}
		for _, id := range strings.Split(*only, ",") {
			want[strings.TrimSpace(id)] = true
		}
		var kept []Mutant
		for _, m := range mutants {
			if want[m.ID()] {
				kept = append(kept, m)
			}
		}
		mutants = kept
	}
	if *sample > 1 {
		var kept []Mutant
		for i, m := range mutants {
			if i%*sample == *offset {
				kept = append(kept, m)
			}
		}
		mutants = kept
	}
	if *list {
		for _, m := range mutants {
			fmt.Printf("%s\t%s\n", m.ID(), m.Desc)
		}
		return
	}

	tmp, err := os.MkdirTemp("", "veto-mutate-")
	if err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer os.RemoveAll(tmp)

	if *keep != "" {
		if len(mutants) != 1 {
			fatal(errors.New("-overlay needs exactly one mutant chosen with -only"))
		}
		abs, _ := filepath.Abs(*keep)
		if err := writeOverlay(mutants[0], filepath.Dir(abs), abs); err != nil {
			fatal(err)
		}
		fmt.Println(abs)
		return
	}

	pkgs := []string{pkg}
	for _, p := range strings.Split(*tests, ",") {
		if p = strings.TrimSpace(p); p != "" {
			pkgs = append(pkgs, p)
		}
	}
	start := time.Now()
	counts := map[Status]int{}
	var survivors []Mutant
	for i, m := range mutants {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "interrupted")
			break
		}
		st := runOne(ctx, m, tmp, i, pkgs, *timeout, *run)
		if ctx.Err() != nil {
			break
		}
		counts[st]++
		if st == Survived {
			survivors = append(survivors, m)
		}
		if *verbose {
			fmt.Fprintf(os.Stderr, "[%d/%d] %-10s %s %s\n", i+1, len(mutants), st, m.ID(), m.Desc)
		}
	}
	report(pkg, pkgs, counts, survivors, time.Since(start))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(1)
}

// Status is the fate of one mutant.
type Status string

const (
	Killed    Status = "killed"
	Survived  Status = "survived"
	Timeout   Status = "timeout"
	NotViable Status = "not-viable"
)

func writeOverlay(m Mutant, tmp, overlay string) error {
	mutated := filepath.Join(tmp, "mutant-"+filepath.Base(m.File))
	if err := os.WriteFile(mutated, m.Source, 0o600); err != nil {
		return err
	}
	b, err := json.Marshal(map[string]map[string]string{"Replace": {m.File: mutated}})
	if err != nil {
		return err
	}
	return os.WriteFile(overlay, b, 0o600)
}

var buildFailed = regexp.MustCompile(`(?m)\[(build|setup) failed\]|^# [^\n]+\n.*\.go:\d+:\d+: |vet: `)

func runOne(ctx context.Context, m Mutant, tmp string, i int, pkgs []string, limit time.Duration, run string) Status {
	overlay := filepath.Join(tmp, fmt.Sprintf("overlay-%d.json", i))
	if err := writeOverlay(m, tmp, overlay); err != nil {
		fatal(err)
	}
	defer os.Remove(overlay)
	defer os.Remove(filepath.Join(tmp, "mutant-"+filepath.Base(m.File)))

	// Compile first, so that a mutant that does not build is told apart
	// from one a test kills.
	bctx, bcancel := context.WithTimeout(ctx, limit)
	defer bcancel()
	build := exec.CommandContext(bctx, "go", "build", "-overlay="+overlay, "-o", os.DevNull, pkgs[0])
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		if bctx.Err() != nil {
			return Timeout
		}
		_ = out
		return NotViable
	}
	// No symbol table or DWARF: linking the test binary is most of a
	// mutant's cost, and nothing here reads them.
	args := []string{"test", "-overlay=" + overlay, "-count=1", "-failfast", "-vet=off", "-ldflags=-s -w",
		"-timeout=" + limit.String()}
	if run != "" {
		args = append(args, "-run="+run)
	}
	args = append(args, pkgs...)
	tctx, cancel := context.WithTimeout(ctx, limit+15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	switch {
	case err == nil:
		return Survived
	case tctx.Err() != nil || strings.Contains(out.String(), "panic: test timed out"):
		return Timeout
	case buildFailed.MatchString(out.String()) && !strings.Contains(out.String(), "--- FAIL"):
		// A test package that no longer compiles against the mutant
		// (a removed declaration, say) is not a test's verdict.
		return NotViable
	default:
		return Killed
	}
}

func report(pkg string, pkgs []string, c map[Status]int, survivors []Mutant, took time.Duration) {
	k, s, t, n := c[Killed], c[Survived], c[Timeout], c[NotViable]
	share := 0.0
	if k+s+t > 0 {
		share = 100 * float64(k+t) / float64(k+s+t)
	}
	fmt.Printf("package %s (tests: %s)\n", pkg, strings.Join(pkgs, " "))
	fmt.Printf("  killed %d, timeout %d, survived %d, not viable %d; killed share %.1f%% (killed+timeout)/(killed+timeout+survived); %s\n",
		k, t, s, n, share, took.Round(time.Second))
	sort.SliceStable(survivors, func(i, j int) bool { return survivors[i].ID() < survivors[j].ID() })
	for _, m := range survivors {
		fmt.Printf("  survived %s\t%s\n", m.ID(), m.Desc)
	}
}
