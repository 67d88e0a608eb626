package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Listed is a hand-made mutation: one textual replacement in one file,
// and the test that must fail on it. A listed file (-listed) holds a JSON
// array of them; each is run as a mutant of its own, against its test
// only.
type Listed struct {
	ID   string `json:"id"`   // the invariant and a letter, as E11a
	What string `json:"what"` // the mutation, in words
	File string `json:"file"` // relative to the module root
	From string `json:"from"` // text that occurs exactly once in File
	To   string `json:"to"`
	Test string `json:"test"` // the test that must fail, as TestX or TestX/sub
	Pkg  string `json:"pkg"`  // the package holding Test, as ./eventlog
}

func loadListed(path string) ([]Listed, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ls []Listed
	if err := json.Unmarshal(b, &ls); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ls, nil
}

// runListed runs each listed mutation whose id starts with one of only
// (all when only is empty) and reports whether its test failed on it.
// It returns the number of mutations no test failed on (or that could
// not be applied).
func runListed(ctx context.Context, ls []Listed, only string, tmp string, limit time.Duration) int {
	bad := 0
	for i, l := range ls {
		if only != "" && !matchesAny(l.ID, strings.Split(only, ",")) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		st, detail := runOneListed(ctx, l, tmp, i, limit)
		if st != Killed && st != Timeout {
			bad++
		}
		fmt.Printf("%-6s %-10s %s by %s (%s)%s\n", l.ID, st, l.What, l.Test, l.Pkg, detail)
	}
	return bad
}

func matchesAny(id string, prefixes []string) bool {
	for _, p := range prefixes {
		if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(id, p) {
			return true
		}
	}
	return false
}

func runOneListed(ctx context.Context, l Listed, tmp string, i int, limit time.Duration) (Status, string) {
	file, err := filepath.Abs(l.File)
	if err != nil {
		return NotViable, ": " + err.Error()
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return NotViable, ": " + err.Error()
	}
	if n := bytes.Count(src, []byte(l.From)); n != 1 {
		return NotViable, fmt.Sprintf(": the text to replace occurs %d times in %s", n, l.File)
	}
	m := Mutant{File: file, Source: bytes.Replace(src, []byte(l.From), []byte(l.To), 1)}
	overlay := filepath.Join(tmp, fmt.Sprintf("listed-%d.json", i))
	if err := writeOverlay(m, tmp, overlay); err != nil {
		return NotViable, ": " + err.Error()
	}
	defer os.Remove(overlay)
	defer os.Remove(filepath.Join(tmp, "mutant-"+filepath.Base(file)))
	build := exec.CommandContext(ctx, "go", "build", "-overlay="+overlay, "-o", os.DevNull, "./"+filepath.Dir(l.File))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return NotViable, ": does not build: " + firstLine(string(out))
	}
	run := "^" + strings.ReplaceAll(l.Test, "/", "$/^") + "$"
	tctx, cancel := context.WithTimeout(ctx, limit+15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", "test", "-overlay="+overlay, "-count=1", "-vet=off", "-ldflags=-s -w",
		"-timeout="+limit.String(), "-run="+run, l.Pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	switch {
	case err == nil && strings.Contains(out.String(), "no tests to run"):
		return NotViable, ": the test does not exist"
	case err == nil:
		return Survived, ""
	case tctx.Err() != nil || strings.Contains(out.String(), "panic: test timed out"):
		return Timeout, ""
	case !strings.Contains(out.String(), "--- FAIL: "+strings.SplitN(l.Test, "/", 2)[0]):
		return NotViable, ": the test package failed otherwise: " + firstLine(out.String())
	}
	return Killed, ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
