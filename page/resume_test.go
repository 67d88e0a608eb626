package page_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/celrule"
	"github.com/vetohq/veto/server/servertest"
)

// frozenPolicy is servertest.Policy with deploys frozen: the policy a hook
// process started after the change decides with.
const frozenPolicy = servertest.Policy + `  - id: deploy-frozen
    match: {tool: Bash}
    deny: 'args.command.startsWith("make deploy")'
    reason: deploy_frozen
    message: Deploys are frozen.
`

// gateOf is a gate of policy text on st, as another process would build
// it over the same state.
func gateOf(t *testing.T, w world, st veto.Store, text string) *veto.Gate {
	t.Helper()
	path := filepath.Join(t.TempDir(), "veto.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cel, err := celrule.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(policy.LoadOptions{FlagPath: path, Compiler: cel})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Gate(policy.BuildOptions{Store: st, Home: w.home, Vars: map[string]string{"HOME": w.home, "TMPDIR": os.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestPageShowsRefusedAtResumeInChromium: a person approves a waiting call
// on the page; the policy changes (a second gate on the same SQLite state,
// as a hook process with the new policy); the approved call, made again,
// is refused at resume: it runs zero times, the open page draws its card
// live (data-resume="refused", naming the approval), the approval's card
// reads refused, and the old policy asks again (the approval is used up).
// An approval that expired unused reads expired. No argument text
// anywhere on the page or its timeline.
func TestPageShowsRefusedAtResumeInChromium(t *testing.T) {
	bin := chromium(t)
	const canary = "CANARY-resume-93af"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	deploy := func(id, what string) map[string]any {
		return s.call(id, "r1", "Bash", map[string]any{"command": "make deploy " + what + " # " + canary})
	}
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	if _, m := s.post("/v1/decide", agent, deploy("c1", "prod")); m["verdict"] != "ask" {
		t.Fatalf("the question: %v", m)
	}

	ctx := browser(t, bin)
	const q = `#questions article.question[data-call="c1"]`
	if err := chromedp.Do(ctx, signIn(s.url, person), chromedp.WaitVisible(q),
		chromedp.Click(q+` button.approve`), chromedp.WaitNotPresent(q),
		chromedp.WaitVisible(`article.answer-card[data-call="c1"][data-state="waiting"]`)); err != nil {
		t.Fatal(err)
	}

	// The policy changes; the runtime makes the approved call again.
	frozen := gateOf(t, w, st, frozenPolicy)
	runs := 0
	c2 := &veto.Call{ID: "c2", Tool: "Bash", Args: map[string]any{"command": "make deploy prod # " + canary}, Cwd: w.work, Run: veto.Run{Ref: "r1"},
		Actor: veto.Actor{Kind: "agent", ID: "ci"}} // the actor asked about: a grant is for its calls
	if v := frozen.Decide(context.Background(), c2); v.Allowed {
		runs++
	} else if v.Rule != "deploy-frozen" || v.Ask {
		t.Fatalf("the approved call under the frozen policy: %+v", v)
	}
	if runs != 0 {
		t.Fatal("the approved call ran under a policy that refuses it")
	}
	var grant uint64
	evs, _ := st.Events(context.Background(), "r1", 0)
	for _, e := range evs {
		if e.Kind == veto.EventApproved && e.CallID == "c1" {
			grant = e.Seq
		}
		if e.Kind == veto.EventAllowed {
			t.Fatalf("a call was allowed: %+v", e)
		}
	}
	card := `article.refusal[data-resume="refused"][data-rule="deploy-frozen"][data-reason="deploy_frozen"][data-approval="` + itoa(grant) + `"]`
	if err := chromedp.Do(ctx, chromedp.WaitVisible(card)); err != nil {
		t.Fatalf("the refusal at resume is not drawn live: %v", err)
	}
	head, err := chromedp.Run(ctx, chromedp.Text(card+` .verdict`))
	if err != nil {
		t.Fatal(err)
	}
	if head != "refused at resume" {
		t.Fatalf("the card reads %q", head)
	}
	// The old policy, which would pass the question on the approval, asks
	// again: the refusal used the approval up.
	if _, m := s.post("/v1/decide", agent, deploy("c3", "prod")); m["verdict"] != "ask" {
		t.Fatalf("after the refusal at resume: %v", m)
	}
	// An approval that lapses unused.
	s.post("/v1/decide", agent, deploy("c4", "staging"))
	if code, m := s.post("/v1/approvals/r1/c4", person, map[string]any{"approve": true, "ttl": "1s",
		"args_hash": argsHash(map[string]any{"command": "make deploy staging # " + canary})}); code != 200 {
		t.Fatalf("approve c4: %d %v", code, m)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui?run=r1"),
		chromedp.WaitVisible(`article.answer-card[data-call="c1"][data-state="refused"]`),
		chromedp.WaitVisible(`article.answer-card[data-call="c4"][data-state="expired"]`),
		chromedp.WaitVisible(card)); err != nil {
		t.Fatal(err)
	}
	// The open question's card shows its call (masked) to the person;
	// the decisions and the timeline never do.
	page, err := chromedp.Run(ctx, chromedp.OuterHTML("#decisions"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui/runs/r1"),
		chromedp.WaitVisible(`li[data-kind="invocation_denied"][data-resume="refused"][data-rule="deploy-frozen"]`),
		chromedp.WaitVisible(`li[data-kind="approval_granted"][data-state="refused"]`),
		chromedp.WaitVisible(`li[data-kind="approval_granted"][data-state="expired"]`)); err != nil {
		t.Fatal(err)
	}
	timeline, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, html := range []string{page, timeline} {
		if strings.Contains(html, canary) || strings.Contains(html, "make deploy") {
			t.Fatalf("the page shows argument text:\n%s", html)
		}
	}
}

func itoa(n uint64) string {
	b := []byte{}
	for ; n > 0 || len(b) == 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// pageSession opens a page session with tok and returns its client.
func pageSession(t *testing.T, s *service, tok string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := signInPost(hc, s.url, tok)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	return hc, string(b)
}

func getPage(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestTimelineShowsTaint: a run's timeline names what tainted it (the read
// of private material, by event, tool and outcome, as the live policy's
// history rule counts it), with data attributes, and the refusal of a
// later send; a run that read nothing private says so; reading needs no
// script. The page holds no argument text.
func TestTimelineShowsTaint(t *testing.T) {
	const canary = "CANARY-taint-40be"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	for _, run := range []string{"r1", "r2"} {
		s.post("/v1/runs", tok, map[string]any{"ref": run, "fresh": true})
	}
	readme := s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
	secret := s.call("c2", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "secrets", "plan.txt")})
	for _, c := range []map[string]any{readme, secret} {
		if _, m := s.post("/v1/decide", tok, c); m["verdict"] != "allow" {
			t.Fatalf("read: %v", m)
		}
		c["outcome"] = "succeeded"
		if code, m := s.post("/v1/observe", tok, c); code != 200 {
			t.Fatalf("observe: %d %v", code, m)
		}
	}
	if _, m := s.post("/v1/decide", tok, s.call("c3", "r1", "WebFetch", map[string]any{"url": "https://docs.example.org/?q=" + canary})); m["reason"] != "private_read_before_egress" {
		t.Fatalf("the send after the private read: %v", m)
	}
	s.post("/v1/decide", tok, s.call("c4", "r2", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))

	hc, _ := pageSession(t, s, tok)
	code, page := getPage(t, hc, s.url+"/ui/runs/r1")
	if code != 200 {
		t.Fatalf("timeline: %d", code)
	}
	evs, _ := st.Events(context.Background(), "r1", 0)
	var obs uint64
	for _, e := range evs {
		if e.Kind == veto.EventAllowed && e.CallID == "c2" {
			obs = e.Seq
		}
	}
	for _, want := range []string{
		`id="taint" data-tainted="yes"`,
		`<li class="taint" data-seq="` + itoa(obs) + `" data-tool="Read" data-outcome="succeeded">`,
		`data-kind="invocation_allowed" data-seq="` + itoa(obs) + `" data-taint="private"`,
		`data-rule="sequence.no_egress_after_private_read" data-reason="private_read_before_egress"`,
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("the timeline lacks %q:\n%s", want, page)
		}
	}
	if n := len(regexp.MustCompile(`data-taint="private"`).FindAllString(page, -1)); n != 1 {
		t.Fatalf("%d steps marked tainting, want 1 (README.md is not private)", n)
	}
	if strings.Contains(page, canary) {
		t.Fatal("the timeline shows argument text")
	}
	if _, page := getPage(t, hc, s.url+"/ui/runs/r2"); !strings.Contains(page, `id="taint" data-tainted="no"`) || strings.Contains(page, `data-taint=`) {
		t.Fatalf("a clean run's timeline:\n%s", page)
	}
}

// TestPageShowsInputResumes: calls a runtime suspended for input (POST
// /v1/suspend) are shown as waiting for input; the runtime keeps the
// suspension, with the arguments, and resumes it with the person's values
// (POST /v1/resume); the page then shows the suspension resumed, or
// refused at resume when the live policy denies the call with the values
// applied (data-resume="refused", data-resumed="input"). Neither the
// call's arguments nor the values a person typed appear on the page, in
// the events or in the service's log.
func TestPageShowsInputResumes(t *testing.T) {
	const argCanary, typedCanary = "CANARY-arg-5b10", "CANARY-typed-e27d"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	s.post("/v1/runs", tok, map[string]any{"ref": "r1", "fresh": true})
	suspend := func(id string) json.RawMessage {
		c := s.call(id, "r1", "Bash", map[string]any{"command": "echo " + argCanary, "description": argCanary})
		code, m := s.post("/v1/suspend", tok, map[string]any{"call": c, "kind": "input", "fields": []string{"command"}})
		if code != 200 {
			t.Fatalf("suspend %s: %d %v", id, code, m)
		}
		b, _ := json.Marshal(m["suspension"])
		return b
	}
	ok, bad := suspend("c1"), suspend("c2")
	hc, _ := pageSession(t, s, tok)
	_, page := getPage(t, hc, s.url+"/ui?run=r1")
	for _, id := range []string{"c1", "c2"} {
		if !strings.Contains(page, `data-verdict="suspended" data-awaiting="input" data-state="waiting" data-call="`+id+`"`) {
			t.Fatalf("the page does not show %s waiting for input:\n%s", id, page)
		}
	}
	resume := func(sus json.RawMessage, command string) map[string]any {
		_, m := s.post("/v1/resume", tok, map[string]any{"suspension": sus, "input": map[string]any{"command": command}})
		return m
	}
	if m := resume(ok, "ls # "+typedCanary); m["execute"] != true {
		t.Fatalf("the resume with an allowed value: %v", m)
	}
	if m := resume(bad, "cat ~/.ssh/id_rsa # "+typedCanary); m["execute"] == true {
		t.Fatalf("the resume with a credential read: %v", m)
	}
	_, page = getPage(t, hc, s.url+"/ui?run=r1")
	_, timeline := getPage(t, hc, s.url+"/ui/runs/r1")
	for _, want := range []string{
		`data-verdict="suspended" data-awaiting="input" data-state="resumed" data-call="c1"`,
		`data-verdict="suspended" data-awaiting="input" data-state="refused" data-call="c2"`,
		`data-rule="file.credential" data-reason="credential_path"`,
		`data-resume="refused" data-resumed="input"`,
		`data-verdict="allow" data-tool="Bash" data-run="r1"`,
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("the page lacks %q:\n%s", want, page)
		}
	}
	if !strings.Contains(timeline, `data-kind="call_suspended" data-seq="3" data-state="refused"`) ||
		!regexp.MustCompile(`data-kind="invocation_denied" data-seq="[0-9]+" data-rule="file.credential" data-reason="credential_path" data-resume="refused"`).MatchString(timeline) {
		t.Fatalf("the timeline:\n%s", timeline)
	}
	var stored strings.Builder
	_, _, bodies, _ := st.Chain(context.Background(), "r1")
	for _, b := range bodies {
		stored.Write(b)
	}
	for name, text := range map[string]string{"the page": page, "the timeline": timeline, "the events": stored.String(), "the log": s.logs.String()} {
		if strings.Contains(text, argCanary) || strings.Contains(text, typedCanary) {
			t.Fatalf("%s holds argument text or a typed value:\n%s", name, text)
		}
	}
}

// TestPagePersonsRefusalIsNoRefusalAtResume: a call a person refused on
// the page, asked about again (a client resuming it), is refused
// approval_refused, naming that answer; the page draws it as a refusal
// with its reason, not as a refusal at resume, and the answer's card reads
// denied.
func TestPagePersonsRefusalIsNoRefusalAtResume(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	deploy := s.call("c1", "r1", "Bash", map[string]any{"command": "make deploy"})
	if _, m := s.post("/v1/decide", agent, deploy); m["verdict"] != "ask" {
		t.Fatalf("the question: %v", m)
	}
	if code, m := s.post("/v1/approvals/r1/c1", person, map[string]any{"approve": false, "args_hash": argsHash(deploy["args"].(map[string]any))}); code != 200 {
		t.Fatalf("the refusal: %d %v", code, m)
	}
	if _, m := s.post("/v1/decide", agent, deploy); m["reason"] != "approval_refused" {
		t.Fatalf("asked again after a person's refusal: %v", m)
	}
	hc, _ := pageSession(t, s, person)
	_, page := getPage(t, hc, s.url+"/ui?run=r1")
	if !regexp.MustCompile(`<article class="decision refusal risk-[a-z]+" data-verdict="deny" data-rule="deploy-needs-person" data-reason="approval_refused"[^>]*data-seq="[0-9]+" data-answered="[0-9]+">`).MatchString(page) ||
		!strings.Contains(page, `data-answer="denied" data-state="denied" data-call="c1"`) || strings.Contains(page, `data-resume=`) || strings.Contains(page, "A person approved this call") {
		t.Fatalf("the page:\n%s", page)
	}
}

// TestPageShowsUsedApproval: an approval the call then used reads used on
// its card and on the timeline, and the allow that used it names it.
func TestPageShowsUsedApproval(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", map[string]any{"command": "make deploy"}))
	s.post("/v1/approvals/r1/c1", person, map[string]any{"approve": true, "args_hash": argsHash(map[string]any{"command": "make deploy"})})
	if _, m := s.post("/v1/decide", agent, s.call("c2", "r1", "Bash", map[string]any{"command": "make deploy"})); m["verdict"] != "allow" {
		t.Fatalf("the approved call: %v", m)
	}
	hc, _ := pageSession(t, s, person)
	_, page := getPage(t, hc, s.url+"/ui?run=r1")
	_, timeline := getPage(t, hc, s.url+"/ui/runs/r1")
	if !strings.Contains(page, `data-answer="granted" data-state="used" data-call="c1"`) ||
		!strings.Contains(page, `data-verdict="allow" data-tool="Bash" data-run="r1" data-seq="4" data-resume="approved" data-approval="3"`) {
		t.Fatalf("the page:\n%s", page)
	}
	if !strings.Contains(timeline, `data-kind="approval_granted" data-seq="3" data-rule="deploy-needs-person" data-reason="deploy_needs_person" data-state="used"`) ||
		!strings.Contains(timeline, `data-kind="invocation_allowed" data-seq="4" data-resume="approved"`) {
		t.Fatalf("the timeline:\n%s", timeline)
	}
}
