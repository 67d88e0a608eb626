package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
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
//
// E36
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
	// veto doctor, on the database, says which revision is active and
	// that it loads with this veto.
	cmd := exec.Command(vetoProgram(t), "doctor")
	cmd.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "VETO_POSTGRES=" + dsn}
	doc, _ := cmd.Output()
	if !strings.Contains(string(doc), "policy revision "+allowRev+" is active on the database and loads") {
		t.Fatalf("veto doctor:\n%s", doc)
	}
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

// TestServeReloadsItsFiles: veto serve on an SQLite state, with no
// revision pushed, takes an edit of its policy file within 2 s; a broken
// edit keeps the last good policy deciding, and /readyz and the log say
// where the file is wrong; the mended file is taken.
func TestServeReloadsItsFiles(t *testing.T) {
	w := newWorld(t)
	state := filepath.Join(t.TempDir(), "veto.db")
	in, logs := serveProcessLogs(t, w, "--state", state, "--log-level", "info")
	tok, err := runVeto(t, w, "token", "create", "--actor", "service:files", "--state", state)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	ctx := context.Background()
	n := 0
	decide := func() veto.Verdict {
		t.Helper()
		n++
		c := &veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": "echo hello"}, Cwd: w.work,
			Run: veto.Run{Ref: "files-" + strings.Repeat("x", n), Fresh: true}}
		v, _ := client.New(in.url, tok, nil).Decide(ctx, c)
		return v
	}
	first := policyRev(t, in, tok)
	if v := decide(); !v.Allowed {
		t.Fatalf("before the edit: %+v", v)
	}
	base, err := os.ReadFile(w.policy)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(body string) {
		t.Helper()
		// As an editor saves: a new file renamed over the old.
		tmp := w.policy + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, w.policy); err != nil {
			t.Fatal(err)
		}
	}
	edited := time.Now()
	// The served file ends in its list of rules: one more joins it.
	edit(string(base) + strings.TrimPrefix(denyEcho, "rules:\n"))
	second := waitForChange(t, in, first)
	t.Logf("the edit was taken %v after it was saved", time.Since(edited).Round(time.Millisecond))
	if d := time.Since(edited); d > pushDeadline {
		t.Errorf("the edit took %v to be taken, more than %v", d, pushDeadline)
	}
	if v := decide(); v.Allowed || v.Reason != "echo_refused" {
		t.Fatalf("after the edit: %+v", v)
	}

	edit(string(base) + "  - id: org.bad\n    deny: 'tool =='\n    reason: x\n")
	pol, _ := waitReady(t, in, "said the broken edit was not taken", func(p readyPolicy) bool { return p.ReloadError != "" })
	if !strings.Contains(pol.ReloadError, filepath.Base(w.policy)+":") || pol.Revision != second || resp200(t, in.url+"/readyz") != http.StatusOK {
		t.Fatalf("/readyz after a broken edit: %+v", pol)
	}
	if strings.Contains(pol.ReloadError, "org.bad") {
		t.Fatalf("/readyz, which takes no token, says what the policy holds: %v", pol.ReloadError)
	}
	req, _ := http.NewRequest("GET", in.url+"/v1/policy", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	presp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := io.ReadAll(presp.Body)
	presp.Body.Close()
	if !strings.Contains(string(shown), "# the last change was not taken") || !strings.Contains(string(shown), "rule org.bad") {
		t.Fatalf("GET /v1/policy after a broken edit:\n%s", shown)
	}
	if v := decide(); v.Allowed || v.Reason != "echo_refused" {
		t.Fatalf("the last good policy no longer decides: %+v", v)
	}
	if !strings.Contains(logs.String(), "does not load") || !strings.Contains(logs.String(), filepath.Base(w.policy)+":") {
		t.Fatalf("the log does not say where the policy is wrong:\n%s", logs.String())
	}

	edit(string(base))
	waitForChange(t, in, second)
	if v := decide(); !v.Allowed {
		t.Fatalf("after the mend: %+v", v)
	}
	if rev := policyRev(t, in, tok); rev != first {
		t.Fatalf("the mended file decides as %s, want %s again", rev, first)
	}
}

