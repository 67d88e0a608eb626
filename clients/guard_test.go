package clients_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/clients"
)

// The guard passes veto's answers (exit 0 and 2, with what it printed and
// the hook's input) through, and turns every other exit into exit 2 with
// a reason on stderr: a program that is missing, a usage error, a crash.
// It runs the same in sh and bash, as the outer shell a client starts
// runs it (Codex: $SHELL -lc COMMAND).
func TestGuardBlocksEveryOtherExit(t *testing.T) {
	if strings.ContainsAny(clients.GuardScript, `'\`) {
		t.Fatal("the guard script holds a quote or a backslash: it is not one single-quoted word in every shell")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "veto hook") // a path that needs quoting
	script := "#!/bin/sh\nread -r line; echo \"out:$1:$line\"; echo \"err:$1\" >&2\n" +
		"case $1 in ok) exit 0;; deny) exit 2;; usage) exit 64;; one) exit 1;; killed) kill -9 $$;; esac\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	quoted := "'" + prog + "'"
	for _, shell := range []string{"/bin/sh", "bash"} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		for _, tc := range []struct {
			command string
			exit    int
			stdout  string
			says    string
		}{
			{quoted + " ok", 0, "out:ok:event\n", "err:ok\n"},
			{quoted + " deny", 2, "out:deny:event\n", "err:deny\n"},
			{quoted + " usage", 2, "out:usage:event\n", "its hook exited 64 instead of answering"},
			{quoted + " one", 2, "out:one:event\n", "its hook exited 1 instead of answering"},
			{quoted + " killed", 2, "", "its hook exited 137 instead of answering"},
			{"'" + filepath.Join(dir, "missing") + "' codex", 2, "", "its hook exited 127 instead of answering"},
		} {
			cmd := exec.Command(shell, "-c", clients.Guarded(tc.command))
			cmd.Stdin = strings.NewReader("event\n")
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != tc.exit || !strings.HasPrefix(o.String(), tc.stdout) || !strings.Contains(e.String(), tc.says) {
				t.Errorf("%s -c %s: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", shell, tc.command, exit, o.String(), e.String(), tc.exit, tc.stdout, tc.says)
			}
		}
	}
	if got := clients.Unguarded(clients.Guarded("/x/veto-hook codex")); got != "/x/veto-hook codex" {
		t.Errorf("Unguarded(Guarded(c)) = %q", got)
	}
	if got := clients.Unguarded("/x/veto-hook codex"); got != "/x/veto-hook codex" {
		t.Errorf("Unguarded of a plain command = %q", got)
	}
}
