package server_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/client"
	"github.com/vetohq/veto/internal/programtest"
)

// vetoProgram is the veto program, built once per test binary.
func vetoProgram(t *testing.T) string { return programtest.Veto(t) }

// instance is one veto serve process.
type instance struct {
	cmd *exec.Cmd
	url string
}

// serveProcess starts veto serve with args and waits for its address.
func serveProcess(t *testing.T, w world, args ...string) *instance {
	t.Helper()
	in, _ := serveProcessLogs(t, w, args...)
	return in
}

// serveProcessLogs is serveProcess, with the process's stderr kept.
func serveProcessLogs(t *testing.T, w world, args ...string) (*instance, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	cmd := exec.Command(vetoProgram(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--policy", w.policy, "--workspace-root", w.home}, args...)...)
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".state"), "VETO_MANAGED_POLICY=" + filepath.Join(w.home, "none.yaml")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	addr := make(chan string, 1)
	go func() {
		for lines.Scan() {
			logs.Write(append(lines.Bytes(), '\n'))
			if a, ok := strings.CutPrefix(lines.Text(), "veto serve: listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return &instance{cmd: cmd, url: a}, logs
	case <-time.After(20 * time.Second):
		t.Fatal("veto serve did not say where it listens")
	}
	return nil, nil
}

// runVeto runs a veto command and returns its stdout.
func runVeto(t *testing.T, w world, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(vetoProgram(t), args...)
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	return string(out), err
}

// TestServeSIGTERMUnderLoad: two veto serve processes on one PostgreSQL
// database decide one run's calls, alternating; one is sent SIGTERM under
// load. Every call answered allow or deny has its one decision recorded,
// the stopped instance exits cleanly, and veto log verify holds.
//
// No call is refused as contended. With four callers on each instance
// the run's appends never pause, and an instance whose append lost reads
// the run again before each try where the winner builds on its own row:
// unheld, the loser could lose every one of its 32 tries (2 of 16 runs
// on 2026-12-07 refused one or two calls so). A try after two lost, and
// every try in a run another instance moved under an append within the
// second, holds the run's row from its load to its append
// (sqlstore/rowhold.go), and cannot lose.
func TestServeSIGTERMUnderLoad(t *testing.T) {
	dsn := freshPG(t)
	w := newWorld(t)
	secret, err := runVeto(t, w, "token", "create", "--actor", "agent:load", "--postgres", dsn)
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	secret = strings.TrimSpace(secret)
	a := serveProcess(t, w, "--postgres", dsn)
	b := serveProcess(t, w, "--postgres", dsn)
	ca, cb := client.New(a.url, secret, nil), client.New(b.url, secret, nil)
	ctx := context.Background()
	if err := ca.Start(ctx, "load-1", true); err != nil {
		t.Fatal(err)
	}

	var (
		mu       sync.Mutex
		answered = map[string]bool{} // call id → allowed
		refused  atomic.Int64        // transport errors: the stopped instance
		lost     atomic.Int64        // refused as contended: every try lost to the other instance (none may be)
		next     atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := next.Add(1)
				c := ca
				if (int(i)+g)%2 == 1 {
					c = cb
				}
				id := fmt.Sprintf("l%d", i)
				file := "README.md"
				if i%5 == 0 {
					file = filepath.Join("..", ".ssh", "id_rsa") // denied: a credential
				}
				v, err := c.Decide(ctx, &veto.Call{ID: id, Tool: "Read", Args: map[string]any{"file_path": filepath.Join(w.work, file)},
					Cwd: w.work, Run: veto.Run{Ref: "load-1", Fresh: true}})
				if err != nil {
					refused.Add(1)
					continue
				}
				if v.Reason == veto.ReasonStateUnavailable && strings.Contains(v.Message, "other writers of this run appended first") {
					lost.Add(1)
					continue
				}
				if v.Reason == veto.ReasonStateUnavailable || v.Reason == veto.ReasonCancelled {
					t.Errorf("%s: %s (%s)", id, v.Reason, v.Message)
				}
				mu.Lock()
				answered[id] = v.Allowed
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the stopped instance exited with %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("SIGTERM did not stop the instance")
	}
	time.Sleep(500 * time.Millisecond) // the other instance goes on alone
	stop.Store(true)
	wg.Wait()

	st, _ := pgStore(t, dsn)
	got := decisions(t, st, "load-1")
	for id, allowed := range answered {
		d := got[id]
		if len(d) != 1 {
			t.Errorf("%s was answered, and has %d decisions recorded", id, len(d))
			continue
		}
		if (d[0].Kind == veto.EventAllowed) != allowed {
			t.Errorf("%s was answered allowed=%v, recorded %s", id, allowed, d[0].Kind)
		}
	}
	for id, d := range got {
		if len(d) > 1 {
			t.Errorf("%s has %d decisions", id, len(d))
		}
	}
	if out, err := runVeto(t, w, "log", "verify", "--postgres", dsn); err != nil {
		t.Fatalf("veto log verify: %v\n%s", err, out)
	}
	t.Logf("%d calls answered (%d decisions recorded), %d refused by the stopping instance's transport, %d as contended",
		len(answered), len(got), refused.Load(), lost.Load())
	if len(answered) < 50 {
		t.Fatalf("only %d calls answered: the load did not run", len(answered))
	}
	if n := lost.Load(); n != 0 {
		t.Fatalf("%d calls refused as contended, of %d answered", n, len(answered))
	}
}

// TestServeRefusesUnsafeListening: beyond loopback veto serve needs TLS,
// and --insecure-no-auth is for loopback only; with a certificate it
// serves HTTPS.
func TestServeRefusesUnsafeListening(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:0"},
		{"serve", "--listen", "[::]:0", "--tls-cert", "x.pem"},
		{"serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--tls-cert", "c", "--tls-key", "k", "--listen", "10.1.2.3:0"},
	} {
		cmd := exec.Command(vetoProgram(t), args...)
		cmd.Env = []string{"HOME=" + w.home, "XDG_STATE_HOME=" + filepath.Join(w.home, ".state")}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("veto %v: %v, want exit 2\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "TLS") && !strings.Contains(string(out), "loopback") && !strings.Contains(string(out), "together") {
			t.Fatalf("veto %v: the refusal does not say why: %s", args, out)
		}
	}

	// A self-signed certificate for 127.0.0.1.
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "veto test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	in := serveProcess(t, w, "--state", filepath.Join(dir, "veto.db"), "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(in.url, "https://") {
		t.Fatalf("with a certificate veto serve says %s", in.url)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	resp, err := hc.Get(in.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("https healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	// Without a token, over TLS as well: 401.
	resp, err = hc.Post(in.url+"/v1/decide", "application/json", strings.NewReader(`{"tool":"Read"}`))
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("https decide without a token: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestHookForwardsToServe: veto hook CLIENT --url sends a command hook's
// event to veto serve and answers with its reply; every failure on the
// way blocks the call in the client's form.
func TestHookForwardsToServe(t *testing.T) {
	w := newWorld(t)
	state := filepath.Join(t.TempDir(), "veto.db")
	secret, err := runVeto(t, w, "token", "create", "--actor", "agent:gem", "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	in := serveProcess(t, w, "--state", state)
	event := func(id, path string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "g1", "cwd": w.work, "hook_event_name": "BeforeTool",
			"tool_name": "read_file", "tool_input": map[string]any{"absolute_path": path}, "tool_call_id": id})
		return string(b)
	}
	hookRun := func(url, token, stdin string) (int, string, string) {
		cmd := exec.Command(vetoProgram(t), "hook", "gemini-cli", "--url", url, "--timeout", "3s")
		cmd.Env = []string{"HOME=" + w.home, "VETO_TOKEN=" + token}
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	startEv, _ := json.Marshal(map[string]any{"session_id": "g1", "cwd": w.work, "hook_event_name": "SessionStart", "source": "startup"})
	if code, stdout, stderr := hookRun(in.url, strings.TrimSpace(secret), string(startEv)); code != 0 {
		t.Fatalf("session start: exit %d %s %s", code, stdout, stderr)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + free.Addr().String()
	free.Close()
	cases := []struct {
		name, url, token, stdin string
		exit                    int
		holds                   string // in stdout or stderr
	}{
		{"allowed", in.url, strings.TrimSpace(secret), event("a1", filepath.Join(w.work, "README.md")), 0, ""},
		{"credential", in.url, strings.TrimSpace(secret), event("a2", filepath.Join(w.home, ".ssh", "id_rsa")), 2, "credential_path"},
		{"no token", in.url, "", event("a3", filepath.Join(w.work, "README.md")), 2, "unauthenticated"},
		{"service down", closed, strings.TrimSpace(secret), event("a4", filepath.Join(w.work, "README.md")), 2, "cannot be reached"},
		{"not a URL", "ftp://x", strings.TrimSpace(secret), event("a5", filepath.Join(w.work, "README.md")), 2, "no usable URL"},
		{"bad event", in.url, strings.TrimSpace(secret), "{", 2, "could not read the hook event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := hookRun(c.url, c.token, c.stdin)
			if code != c.exit || !strings.Contains(stdout+stderr, c.holds) {
				t.Fatalf("exit %d, want %d holding %q\nstdout %s\nstderr %s", code, c.exit, c.holds, stdout, stderr)
			}
			if c.exit == 2 && !strings.Contains(stdout, `"decision":"deny"`) {
				t.Fatalf("the denial is not Gemini CLI's blocking form: %s", stdout)
			}
			if strings.Contains(stdout+stderr, strings.TrimSpace(secret)) {
				t.Fatal("the reply quotes the token")
			}
		})
	}
}

// pgProxy forwards TCP connections on one loopback port to the test's
// PostgreSQL server; stopping it closes every connection, as a database
// that goes away does.
type pgProxy struct {
	addr string
	mu   sync.Mutex
	l    net.Listener
	open []net.Conn
}

func (p *pgProxy) start(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", "127.0.0.1:5432")
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.open = append(p.open, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *pgProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
	}
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

// TestServeRidesOutPostgreSQL: veto serve starts while its database
// cannot be reached and refuses every call 503 state_unavailable, its
// cause named; it decides once the database answers, refuses again while
// it is gone, and decides again when it is back, recording every answered
// decision.
func TestServeRidesOutPostgreSQL(t *testing.T) {
	dsn := freshPG(t)
	w := newWorld(t)
	secret, err := runVeto(t, w, "token", "create", "--actor", "agent:ride", "--postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	p := &pgProxy{addr: l.Addr().String()}
	l.Close()
	t.Cleanup(p.stop)
	in := serveProcess(t, w, "--postgres", strings.Replace(dsn, "127.0.0.1:5432", p.addr, 1), "--deadline", "3s")
	c := client.New(in.url, strings.TrimSpace(secret), nil)
	ctx := context.Background()
	n := 0
	decide := func() veto.Verdict {
		n++
		v, _ := c.Decide(ctx, &veto.Call{ID: fmt.Sprintf("p%d", n), Tool: "Read", Args: map[string]any{"file_path": filepath.Join(w.work, "README.md")},
			Cwd: w.work, Run: veto.Run{Ref: "ride-1", Fresh: true}})
		return v
	}
	ready := func() int {
		resp, err := http.Get(in.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	refused := func(when string) {
		t.Helper()
		v := decide()
		if v.Allowed || v.Reason != veto.ReasonStateUnavailable {
			t.Fatalf("%s: %+v, want state_unavailable", when, v)
		}
		if ready() != 503 {
			t.Fatalf("%s: /readyz is not 503", when)
		}
		if !strings.Contains(v.Message, "cannot be reached") {
			t.Fatalf("%s: the refusal names no cause: %s", when, v.Message)
		}
		t.Logf("%s: %s", when, v.Message)
	}
	decided := func(when string) {
		t.Helper()
		var v veto.Verdict
		for range 20 { // the service tries the database at most once a second
			if v = decide(); v.Allowed {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("%s: %+v, want allowed", when, v)
	}
	refused("the database never reached")
	p.start(t)
	decided("the database up")
	if ready() != 200 {
		t.Fatal("/readyz is not 200 with the database up")
	}
	p.stop()
	refused("the database gone")
	p.start(t)
	decided("the database back")

	st, _ := pgStore(t, dsn)
	for id, d := range decisions(t, st, "ride-1") {
		if len(d) != 1 {
			t.Errorf("%s: %d decisions", id, len(d))
		}
	}
	if out, err := runVeto(t, w, "log", "verify", "--postgres", dsn); err != nil {
		t.Fatalf("veto log verify: %v\n%s", err, out)
	}
}

// TestServeOnADamagedState: veto serve starts on a state file that is not
// a database, refuses every call 503 state_unavailable naming the damage
// (the hook endpoint 200 with Claude Code's deny), and says so at start.
func TestServeOnADamagedState(t *testing.T) {
	w := newWorld(t)
	state := filepath.Join(t.TempDir(), "veto.db")
	if err := os.WriteFile(state, []byte(strings.Repeat("not a database ", 300)), 0o600); err != nil {
		t.Fatal(err)
	}
	in := serveProcess(t, w, "--state", state, "--insecure-no-auth")
	resp, err := http.Post(in.url+"/v1/decide", "application/json", strings.NewReader(`{"tool":"Read","args":{"file_path":"/etc/hostname"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"state_unavailable"`) || !strings.Contains(string(b), "damaged") {
		t.Fatalf("decide on a damaged state: %d %s", resp.StatusCode, b)
	}
	hook := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/hostname"},"tool_use_id":"t"}`, w.work)
	resp, err = http.Post(in.url+"/v1/hooks/claude-code", "application/json", strings.NewReader(hook))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"permissionDecision":"deny"`) || !strings.Contains(string(b), "damaged") {
		t.Fatalf("the hook on a damaged state: %d %s", resp.StatusCode, b)
	}
}

// TestServeStopsWithStreamsOpen: SIGTERM ends veto serve within its grace
// while an event stream and a take of a person's input wait (neither has
// an end of its own): the stream closes, the take answers 204, and the
// process exits 0.
func TestServeStopsWithStreamsOpen(t *testing.T) {
	w := newWorld(t)
	state := filepath.Join(w.home, "veto.db")
	secret, err := runVeto(t, w, "token", "create", "--actor", "agent:ci", "--role", "service", "--state", state)
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	secret = strings.TrimSpace(secret)
	p := serveProcess(t, w, "--state", state, "--grace", "20s")
	get := func(path string) (*http.Response, error) {
		rq, _ := http.NewRequest("GET", p.url+path, nil)
		rq.Header.Set("Authorization", "Bearer "+secret)
		return http.DefaultClient.Do(rq)
	}
	stream, err := get("/v1/events")
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("the event stream: %v %v", stream, err)
	}
	defer stream.Body.Close()
	c := client.New(p.url, secret, nil)
	call := &veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": "make release"}, Run: veto.Run{Ref: "r1", Fresh: true},
		Actor: veto.Actor{Kind: "agent", ID: "ci"}}
	if _, err := c.Suspend(context.Background(), call, veto.AwaitInput, []string{"version"}); err != nil {
		t.Fatal(err)
	}
	took := make(chan int, 1)
	go func() {
		r, err := get("/v1/inputs/r1/c1?wait=60s")
		if err != nil {
			took <- 0
			return
		}
		r.Body.Close()
		took <- r.StatusCode
	}()
	time.Sleep(300 * time.Millisecond) // both wait now
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("veto serve exited %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("veto serve did not stop within 15 s with a stream and a take open")
	}
	if code := <-took; code != http.StatusNoContent {
		t.Fatalf("the take answered %d as the service stopped, want 204", code)
	}
	t.Logf("stopped in %s with a stream and a take open", time.Since(start).Round(time.Millisecond))
}
