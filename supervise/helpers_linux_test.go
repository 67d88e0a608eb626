//go:build linux && amd64

package supervise

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Child()
	switch os.Getenv("SUPERVISE_TEST_HELPER") {
	case "supervisor":
		helperSupervisor() // the supervisor a test kills (TestChildDiesWithSupervisor)
	case "loop":
		helperLoop() // the workload of BenchmarkDecidedOpen and BenchmarkDecidedExec
	}
	os.Exit(m.Run())
}

const canary = "CANARY-7f3e9b1d-aws-secret"

// world is a throw-away HOME with canary credentials, and a decider that refuses what the tests say: opens below
// HOME/.aws and programs named "forbidden".
type world struct {
	t    *testing.T
	home string
	work string
	env  []string

	mu   sync.Mutex
	seen []Request
}

func newWorld(t *testing.T) *world {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the tests run each command in a new network namespace, which needs root")
	}
	if f := Probe(); !f.UserNotif {
		t.Skip("no seccomp user notification: " + f.Why)
	}
	home := t.TempDir()
	w := &world{t: t, home: home, work: filepath.Join(home, "work")}
	for _, d := range []string{".aws", "work", "tmp", "bin"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.write(".aws/credentials", "[default]\naws_secret_access_key = "+canary+"\n")
	w.write("work/notes.txt", "harmless notes\n")
	w.env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + filepath.Join(home, "tmp"),
		"LANG=C"}
	return w
}

func (w *world) write(rel, text string) string {
	w.t.Helper()
	p := filepath.Join(w.home, rel)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) decide(r Request) Verdict {
	w.mu.Lock()
	w.seen = append(w.seen, r)
	w.mu.Unlock()
	switch r.Kind {
	case Open:
		if strings.HasPrefix(r.Path, filepath.Join(w.home, ".aws")+"/") {
			return Verdict{Rule: "test.credential", Reason: "credential_read"}
		}
	case Exec:
		if filepath.Base(r.Path) == "forbidden" || len(r.Argv) > 0 && filepath.Base(r.Argv[0]) == "forbidden" {
			return Verdict{Rule: "test.program", Reason: "forbidden_program"}
		}
	}
	return Verdict{Allow: true}
}

// refused is the requests the decider refused.
func (w *world) refused() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Request
	for _, r := range w.seen {
		if !w.decideQuiet(r) {
			out = append(out, r)
		}
	}
	return out
}

func (w *world) decideQuiet(r Request) bool {
	switch r.Kind {
	case Open:
		return !strings.HasPrefix(r.Path, filepath.Join(w.home, ".aws")+"/")
	case Exec:
		return !(filepath.Base(r.Path) == "forbidden" || len(r.Argv) > 0 && filepath.Base(r.Argv[0]) == "forbidden")
	}
	return true
}

type result struct {
	code           int
	stdout, stderr string
}

func (w *world) config(argv ...string) Config {
	return Config{Argv: argv, Env: w.env, Dir: w.work, Decide: w.decide, NetNS: true}
}

func (w *world) run(cfg Config) result {
	w.t.Helper()
	var out, errb bytes.Buffer
	cfg.Stdout, cfg.Stderr = &out, &errb
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code, err := Run(ctx, cfg)
	if err != nil {
		w.t.Fatalf("Run(%q): %v", cfg.Argv, err)
	}
	r := result{code, out.String(), errb.String()}
	if strings.Contains(r.stdout, canary) || strings.Contains(r.stderr, canary) {
		w.t.Fatalf("Run(%q): the canary was printed:\n%s%s", cfg.Argv, r.stdout, r.stderr)
	}
	return r
}
