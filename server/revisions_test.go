package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/client"
)

// denyEcho is a revision that refuses a call the served policy allows.
const denyEcho = `rules:
  - id: org.no-echo
    deny: 'tool == "Bash" && args.command.startsWith("echo")'
    reason: echo_refused
    message: This fleet does not echo.
`

// TestRevisionsReachEveryInstance: two veto serve processes on one
// PostgreSQL database. A pushed revision that refuses a call both allowed
// is in force in both within 2 s, and every decision names it; a push that
// does not validate changes nothing; activating the old revision restores
// the allow, in both.
func TestRevisionsReachEveryInstance(t *testing.T) {
	dsn := freshPG(t)
	w := newWorld(t)
	a := serveProcess(t, w, "--postgres", dsn)
	b := serveProcess(t, w, "--postgres", dsn)
	tok, err := runVeto(t, w, "token", "create", "--actor", "service:fleet", "--postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	ctx := context.Background()
	n := 0
	decide := func(in *instance) (veto.Verdict, veto.Event) {
		t.Helper()
		n++
		run := "rev-" + time.Now().Format("150405.000000") + "-" + string(rune('a'+n%26))
		c := &veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": "echo hello"}, Cwd: w.work,
			Run: veto.Run{Ref: run, Fresh: true}}
		v, err := client.New(in.url, tok, nil).Decide(ctx, c)
		if err != nil && v.Reason != "echo_refused" {
			t.Fatalf("decide: %+v %v", v, err)
		}
		return v, lastDecision(t, in, tok, run)
	}
	push := func(want bool, files ...string) string {
		t.Helper()
		out, err := runVeto(t, w, append([]string{"policy", "push", "--postgres", dsn}, files...)...)
		if (err == nil) != want {
			t.Fatalf("push %v: %v\n%s", files, err, out)
		}
		return out
	}
	revOf := regexp.MustCompile(`pushed revision (p-[0-9a-f]{12})`)

	// The files both serve, pushed as a revision: nothing changes but its
	// source.
	m := revOf.FindStringSubmatch(push(true, w.policy))
	if m == nil {
		t.Fatal("push printed no revision")
	}
	allowRev := m[1]
	for _, in := range []*instance{a, b} {
		waitFor(t, in, allowRev)
		if v, ev := decide(in); !v.Allowed || ev.PolicyRev != allowRev {
			t.Fatalf("under %s: %+v, recorded under %q", allowRev, v, ev.PolicyRev)
		}
	}

	deny := filepath.Join(t.TempDir(), "deny.yaml")
	if err := os.WriteFile(deny, []byte(denyEcho), 0o644); err != nil {
		t.Fatal(err)
	}
	pushed := time.Now()
	m = revOf.FindStringSubmatch(push(true, w.policy, deny))
	if m == nil {
		t.Fatal("push printed no revision")
	}
	denyRev := m[1]
	for _, in := range []*instance{a, b} {
		took := waitFor(t, in, denyRev)
		t.Logf("%s decides with %s %v after the push", in.url, denyRev, took.Sub(pushed).Round(time.Millisecond))
		if d := took.Sub(pushed); d > pushDeadline {
			t.Errorf("%s took %v to take the revision, more than %v", in.url, d, pushDeadline)
		}
		v, ev := decide(in)
		if v.Allowed || v.Rule != "org.no-echo" || v.Reason != "echo_refused" || ev.PolicyRev != denyRev {
			t.Fatalf("under %s: %+v, recorded under %q", denyRev, v, ev.PolicyRev)
		}
	}

	// A push that does not validate stores nothing and changes nothing.
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("rules:\n  - id: org.bad\n    deny: 'tool =='\n    reason: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := push(false, broken)
	if !strings.Contains(out, "broken.yaml:3:") || !strings.Contains(out, "nothing was pushed") {
		t.Fatalf("a failed push says:\n%s", out)
	}
	list, err := runVeto(t, w, "policy", "revisions", "--postgres", dsn)
	if err != nil || strings.Count(list, "\np-") != 2 || !strings.Contains(list, denyRev+" ") {
		t.Fatalf("revisions after a failed push (%v):\n%s", err, list)
	}
	time.Sleep(1500 * time.Millisecond) // past an instance's look at the heads
	for _, in := range []*instance{a, b} {
		if rev := policyRev(t, in, tok); rev != denyRev {
			t.Fatalf("%s decides with %s after a failed push", in.url, rev)
		}
	}

	// Rolling back is activating the old revision.
	if out, err := runVeto(t, w, "policy", "activate", allowRev, "--postgres", dsn); err != nil {
		t.Fatalf("activate: %v\n%s", err, out)
	}
	for _, in := range []*instance{a, b} {
		waitFor(t, in, allowRev)
		if v, ev := decide(in); !v.Allowed || ev.PolicyRev != allowRev {
			t.Fatalf("after the rollback: %+v, recorded under %q", v, ev.PolicyRev)
		}
	}
	if out, err := runVeto(t, w, "policy", "activate", "p-000000000000", "--postgres", dsn); err == nil {
		t.Fatalf("activating a revision never pushed: %s", out)
	}
}

// waitFor waits until the instance decides with rev, and returns when.
func waitFor(t *testing.T, in *instance, rev string) time.Time {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", in.url+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var body struct {
				Policy struct {
					Revision string `json:"revision"`
				} `json:"policy"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if body.Policy.Revision == rev {
				return time.Now()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never took revision %s", in.url, rev)
	return time.Time{}
}

// policyRev is the revision GET /v1/policy names.
func policyRev(t *testing.T, in *instance, tok string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", in.url+"/v1/policy", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Veto-Policy-Revision")
}

// lastDecision is the run's last decision event, read through the API.
func lastDecision(t *testing.T, in *instance, tok, run string) veto.Event {
	t.Helper()
	req, _ := http.NewRequest("GET", in.url+"/v1/runs/"+run+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Events []veto.Event `json:"events"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Events) == 0 {
		t.Fatalf("run %s: %d events, %v", run, len(body.Events), err)
	}
	return body.Events[len(body.Events)-1]
}
