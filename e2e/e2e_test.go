// Package e2e drives the real agent clients, installed at the versions
// e2e/node/package-lock.json pins, against veto. Each client runs in a
// network namespace of its own (unshare --net --mount: the test binary
// again, which brings lo up and makes sure it is the only interface) with
// a throw-away HOME, pointed at a scripted model endpoint on 127.0.0.1 in
// that namespace, which asks for one tool call a turn from a scenario
// file in testdata. Every dangerous call aims at the sandbox: canary
// credentials, a local bare remote, the sandbox's own ~/.bashrc, a curl
// that only notes it ran. The tests check what the endpoint got back, the
// sandbox world and veto log, then print each client's table of calls;
// and they break veto each way it can break and check the client blocks.
//
// The tests run only with VETO_E2E=1 (.ci/run sets it): they need npm,
// unshare, mount, ip and git, and root (or the capabilities to create
// namespaces and bind mounts).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// innerEnv names the file of a run to play inside the namespace: set, the
// test binary is the namespace's process (see TestMain).
const innerEnv = "VETO_E2E_INNER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(innerEnv); spec != "" {
		os.Exit(inner(spec))
	}
	if os.Getenv(mcpEnv) != "" {
		os.Exit(mcpServer())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Call is one tool call the scripted model asks for.
type Call struct {
	Name  string          `json:"name"`  // what the agent tries, for the table
	Tool  string          `json:"tool"`  // the client's tool name
	Input json.RawMessage `json:"input"` // its arguments; $WS and $HOME stand for the sandbox's
	// Want: "allow" (runs and succeeds), "fail" (runs and fails) or "deny"
	// (veto refuses it; Rule is the rule named in the reason).
	Want string `json:"want"`
	Rule string `json:"rule,omitempty"`
	// Reason, when set, is the reason code veto's decision must carry.
	Reason string `json:"reason,omitempty"`
	// Output is text the tool's output must hold when it ran.
	Output string `json:"output,omitempty"`
	// Unchanged are files that must hold what they held before the run;
	// Absent, files that must not exist after it.
	Unchanged []string `json:"unchanged,omitempty"`
	Absent    []string `json:"absent,omitempty"`
	// Holds are files and text each must hold after the run.
	Holds map[string]string `json:"holds,omitempty"`
	// With: the model asks for this call in the same message as the one
	// before it (Anthropic's endpoint): parallel tool calls.
	With bool `json:"with,omitempty"`
	// Edit are files (path → content) that someone outside the session (a
	// person, another process) writes before the model asks for this
	// call (Anthropic's endpoint); the endpoint then waits editSettle
	// for the client to notice.
	Edit map[string]string `json:"edit,omitempty"`
}

// editSettle is how long the endpoint waits after a Call's Edit: Claude
// Code's settings watcher waits for a write to settle (about a second)
// before it reads the file and asks its ConfigChange hooks.
const editSettle = 5 * time.Second

// runSpec is one client run, handed to the namespace's process.
type runSpec struct {
	Program string   `json:"program"`
	Args    []string `json:"args"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	BaseEnv string   `json:"base_env"` // the variable that points the client at the endpoint
	API     string   `json:"api"`      // the endpoint's: "anthropic", "gemini" or "openai"
	// Port is the endpoint's port, for a client configured in a file
	// before the run (0: any); the namespace is new, so every port is free.
	Port     int               `json:"port,omitempty"`
	Calls    []Call            `json:"calls"`
	Canaries map[string]string `json:"canaries"`
	Timeout  time.Duration     `json:"timeout"`
	// ReadOnly are directories bound read-only over themselves in the
	// namespace's own mount namespace: read-only even for root.
	ReadOnly []string `json:"read_only,omitempty"`
	// Serve, when set, is a service started in the namespace before the
	// client (veto serve), with ServeEnv (not the client's: no API key); the client
	// starts once its stderr says "listening on", and it is stopped after.
	Serve    []string `json:"serve,omitempty"`
	ServeEnv []string `json:"serve_env,omitempty"`
	Report   string   `json:"report"` // where to write the outcome
}

// outcome is what a run produced.
type outcome struct {
	report
	Exit     int           `json:"exit"`
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	Duration time.Duration `json:"duration"`
	Err      string        `json:"err,omitempty"`
}

// inner is the process inside the network namespace: loopback up and
// nothing else there, the endpoint on 127.0.0.1, the client as a child.
func inner(specPath string) int {
	var spec runSpec
	var out outcome
	write := func() int {
		b, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(spec.Report, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "e2e inner:", err)
			return 1
		}
		return 0
	}
	b, err := os.ReadFile(specPath)
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e inner:", err)
		return 1
	}
	if err := loopbackOnly(); err != nil {
		out.Err = err.Error()
		return write()
	}
	for _, p := range spec.ReadOnly {
		for _, args := range [][]string{{"--bind", p, p}, {"-o", "remount,bind,ro", p}} {
			if b, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
				out.Err = fmt.Sprintf("mount %s: %v: %s", strings.Join(args, " "), err, b)
				return write()
			}
		}
	}
	var ep interface {
		http.Handler
		report() report
	}
	switch spec.API {
	case "anthropic":
		ep = newAnthropic(spec.Calls, spec.Canaries)
	case "gemini":
		ep = newGemini(spec.Calls, spec.Canaries)
	case "openai":
		ep = newResponses(spec.Calls, spec.Canaries)
	default:
		out.Err = "no endpoint for the API " + spec.API
		return write()
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", spec.Port))
	if err != nil {
		out.Err = err.Error()
		return write()
	}
	srv := &http.Server{Handler: ep}
	go srv.Serve(ln)
	defer srv.Close()
	if len(spec.Serve) > 0 {
		stop, err := startService(spec.Serve, spec.ServeEnv)
		if err != nil {
			out.Err = err.Error()
			return write()
		}
		defer stop()
	}

	ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, spec.Program, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(spec.Env, spec.BaseEnv+"=http://"+ln.Addr().String())
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	out.Duration = time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		out.Exit = ee.ExitCode()
	case err != nil:
		out.Err = err.Error()
	}
	if ctx.Err() != nil {
		out.Err = "the client did not finish within " + spec.Timeout.String()
	}
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	out.report = ep.report()
	return write()
}

// startService starts argv and waits until its stderr says it listens.
func startService(argv, env []string) (stop func(), err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			stop()
			return nil, fmt.Errorf("%s ended before it listened", argv[0])
		}
	case <-time.After(20 * time.Second):
		stop()
		return nil, fmt.Errorf("%s did not say it listens", argv[0])
	}
	return stop, nil
}

// loopbackOnly brings lo up and makes sure it is the namespace's only
// interface: nothing the client does can reach another network.
func loopbackOnly() error {
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set lo up: %v: %s", err, out)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		if i.Name != "lo" {
			return fmt.Errorf("the namespace has an interface %s besides lo: refusing to run a client here", i.Name)
		}
	}
	return nil
}

// play runs spec in a new network namespace: the test binary again, under
// unshare --net (and --mount).
func play(t *testing.T, spec runSpec) outcome {
	t.Helper()
	o, err := playIn(t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// playIn is play with its files in dir, for a goroutine: it fails by
// returning an error.
func playIn(dir string, spec runSpec) (outcome, error) {
	spec.Report = filepath.Join(dir, "outcome.json")
	b, _ := json.Marshal(spec)
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return outcome{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return outcome{}, err
	}
	// A mount namespace too, so a read-only bind stays in it.
	cmd := exec.Command("unshare", "--net", "--mount", "--", self)
	cmd.Env = []string{innerEnv + "=" + specPath, "PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); err != nil {
		return outcome{}, fmt.Errorf("unshare --net: %v\n%s", err, out)
	}
	var o outcome
	b, err = os.ReadFile(spec.Report)
	if err == nil {
		err = json.Unmarshal(b, &o)
	}
	if err != nil {
		return outcome{}, fmt.Errorf("the namespace's outcome: %v", err)
	}
	if o.Err != "" && !strings.HasPrefix(o.Err, "the client did not finish") {
		return o, fmt.Errorf("in the namespace: %s", o.Err)
	}
	return o, nil
}

// need skips the test unless VETO_E2E=1, and fails when a tool it needs
// is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	if os.Getenv("VETO_E2E") != "1" {
		t.Skip("the end-to-end suite runs with VETO_E2E=1 (.ci/run)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	for _, tool := range append([]string{"unshare", "mount", "ip", "git", "npm"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the end-to-end suite needs %s on PATH", tool)
		}
	}
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// vetoBin builds veto and veto-hook once, into a directory that outlives
// each test's own; TestMain removes it.
func vetoBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "veto-e2e-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "github.com/vetohq/veto/cmd/veto", "github.com/vetohq/veto/cmd/veto-hook")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

var (
	npmMu   sync.Mutex
	npmDone = map[string]error{}
)

// clients installs the pinned clients with npm ci into e2e/node.
func clients(t *testing.T) string {
	t.Helper()
	return npmCI(t, "node")
}

// npmCI installs what dir's package-lock.json pins with npm ci, once a
// test binary, unless node_modules already holds what the lock file says
// (a stamp of the lock file, written after a good install); it returns
// dir, absolute.
func npmCI(t *testing.T, dir string) string {
	t.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	npmMu.Lock()
	defer npmMu.Unlock()
	err, done := npmDone[dir]
	if !done {
		err = npmInstall(dir)
		npmDone[dir] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func npmInstall(dir string) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, "node_modules", ".veto-e2e-lock")
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return nil
	}
	start := time.Now()
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	fmt.Printf("npm ci in %s: %s\n", dir, time.Since(start).Round(time.Second))
	return os.WriteFile(stamp, []byte(want), 0o644)
}

// sandbox is one run's world: a throw-away HOME with canaries, a git
// workspace with a local bare remote, veto's state and config, and the
// binaries (linked in, so a case may rename them).
type sandbox struct {
	t                           *testing.T
	root, home, ws, remote, bin string
	state, config, runtime, tmp string
	apiKey, sshKey, envSecret   string
	before                      map[string][]byte
	refsBefore                  string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &sandbox{t: t, root: root, home: filepath.Join(root, "home"), remote: filepath.Join(root, "remote.git"),
		bin: filepath.Join(root, "bin"), state: filepath.Join(root, "state"), config: filepath.Join(root, "config"),
		runtime: filepath.Join(root, "run"), tmp: filepath.Join(root, "tmp")}
	s.ws = filepath.Join(s.home, "src", "project")
	nonce := fmt.Sprintf("%x", sha256.Sum256([]byte(root+time.Now().String())))[:16]
	s.apiKey = "sk-ant-api03-vetoe2ecanary-" + nonce
	s.sshKey = "VETO-E2E-SSH-CANARY-" + nonce
	s.envSecret = "VETO-E2E-ENV-CANARY-" + nonce
	for _, d := range []string{s.bin, s.state, s.config, s.tmp, filepath.Join(s.home, ".ssh"), s.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(s.runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := vetoBin(t)
	for _, name := range []string{"veto", "veto-hook"} {
		link(t, filepath.Join(bin, name), filepath.Join(s.bin, name))
	}
	// A curl that only notes it ran: a wrong allow sends nothing anywhere
	// (and the namespace has no network besides).
	s.write("bin/curl", "#!/bin/sh\necho \"$@\" > "+filepath.Join(root, "curl-ran")+"\n", 0o755)
	// The sandbox lives under /tmp, which veto counts as a write root: the
	// user's policy narrows the temporary directories to the sandbox's
	// own TMPDIR, so that its HOME is outside the roots as a real one is.
	s.write("config/veto/veto.yaml", "files:\n  temp_dirs: ["+strconv.Quote(s.tmp)+"]\n", 0o644)
	s.write("home/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+s.sshKey+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
	// A login shell (Codex runs bash -lc) resets PATH in /etc/profile;
	// the sandbox's ~/.profile puts its own directories back.
	s.write("home/.profile", "PATH="+s.bin+":"+filepath.Join(runtimeGOROOT(), "bin")+":$PATH\n", 0o644)
	s.write("home/.bashrc", "# the sandbox's .bashrc\nexport PS1='$ '\n", 0o644)
	s.write("home/.gitconfig", "[user]\n\tname = veto e2e\n\temail = e2e@veto.invalid\n[init]\n\tdefaultBranch = main\n", 0o644)
	s.write("home/src/project/README.md", "# e2e project\n\nA small Go program for veto's end-to-end suite.\n", 0o644)
	s.write("home/src/project/go.mod", "module example.com/e2e\n\ngo 1.26\n", 0o644)
	s.write("home/src/project/main.go", "package main\n\nimport \"fmt\"\n\n// TODO: greet by name.\nfunc main() { fmt.Println(\"Hello\") }\n", 0o644)
	s.write("home/src/project/.env", "API_TOKEN="+s.envSecret+"\n", 0o600)
	s.write("home/src/project/.gitignore", ".env\n", 0o644)
	s.git(s.root, "init", "-q", "--bare", s.remote)
	s.git(s.ws, "init", "-q")
	s.git(s.ws, "add", ".")
	s.git(s.ws, "commit", "-q", "-m", "first")
	s.git(s.ws, "remote", "add", "origin", s.remote)
	s.git(s.ws, "push", "-q", "origin", "main")
	// A local history that differs from the remote's: only a force-push
	// would move the remote's main.
	s.git(s.ws, "commit", "-q", "--amend", "-m", "first, rewritten")
	return s
}

func link(t *testing.T, from, to string) {
	t.Helper()
	if os.Link(from, to) == nil {
		return
	}
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// write writes a file under the sandbox's root.
func (s *sandbox) write(rel, content string, mode os.FileMode) {
	s.t.Helper()
	p := filepath.Join(s.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		s.t.Fatal(err)
	}
}

// env is the environment of everything run in the sandbox: nothing of
// the test's own but PATH's system directories and Go.
func (s *sandbox) env() []string {
	goroot := filepath.Join(runtimeGOROOT(), "bin")
	e := []string{
		"HOME=" + s.home, "USER=root", "LOGNAME=root", "SHELL=/bin/bash", "TERM=dumb", "LANG=C.UTF-8",
		"PATH=" + s.bin + ":" + goroot + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		"TMPDIR=" + s.tmp, "XDG_CONFIG_HOME=" + s.config, "XDG_STATE_HOME=" + s.state, "XDG_RUNTIME_DIR=" + s.runtime,
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"VETO_MANAGED_POLICY=" + filepath.Join(s.root, "managed-veto.yaml"),
		"GIT_CONFIG_NOSYSTEM=1", "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0",
	}
	return e
}

func runtimeGOROOT() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "/usr/local/go"
	}
	return strings.TrimSpace(string(out))
}

// git runs git in dir, in the sandbox's environment: setting it up.
func (s *sandbox) git(dir string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// veto runs the sandbox's veto.
func (s *sandbox) veto(args ...string) (int, string, string) {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, "veto"), args...)
	cmd.Dir, cmd.Env = s.ws, s.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stdout.String(), stderr.String()
	} else if err != nil {
		s.t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// expand puts the sandbox's paths in a call's text.
func (s *sandbox) expand(text string) string {
	return strings.NewReplacer("$WS", s.ws, "$HOME", s.home, "$ROOT", s.root).Replace(text)
}

// snapshot remembers the files calls must leave as they are, and the
// remote's refs.
func (s *sandbox) snapshot(calls []Call) {
	s.before = map[string][]byte{}
	for _, c := range calls {
		for _, p := range c.Unchanged {
			b, err := os.ReadFile(p)
			if err != nil {
				s.t.Fatalf("%s: %v", c.Name, err)
			}
			s.before[p] = b
		}
	}
	s.refsBefore = s.git(s.remote, "for-each-ref")
}

// finish ends the hook server veto-hook started in the sandbox, and
// checks no veto file holds the canaries.
func (s *sandbox) finish() {
	s.t.Helper()
	s.veto("serve-hooks", "--stop")
	for _, dir := range []string{s.state, s.config, s.runtime} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			b, _ := io.ReadAll(io.LimitReader(f, 256<<20))
			for name, c := range map[string]string{"the API key": s.apiKey, "the SSH key": s.sshKey, "the .env secret": s.envSecret} {
				if bytes.Contains(b, []byte(c)) {
					s.t.Errorf("%s is in veto's file %s", name, p)
				}
			}
			return nil
		})
	}
}
