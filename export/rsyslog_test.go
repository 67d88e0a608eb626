package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/vetohq/veto/internal/programtest"
	"github.com/vetohq/veto/postgres/pgtest"
)

// vetoProgram is the veto program, built once per test binary.
func vetoProgram(t *testing.T) string { return programtest.Veto(t) }

// freePort is a TCP port on 127.0.0.1 nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// rsyslog starts Debian's rsyslogd on a configuration of the test's own:
// imtcp on a free 127.0.0.1 port, each message's RFC 5424 fields as
// rsyslog parsed them written by omfile to a file; no system socket.
// Without rsyslogd the test skips, or fails with CI set.
func rsyslog(t *testing.T) (port int, out string) {
	t.Helper()
	bin, err := exec.LookPath("rsyslogd")
	if err != nil {
		if _, err = os.Stat("/usr/sbin/rsyslogd"); err == nil {
			bin = "/usr/sbin/rsyslogd"
		}
	}
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("rsyslogd is not installed: apt-get install -y rsyslog")
		}
		t.Skip("rsyslogd is not installed (apt-get install -y rsyslog)")
	}
	dir := t.TempDir()
	port, out = freePort(t), filepath.Join(dir, "out.log")
	conf := fmt.Sprintf(`global(workDirectory="%[1]s" maxMessageSize="64k")
module(load="imtcp")
template(name="fields" type="string" string="%%protocol-version%%|%%app-name%%|%%msgid%%|%%hostname%%|%%procid%%|%%msg%%\n")
ruleset(name="veto") {
	action(type="omfile" file="%[2]s" template="fields")
}
input(type="imtcp" address="127.0.0.1" port="%[3]d" ruleset="veto")
`, dir, out, port)
	cf := filepath.Join(dir, "rsyslog.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-n", "-f", cf, "-i", filepath.Join(dir, "rsyslogd.pid"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("rsyslogd does not listen on %d:\n%s", port, stderr.String())
		}
	}
}

// served is one veto serve process.
type served struct {
	cmd *exec.Cmd
	url string
}

func serve(t *testing.T, home string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(vetoProgram(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--log-level", "warn"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".state"), "VETO_MANAGED_POLICY=" + filepath.Join(home, "none.yaml")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "veto serve: listening on "); ok {
				addr <- a
			} else {
				t.Logf("veto serve: %s", lines.Text())
			}
		}
	}()
	select {
	case a := <-addr:
		return &served{cmd: cmd, url: a}
	case <-time.After(30 * time.Second):
		t.Fatal("veto serve did not say where it listens")
	}
	return nil
}

// canary is in every call's arguments; it must reach no sink.
const canary = "CANARY-7f3e-export-never"

// decide asks for one decision; false when no answer came (the instance
// was killed).
func decide(url string, i int) bool {
	call := map[string]any{"call_id": fmt.Sprintf("c%d", i), "run": map[string]any{"ref": fmt.Sprintf("run-%d", i%3), "fresh": true},
		"actor": map[string]any{"kind": "agent", "id": "export-test"}}
	if i%2 == 0 {
		call["tool"], call["args"] = "Bash", map[string]any{"command": "echo " + canary}
	} else {
		call["tool"], call["args"] = "Write", map[string]any{"file_path": "/tmp/veto-export-test/f.txt", "content": canary}
	}
	b, _ := json.Marshal(call)
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post(url+"/v1/decide", "application/json", bytes.NewReader(b))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200 || resp.StatusCode == 403
}

