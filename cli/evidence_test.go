package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/vetohq/veto/cli"
)

// TestEvidenceScripts runs the scripts of testdata/evidence: signed
// checkpoints made, exported, verified offline, and an export tampered
// with (the command "tamper") refused, naming what changed.
func TestEvidenceScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/evidence",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/.config")
			env.Setenv("VETO_MANAGED_POLICY", env.WorkDir+"/no-managed-policy.yaml")
			env.Setenv("VETO_NO_SERVER", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"tamper": tamper},
	})
}

// tamper edits an export's lines, IN to OUT:
//
//	tamper change IN OUT RUN SEQ OLD NEW   replace OLD by NEW in the event's line
//	tamper remove IN OUT RUN SEQ           drop the event's line
//	tamper swap IN OUT RUN SEQ             swap the lines of events SEQ and SEQ+1
//	tamper sig IN OUT N                    change checkpoint N's signature
func tamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: tamper change|remove|swap|sig IN OUT ...")
	}
	lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[1]), "\n"), "\n")
	find := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i
			}
		}
		ts.Fatalf("no line starts %s", prefix)
		return 0
	}
	event := func(run, seq string) int { return find(fmt.Sprintf(`{"run":%q,"seq":%s,`, run, seq)) }
	switch op := args[0]; {
	case op == "change" && len(args) == 7:
		i := event(args[3], args[4])
		if !strings.Contains(lines[i], args[5]) {
			ts.Fatalf("the line holds no %s", args[5])
		}
		lines[i] = strings.Replace(lines[i], args[5], args[6], 1)
	case op == "remove" && len(args) == 5:
		i := event(args[3], args[4])
		lines = append(lines[:i], lines[i+1:]...)
	case op == "swap" && len(args) == 5:
		seq, err := strconv.Atoi(args[4])
		ts.Check(err)
		i, j := event(args[3], args[4]), event(args[3], strconv.Itoa(seq+1))
		lines[i], lines[j] = lines[j], lines[i]
	case op == "sig" && len(args) == 4:
		i := find(fmt.Sprintf(`{"checkpoint":{"v":1,"n":%s,`, args[3]))
		k := strings.Index(lines[i], `"sig":"`) + len(`"sig":"`)
		c := "A"
		if lines[i][k] == 'A' {
			c = "B"
		}
		lines[i] = lines[i][:k] + c + lines[i][k+1:]
	default:
		ts.Fatalf("usage: tamper change|remove|swap|sig IN OUT ...")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// TestServeSignsInTheBackground: veto serve --sign-key signs checkpoints
// of what it decides, and an export of its state verifies offline.
func TestServeSignsInTheBackground(t *testing.T) {
	keyDir := t.TempDir()
	key := filepath.Join(keyDir, "sign.key")
	var out, errb bytes.Buffer
	if code := cli.Main(t.Context(), []string{"log", "keygen", "--out", key}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("keygen: %d %s", code, errb.String())
	}
	_, stderr := runVeto(t, "serve", "--listen", "127.0.0.1:0", "--insecure-no-auth", "--sign-key", key, "--sign-interval", "20ms")
	base := "http://" + stderr.wait(t, regexp.MustCompile(`listening on http://(\S+)`))
	state := filepath.Join(os.Getenv("HOME"), "veto.db")
	for i := range 3 {
		body, _ := json.Marshal(map[string]any{"call_id": fmt.Sprint("c", i), "tool": "Read", "args": map[string]any{"file_path": "/etc/hostname"},
			"run": map[string]any{"ref": "served", "fresh": true}, "actor": map[string]any{"kind": "agent", "id": "a1"}})
		resp, err := http.Post(base+"/v1/decide", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("decide: %d", resp.StatusCode)
		}
	}
	exp := filepath.Join(keyDir, "export.jsonl")
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		out.Reset()
		errb.Reset()
		if code := cli.Main(t.Context(), []string{"log", "export", "--state", state, "--out", exp}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("export: %d %s", code, errb.String())
		}
		b, _ := os.ReadFile(exp)
		if bytes.Contains(b, []byte(`"run":"served","seq":4`)) && bytes.Contains(b, []byte(`"heads":[{"run":"served","seq":4,`)) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no checkpoint of the served decisions:\n%s", b)
		}
	}
	out.Reset()
	if code := cli.Main(t.Context(), []string{"log", "verify", "--pub", key + ".pub", exp}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("verify: %d %s", code, out.String())
	}
	if !strings.Contains(out.String(), "ok: 1 run(s), 4 event(s)") {
		t.Fatalf("verify: %s", out.String())
	}
	// /metrics counts what the instance signed.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`(?m)^veto_checkpoints_signed_total [1-9]`).Match(m) || !strings.Contains(string(m), "veto_checkpoint_failures_total 0") {
		t.Fatalf("/metrics lacks the checkpoints signed:\n%s", m)
	}
}
