package cli_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto/presence/presencetest"
)

// uiCmd is veto ui on a fresh state, as the test binary.
func uiCmd(t *testing.T) *exec.Cmd {
	t.Helper()
	veto, err := exec.LookPath("veto") // testscript.Main's program
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(veto, "ui", "--listen", "127.0.0.1:0", "--state", filepath.Join(dir, "veto.db"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"),
		"VETO_MANAGED_POLICY="+filepath.Join(dir, "none.yaml"))
	return cmd
}

// veto ui on a person's terminal: the page's one-time key is shown there
// and opens a session; stdout and stderr, which the agent may read, never
// hold it.
func TestUIShowsTheKeyOnlyOnThePersonsTerminal(t *testing.T) {
	cmd := uiCmd(t)
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	term, err := presencetest.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	m, err := term.Expect(regexp.MustCompile(`open (http://127\.0\.0\.1:[0-9]+)/ui/login\?k=([A-Za-z0-9_-]+)`), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	base, key := m[1], m[2]
	b, _ := os.ReadFile(out.Name())
	if strings.Contains(string(b), key) || !strings.Contains(string(b), "serving "+base+"/ui (the page's one-time key is on your terminal)") {
		t.Fatalf("stdout and stderr: %q (the key is %q)", b, key)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(base + "/ui/login?k=" + key)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) == 0 {
		t.Fatalf("the key shown on the terminal opened no session: %s", resp.Status)
	}
}

// veto ui without a terminal (how the agent's tool runs it): refused
// before any key is made, exit 1.
func TestUIWithoutATerminalIsRefused(t *testing.T) {
	cmd := uiCmd(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "veto ui: veto ui needs a person, who answers only on a terminal") ||
		strings.Contains(stdout.String()+stderr.String(), "k=") {
		t.Fatalf("%v; stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
}