func resp200(t *testing.T, url string) int {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestShadowAndMonitorOnTheService: a shadow revision decides every live
// call beside the active one without changing a verdict, and veto policy
// diff lists where they differ, by rule; a rule in monitor mode lets the
// call run and records would_deny, counted in /metrics.
//
// E38
func TestShadowAndMonitorOnTheService(t *testing.T) {
	dsn := freshPG(t)
	w := newWorld(t)
	in := serveProcess(t, w, "--postgres", dsn)
	tok, err := runVeto(t, w, "token", "create", "--actor", "service:shadow", "--postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	tok = strings.TrimSpace(tok)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	revOf := regexp.MustCompile(`pushed revision (p-[0-9a-f]{12})`)
	push := func(args ...string) string {
		t.Helper()
		out, err := runVeto(t, w, append([]string{"policy", "push", "--postgres", dsn}, args...)...)
		m := revOf.FindStringSubmatch(out)
		if err != nil || m == nil {
			t.Fatalf("push %v: %v\n%s", args, err, out)
		}
		return m[1]
	}
	n := 0
	decide := func(cmd string) (veto.Verdict, veto.Event) {
		t.Helper()
		n++
		run := "shadow-" + strings.Repeat("s", n)
		c := &veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: w.work, Run: veto.Run{Ref: run, Fresh: true}}
		v, _ := client.New(in.url, tok, nil).Decide(ctx, c)
		return v, lastDecision(t, in, tok, run)
	}

	active := push(w.policy)
	shadow := push("--shadow", w.policy, write("deny.yaml", denyEcho))
	waitForShadow(t, in, shadow)
	for i := 0; i < 3; i++ {
		if v, ev := decide("echo hello"); !v.Allowed || ev.PolicyRev != active {
			t.Fatalf("the shadow changed a verdict: %+v (under %s)", v, ev.PolicyRev)
		}
	}
	if v, _ := decide("ls"); !v.Allowed {
		t.Fatalf("ls: %+v", v)
	}
	var out string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out, err = runVeto(t, w, "policy", "diff", "--postgres", dsn)
		if err == nil && strings.Contains(out, "3 call(s) decided otherwise") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out, "deny org.no-echo (echo_refused)") || !strings.Contains(out, "3 call(s) decided otherwise by "+shadow) ||
		!regexp.MustCompile(`(?m)^3\s+Bash\s+allow\s+deny org.no-echo`).MatchString(out) {
		t.Fatalf("veto policy diff (%v):\n%s", err, out)
	}
	if strings.Contains(out, "echo hello") {
		t.Fatalf("the diff quotes a call's arguments:\n%s", out)
	}

	// The same rule in monitor mode, active: the call runs, and the
	// record says what would have refused it.
	monitored := push(w.policy, write("monitor.yaml", denyEcho+"    mode: monitor\n"))
	waitFor(t, in, monitored)
	v, ev := decide("echo hello")
	if !v.Allowed || v.WouldDeny != "org.no-echo" || v.WouldReason != "echo_refused" ||
		ev.Kind != veto.EventAllowed || ev.WouldDeny != "org.no-echo" || ev.WouldReason != "echo_refused" || ev.PolicyRev != monitored {
		t.Fatalf("monitor mode: %+v, recorded %+v", v, ev)
	}
	// Four differences: the monitored call too, which the shadow refuses
	// (compared off the decision path: the count is waited for).
	wants := []string{`veto_would_deny_total{reason="echo_refused",rule="org.no-echo"} 1`,
		`veto_policy_info{from="revision",revision="` + monitored + `",shadow="` + shadow + `"} 1`, "veto_shadow_differences_total 4"}
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		text := metricsText(t, in)
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(text, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			break
		}
	}
	if len(missing) > 0 {
		t.Errorf("/metrics lacks %v", missing)
	}
	if out, err := runVeto(t, w, "policy", "activate", "--shadow", "none", "--postgres", dsn); err != nil {
		t.Fatalf("ending the shadow: %v %s", err, out)
	}
	waitForShadow(t, in, "")
}

func metricsText(t *testing.T, in *instance) string {
	t.Helper()
	resp, err := http.Get(in.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// readyPolicy is /readyz's account of the policy deciding now.
type readyPolicy struct {
	Revision    string `json:"revision"`
	Shadow      string `json:"shadow"`
	ReloadError string `json:"reload_error"`
}

// waitReady waits until the instance's /readyz says what ok wants, and
// returns that account and when it came; what names the wait in a failure.
func waitReady(t *testing.T, in *instance, what string, ok func(readyPolicy) bool) (readyPolicy, time.Time) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(in.url + "/readyz")
		if err != nil {
			continue
		}
		var body struct {
			Policy readyPolicy `json:"policy"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if ok(body.Policy) {
			return body.Policy, time.Now()
		}
	}
	t.Fatalf("%s never %s", in.url, what)
	return readyPolicy{}, time.Time{}
}

// waitFor waits until the instance decides with rev, and returns when.
func waitFor(t *testing.T, in *instance, rev string) time.Time {
	t.Helper()
	_, at := waitReady(t, in, "took revision "+rev, func(p readyPolicy) bool { return p.Revision == rev })
	return at
}

// waitForChange waits until the instance decides with another revision
// than rev, and returns it.
func waitForChange(t *testing.T, in *instance, rev string) string {
	t.Helper()
	p, _ := waitReady(t, in, "left revision "+rev, func(p readyPolicy) bool { return p.Revision != "" && p.Revision != rev })
	return p.Revision
}

func waitForShadow(t *testing.T, in *instance, rev string) {
	t.Helper()
	waitReady(t, in, "took shadow "+rev, func(p readyPolicy) bool { return p.Shadow == rev })
}