// stored is every decision in the state, by "run/seq", with its kind.
func stored(t *testing.T, home string, stateArgs ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(vetoProgram(t), append([]string{"log"}, stateArgs...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("veto log: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev struct {
			Run  string `json:"run"`
			Seq  uint64 `json:"seq"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("veto log printed %q", line)
		}
		got[fmt.Sprintf("%s/%d", ev.Run, ev.Seq)] = ev.Kind
	}
	return got
}

// fromRsyslog is what rsyslog wrote, by "run/seq", and the lines it
// could not have parsed as veto's (a frame cut by the kill).
func fromRsyslog(t *testing.T, out string) (got map[string]int, bad []string, raw []byte) {
	raw, _ = os.ReadFile(out)
	got = map[string]int{}
	host, _ := os.Hostname()
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.SplitN(line, "|", 6)
		var ev struct {
			Run  string `json:"run"`
			Seq  uint64 `json:"seq"`
			Kind string `json:"kind"`
		}
		if len(f) != 6 || json.Unmarshal([]byte(strings.TrimSpace(f[5])), &ev) != nil {
			bad = append(bad, line)
			continue
		}
		if f[0] != "1" || f[1] != "veto" || f[2] != ev.Kind || f[3] != appendFieldString(host, maxHostname) || f[4] == "-" {
			t.Errorf("rsyslog read the header as version %q, app-name %q, msgid %q, hostname %q, procid %q; want 1, veto, %s, %s, a pid",
				f[0], f[1], f[2], f[3], f[4], ev.Kind, host)
		}
		got[fmt.Sprintf("%s/%d", ev.Run, ev.Seq)]++
	}
	return got, bad, raw
}

func appendFieldString(s string, n int) string { return string(appendField(nil, s, n)) }

// fromJSONL is what the JSON Lines files hold, by "run/seq".
func fromJSONL(t *testing.T, path string) (got map[string]int, bad []string, raw []byte) {
	got = map[string]int{}
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		raw = append(raw, b...)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var ev struct {
				Run string `json:"run"`
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal([]byte(line), &ev) != nil || ev.Run == "" {
				bad = append(bad, line)
				continue
			}
			got[fmt.Sprintf("%s/%d", ev.Run, ev.Seq)]++
		}
	}
	return got, bad, raw
}

// TestExportReachesRsyslogThroughKills runs the real veto serve, exporting
// to Debian's rsyslogd over TCP and to a JSON Lines file rotated every
// 16 KB, on SQLite and on PostgreSQL; decisions are sent while the
// service is killed (SIGKILL) twice and started again. Every decision
// the state holds reaches rsyslog's file and the JSON Lines files at
// least once, rsyslog parses each header as RFC 5424 (app-name veto,
// msgid the event's kind), and the canary in every call's arguments is
// in neither.
// E40
func TestExportReachesRsyslogThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rsyslogd and veto serve")
	}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			port, syslogOut := rsyslog(t)
			home := t.TempDir()
			var stateArgs []string
			if store == "sqlite" {
				stateArgs = []string{"--state", filepath.Join(home, "veto.db")}
			} else {
				stateArgs = []string{"--postgres", pgtest.Fresh(t)}
			}
			jsonl := filepath.Join(home, "export", "decisions.jsonl")
			os.MkdirAll(filepath.Dir(jsonl), 0o700)
			args := append([]string{"--export-syslog", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--export-jsonl", jsonl,
				"--export-rotate", "16KB", "--export-keep", "100000"}, stateArgs...)

			var url atomic.Value
			inst := serve(t, home, args...)
			url.Store(inst.url)
			var next, answered atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if decide(url.Load().(string), int(next.Add(1))) {
							answered.Add(1)
						} else {
							time.Sleep(20 * time.Millisecond)
						}
					}
				}()
			}
			for kill := range 2 {
				time.Sleep(1500 * time.Millisecond)
				inst.cmd.Process.Signal(syscall.SIGKILL)
				inst.cmd.Wait()
				t.Logf("killed veto serve (%d), %d decisions answered so far", kill+1, answered.Load())
				inst = serve(t, home, args...)
				url.Store(inst.url)
			}
			time.Sleep(1500 * time.Millisecond)
			close(stop)
			wg.Wait()

			want := stored(t, home, stateArgs...)
			if len(want) < 20 {
				t.Fatalf("only %d decisions stored: the load did not run", len(want))
			}
			var gotSys, gotFile map[string]int
			var badSys, badFile []string
			var rawSys, rawFile []byte
			deadline := time.Now().Add(60 * time.Second)
			for {
				gotSys, badSys, rawSys = fromRsyslog(t, syslogOut)
				gotFile, badFile, rawFile = fromJSONL(t, jsonl)
				missing := 0
				for k := range want {
					if gotSys[k] == 0 || gotFile[k] == 0 {
						missing++
					}
				}
				if missing == 0 {
					break
				}
				if time.Now().After(deadline) {
					for k := range want {
						if gotSys[k] == 0 {
							t.Errorf("%s (%s) never reached rsyslog", k, want[k])
						}
						if gotFile[k] == 0 {
							t.Errorf("%s (%s) never reached the JSON Lines files", k, want[k])
						}
					}
					t.FailNow()
				}
				time.Sleep(200 * time.Millisecond)
			}
			resp, err := http.Get(inst.url + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, m := range []string{"veto_export_sent_total", "veto_export_errors_total", "veto_export_backlog", "veto_export_cursor_lag_seconds"} {
				if !bytes.Contains(metrics, []byte(m+`{sink="`)) {
					t.Errorf("/metrics has no %s of a sink", m)
				}
			}
			for k := range gotSys {
				if _, ok := want[k]; !ok {
					t.Errorf("rsyslog has %s, which the state does not hold as a decision", k)
				}
			}
			if bytes.Contains(rawSys, []byte(canary)) || bytes.Contains(rawFile, []byte(canary)) {
				t.Errorf("the canary from the calls' arguments reached a sink")
			}
			files, _ := filepath.Glob(jsonl + "*")
			dups := 0
			for _, n := range gotSys {
				dups += n - 1
			}
			t.Logf("%d decisions stored, all in rsyslog (%d sent again, %d cut lines) and in %d JSON Lines files (%d cut lines)",
				len(want), dups, len(badSys), len(files), len(badFile))
			if len(files) < 3 {
				t.Errorf("%d JSON Lines files: the 16 KB rotation did not happen", len(files))
			}
		})
	}
}
