// Package php_test runs the PHP library's phpunit suite (integrations/php)
// against a real veto serve: it builds veto, and the suite starts veto serve
// on a free port of 127.0.0.1 with a SQLite state and tokens of its own, in
// a throw-away HOME. It skips when php or phpunit is missing, and fails
// instead under CI (.ci/run installs Debian's php-cli, php-curl and phpunit).
package php_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// need finds a program, skipping the test without it (failing under CI).
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (Debian: apt-get install php-cli php-curl php-mbstring phpunit sqlite3); under CI the PHP library's tests must run", name)
		}
		t.Skipf("%s is not installed (Debian: apt-get install php-cli php-curl php-mbstring phpunit sqlite3)", name)
	}
	return p
}

func TestPHPLibraryAgainstVetoServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds veto and runs phpunit against veto serve")
	}
	php := need(t, "php")
	phpunit := need(t, "phpunit")
	need(t, "sqlite3") // the suite locks veto's state with it
	for _, ext := range []string{"curl", "json", "mbstring"} {
		out, err := exec.Command(php, "-r", "exit(extension_loaded('"+ext+"') ? 0 : 1);").CombinedOutput()
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("php has no %s extension (Debian: php-curl, php-mbstring): %v %s", ext, err, out)
			}
			t.Skipf("php has no %s extension", ext)
		}
	}

	dir := t.TempDir()
	veto := filepath.Join(dir, "veto")
	build := exec.Command("go", "build", "-o", veto, "github.com/vetohq/veto/cmd/veto")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, phpunit, "--configuration", "phpunit.xml")
	env := []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "VETO_BIN=" + veto}
	for _, k := range []string{"CI", "VETO_PHP_FUZZ_SECONDS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = env
	// phpunit, the veto serve instances it starts and PHP's built-in
	// server share a process group, ended together however the run ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything left behind
	}
	t.Logf("phpunit:\n%s", out.String())
	if err != nil {
		t.Fatalf("phpunit: %v", err)
	}
	// Every test ran: a skip or an incomplete test is a failure here.
	ok := regexp.MustCompile(`(?m)^OK \((\d+) tests?, \d+ assertions?\)$`).FindStringSubmatch(out.String())
	if ok == nil || strings.Contains(out.String(), "Skipped") {
		t.Fatalf("phpunit did not run every test to an OK")
	}
	if ok[1] == "0" {
		t.Fatal("phpunit ran no test")
	}
}
