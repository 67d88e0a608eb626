package page_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/client"
	"github.com/vetohq/veto/server"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// sqliteAt is a real SQLite state whose files the test reads: the store
// and its directory.
func sqliteAt(t testing.TB) (*sqlstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "veto.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

// stateBytes is every byte of the SQLite state's files (the database, its
// write-ahead log).
func stateBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

// vetoLog is what `veto log --all` prints of the state at dir.
func vetoLog(t *testing.T, dir string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := cli.Main(context.Background(), []string{"log", "--all", "--json", "--state", filepath.Join(dir, "veto.db")}, nil, &out, &errs); code != 0 {
		t.Fatalf("veto log: %d %s", code, errs.String())
	}
	return out.String()
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// postForm posts the page's form fields to path with the session's client
// hc (its redirects not followed) and returns the status and the body.
func postForm(t *testing.T, hc *http.Client, target string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// giveInput answers the call's request for input on the page, as the
// person of token.
func giveInput(t *testing.T, s *service, token, run, call string, values map[string]string) {
	t.Helper()
	hc, _ := pageSession(t, s, token)
	_, page := getPage(t, hc, s.url+"/ui?run="+url.QueryEscape(run))
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page")
	}
	form := url.Values{"csrf": {m[1]}}
	for k, v := range values {
		form.Set("in."+k, v)
	}
	if code, body := postForm(t, hc, s.url+"/ui/inputs/"+run+"/"+call, form, nil); code != 303 {
		t.Fatalf("the input: %d\n%s", code, body)
	}
}

// take is the runtime's GET /v1/inputs/{run}/{call}: the status and the
// JSON answer.
func (s *service) take(run, call, token, wait string) (int, map[string]any) {
	s.t.Helper()
	path := "/v1/inputs/" + run + "/" + call
	if wait != "" {
		path += "?wait=" + wait
	}
	return s.get(path, token)
}

// TestInputResumeRoundTrip: a runtime suspends calls for input; the page
// lists each with a text field per declared field (names escaped); a
// person's session posts the values with its form token; the runtime that
// suspended the call takes them once (a long poll returns as the answer
// comes; another actor is refused; a second take gets none) and resumes
// with them: the call is decided again with the live policy, allowed for
// one value and refused at resume for another. The form is refused without
// its token, from another site, from an agent's session, with a field
// missing or extra, or too large. Canaries in the call's arguments and in
// the typed values appear nowhere: not in the state's files, the
// service's log, veto log, nor any page.
func TestInputResumeRoundTrip(t *testing.T) {
	const argCanary, typedCanary = "CANARY-arg-77c1", "CANARY-typed-3f9a"
	w := newWorld(t)
	st, dir := sqliteAt(t)
	s := start(t, w, st, "sqlite", nil)
	agent, other, person := s.token("agent:ci"), s.token("agent:other"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	suspend := func(id string, fields ...string) json.RawMessage {
		t.Helper()
		c := s.call(id, "r1", "Bash", map[string]any{"command": "echo " + argCanary, "description": argCanary})
		code, m := s.post("/v1/suspend", agent, map[string]any{"call": c, "kind": "input", "fields": fields})
		if code != 200 || m["input_form"] != true {
			t.Fatalf("suspend %s: %d %v", id, code, m)
		}
		b, _ := json.Marshal(m["suspension"])
		return b
	}
	sus1, sus2 := suspend("c1", "command"), suspend("c2", "command")
	suspend("c3", "command", `<b>"odd"</b>`)

	// Nothing yet: at once, and after a short wait.
	if code, _ := s.take("r1", "c1", agent, ""); code != 204 {
		t.Fatalf("a take before the answer: %d", code)
	}
	began := time.Now()
	if code, _ := s.take("r1", "c1", agent, "300ms"); code != 204 || time.Since(began) < 300*time.Millisecond {
		t.Fatalf("a waiting take before the answer: %d after %v", code, time.Since(began))
	}
	for _, c := range []struct {
		name, run, call, token, wait string
		status                       int
		reason                       string
	}{
		{"another agent", "r1", "c1", other, "", 403, "actor_mismatch"},
		{"the person", "r1", "c1", person, "", 403, "actor_mismatch"},
		{"a wait too long", "r1", "c1", agent, "90s", 400, "request_invalid"},
		{"a wait unreadable", "r1", "c1", agent, "soon", 400, "request_invalid"},
		{"no such call", "r1", "c9", agent, "", 404, "no_input"},
		{"no token", "r1", "c1", "", "", 401, "unauthenticated"},
	} {
		if code, m := s.take(c.run, c.call, c.token, c.wait); code != c.status || m["reason"] != c.reason {
			t.Fatalf("%s: %d %v, want %d %s", c.name, code, m, c.status, c.reason)
		}
	}

	// The page: a form for each, one field per declared name, escaped.
	hc, _ := pageSession(t, s, person)
	code, page := getPage(t, hc, s.url+"/ui?run=r1")
	if code != 200 {
		t.Fatalf("the page: %d", code)
	}
	for _, want := range []string{
		`<article class="input-request state-waiting" data-run="r1" data-call="c1" data-tool="Bash" data-state="waiting">`,
		`<form method="post" action="/ui/inputs/r1/c1" class="input-form" autocomplete="off">`,
		`<textarea name="in.command" data-field="command"`,
		`suspended by <span class="asker">agent:ci</span>`,
		`name="in.&lt;b&gt;&#34;odd&#34;&lt;/b&gt;"`,
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `<b>"odd"`) {
		t.Fatal("a field's name is not escaped")
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page")
	}
	csrf := m[1]
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {csrf}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	agentPage := signInRefused(t, s, agent) // a service's token signs in to nothing
	_, ap := getPage(t, agentPage, s.url+"/ui?run=r1")
	agentCSRF := csrfField.FindStringSubmatch(ap)
	if agentCSRF != nil || strings.Contains(ap, `class="input-form"`) {
		t.Fatalf("an agent's page offers the form:\n%s", ap)
	}
	big := strings.Repeat("x", 9<<10)
	for _, c := range []struct {
		name   string
		hc     *http.Client
		call   string
		form   url.Values
		header map[string]string
		status int
	}{
		{"no form token", hc, "c1", url.Values{"in.command": {typedCanary}}, nil, 403},
		{"a wrong form token", hc, "c1", url.Values{"csrf": {"00ff"}, "in.command": {typedCanary}}, nil, 403},
		{"another site", hc, "c1", form("in.command", typedCanary), map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"another origin", hc, "c1", form("in.command", typedCanary), map[string]string{"Origin": "http://evil.example"}, 403},
		{"a field missing", hc, "c3", form("in.command", typedCanary), nil, 400},
		{"a field extra", hc, "c1", form("in.command", typedCanary, "in.cwd", "/"), nil, 400},
		{"no field", hc, "c1", form(), nil, 400},
		{"a field given twice", hc, "c1", url.Values{"csrf": {csrf}, "in.command": {"a", "b"}}, nil, 400},
		{"a value too large", hc, "c1", form("in.command", big), nil, 413},
		{"a body too large", hc, "c1", form("in.command", strings.Repeat(big, 10)), nil, 413},
		{"no such call", hc, "c9", form("in.command", typedCanary), nil, 404},
	} {
		if code, body := postForm(t, c.hc, s.url+"/ui/inputs/r1/"+c.call, c.form, c.header); code != c.status || strings.Contains(body, typedCanary) {
			t.Fatalf("%s: %d, want %d:\n%s", c.name, code, c.status, body)
		}
	}
	// An agent has no session, so no form token: its post is refused.
	agentForm := url.Values{"in.command": {typedCanary}}
	if m := csrfField.FindStringSubmatch(ap); m != nil {
		agentForm.Set("csrf", m[1])
	}
	if code, _ := postForm(t, agentPage, s.url+"/ui/inputs/r1/c1", agentForm, nil); code != 401 {
		t.Fatalf("an agent's session answered: %d", code)
	}
	if code, _ := s.take("r1", "c1", agent, ""); code != 204 {
		t.Fatalf("a refused form left values: %d", code)
	}

	// A long poll waiting on c2 returns as the person answers.
	polled := make(chan map[string]any, 1)
	go func() {
		code, m := s.take("r1", "c2", agent, "30s")
		if code != 200 {
			m = map[string]any{"status": code}
		}
		polled <- m
	}()
	time.Sleep(100 * time.Millisecond)
	if code, _ := postForm(t, hc, s.url+"/ui/inputs/r1/c1", form("in.command", "ls # "+typedCanary), nil); code != 303 {
		t.Fatalf("the person's input: %d", code)
	}
	if code, _ := postForm(t, hc, s.url+"/ui/inputs/r1/c1", form("in.command", "ls # "+typedCanary), nil); code != 409 {
		t.Fatalf("the input given twice: %d", code)
	}
	answeredAt := time.Now()
	if code, _ := postForm(t, hc, s.url+"/ui/inputs/r1/c2", form("in.command", "cat ~/.ssh/id_rsa # "+typedCanary), nil); code != 303 {
		t.Fatalf("the person's input for c2: %d", code)
	}
	var got2 map[string]any
	select {
	case got2 = <-polled:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not return on the answer")
	}
	if time.Since(answeredAt) > 5*time.Second || got2["input"] == nil {
		t.Fatalf("the long poll: %v", got2)
	}
	_, page = getPage(t, hc, s.url+"/ui?run=r1")
	if !strings.Contains(page, `<article class="input-request state-answered" data-run="r1" data-call="c1" data-tool="Bash" data-state="answered" data-by="user:ann">`) ||
		!strings.Contains(page, `data-call="c1" data-tool="Bash" data-run="r1" data-seq="2" data-input="answered" data-by="user:ann"`) {
		t.Fatalf("the page does not show c1 answered by ann:\n%s", page)
	}
	pages := []string{page}

	// The runtime takes c1's values once.
	code, got1 := s.take("r1", "c1", agent, "5s")
	if code != 200 {
		t.Fatalf("the take: %d %v", code, got1)
	}
	if in, _ := got1["input"].(map[string]any); len(in) != 1 || in["command"] != "ls # "+typedCanary {
		t.Fatalf("the values taken: %v", got1)
	}
	if by, _ := got1["by"].(map[string]any); by["kind"] != "user" || by["id"] != "ann" {
		t.Fatalf("by: %v", got1)
	}
	if code, m := s.take("r1", "c1", agent, "1s"); code != 404 || m["reason"] != "input_taken" {
		t.Fatalf("a second take: %d %v", code, m)
	}

	// And resumes with them: decided again with the live policy.
	resume := func(sus json.RawMessage, input any) map[string]any {
		_, m := s.post("/v1/resume", agent, map[string]any{"suspension": sus, "input": input})
		return m
	}
	r1 := resume(sus1, got1["input"])
	if args, _ := r1["args"].(map[string]any); r1["execute"] != true || args["command"] != "ls # "+typedCanary {
		t.Fatalf("the resume of c1: %v", r1)
	}
	r2 := resume(sus2, got2["input"])
	if v, _ := r2["verdict"].(map[string]any); r2["execute"] == true || v["reason"] != "credential_path" {
		t.Fatalf("the resume of c2 (a credential read typed in): %v", r2)
	}
	dec := decisions(t, st, "r1")
	if len(dec["c1"]) != 1 || dec["c1"][0].Kind != "invocation_allowed" || len(dec["c2"]) != 1 || dec["c2"][0].Kind != "invocation_denied" {
		t.Fatalf("the decisions at resume: %v", dec)
	}
	if code, m := s.take("r1", "c2", agent, ""); code != 404 || m["reason"] != "input_taken" {
		t.Fatalf("a take after the resume: %d %v", code, m)
	}

	_, page = getPage(t, hc, s.url+"/ui?run=r1")
	for _, want := range []string{
		`data-awaiting="input" data-state="resumed" data-call="c1" data-tool="Bash" data-run="r1" data-seq="2" data-input="resumed" data-by="user:ann"`,
		`data-awaiting="input" data-state="refused" data-call="c2"`,
		`data-resume="refused" data-resumed="input"`,
		`data-call="c3" data-tool="Bash" data-state="waiting"`,
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("the page after the resumes lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `class="input-request state-answered"`) || strings.Contains(page, `action="/ui/inputs/r1/c1"`) {
		t.Fatalf("the page still offers c1's form:\n%s", page)
	}
	_, timeline := getPage(t, hc, s.url+"/ui/runs/r1")
	_, fragment := getPage(t, hc, s.url+"/ui/inputs?run=r1")
	pages = append(pages, page, timeline, fragment, ap)
	for _, p := range pages {
		if strings.Contains(p, typedCanary) || strings.Contains(p, argCanary) {
			t.Fatalf("a page shows a typed value or an argument:\n%s", p)
		}
	}
	for name, b := range map[string][]byte{"the state's files": stateBytes(t, dir), "the service's log": s.logs.Bytes(), "veto log": []byte(vetoLog(t, dir))} {
		if bytes.Contains(b, []byte(typedCanary)) || bytes.Contains(b, []byte(argCanary)) {
			t.Fatalf("%s holds a typed value or an argument", name)
		}
	}
	if !strings.Contains(s.logs.String(), `"msg":"veto serve: a person gave a call's input"`) {
		t.Fatalf("the log does not say who gave the input:\n%s", s.logs.String())
	}
}

// TestPageGivesInputInChromium: with the page open, a runtime suspends a
// call for input; its form appears live; a person types the values into
// it and submits; the card reads answered by them; the runtime takes the
// values and resumes; the page shows the call resumed and holds neither
// the arguments nor the typed values.
func TestPageGivesInputInChromium(t *testing.T) {
	bin := chromium(t)
	const argCanary, typedCanary = "CANARY-arg-c0d4", "CANARY-typed-81be"
	w := newWorld(t)
	st, dir := sqliteAt(t)
	s := start(t, w, st, "sqlite", nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	s.post("/v1/decide", agent, s.call("c0", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))

	ctx := browser(t, bin)
	if err := chromedp.Do(ctx, signIn(s.url, person), chromedp.WaitVisible(`article.allowed`)); err != nil {
		t.Fatal(err)
	}
	c := s.call("c1", "r1", "Bash", map[string]any{"command": "echo " + argCanary})
	code, m := s.post("/v1/suspend", agent, map[string]any{"call": c, "kind": "input", "fields": []string{"command", "description"}})
	if code != 200 || m["input_form"] != true {
		t.Fatalf("suspend: %d %v", code, m)
	}
	sus, _ := json.Marshal(m["suspension"])
	const form = `#inputs article.input-request[data-call="c1"] form.input-form`
	if err := chromedp.Do(ctx, chromedp.WaitVisible(form),
		chromedp.SendKeys(form+` textarea[data-field="command"]`, "ls -la # "+typedCanary),
		chromedp.SendKeys(form+` textarea[data-field="description"]`, "list "+typedCanary),
		chromedp.Click(form+` button[type="submit"]`),
		chromedp.WaitVisible(`#inputs article.input-request[data-call="c1"][data-state="answered"][data-by="user:ann"]`)); err != nil {
		t.Fatalf("the form: %v", err)
	}
	by, err := chromedp.Run(ctx, chromedp.Text(`#inputs article.input-request[data-call="c1"] .by`))
	if err != nil || by != "user:ann" {
		t.Fatalf("answered by %q (%v)", by, err)
	}
	code, got := s.take("r1", "c1", agent, "5s")
	in, _ := got["input"].(map[string]any)
	if code != 200 || in["command"] != "ls -la # "+typedCanary || in["description"] != "list "+typedCanary {
		t.Fatalf("the take: %d %v", code, got)
	}
	_, res := s.post("/v1/resume", agent, map[string]any{"suspension": json.RawMessage(sus), "input": in})
	if args, _ := res["args"].(map[string]any); res["execute"] != true || args["command"] != "ls -la # "+typedCanary {
		t.Fatalf("the resume: %v", res)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui?run=r1"),
		chromedp.WaitVisible(`article.suspended[data-call="c1"][data-state="resumed"][data-input="resumed"][data-by="user:ann"]`),
		chromedp.WaitVisible(`article.allowed[data-resumed="input"]`),
		chromedp.WaitNotPresent(`#inputs article.input-request[data-call="c1"]`)); err != nil {
		t.Fatal(err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, typedCanary) || strings.Contains(html, argCanary) {
		t.Fatalf("the page shows a typed value or an argument:\n%s", html)
	}
	for name, b := range map[string][]byte{"the state's files": stateBytes(t, dir), "the service's log": s.logs.Bytes(), "veto log": []byte(vetoLog(t, dir))} {
		if bytes.Contains(b, []byte(typedCanary)) || bytes.Contains(b, []byte(argCanary)) {
			t.Fatalf("%s holds a typed value or an argument", name)
		}
	}
}

// TestClientAwaitsInputFromItsInstance: two instances on one state; a
// runtime suspends a call for input through one (the Go client). The
// other's page does not list it, cannot answer it, and its take answers
// 404: the request lives in the memory of the instance it was suspended
// through. There a person answers; the client's AwaitInput, waiting
// longer than its HTTP client's own timeout, returns the values as they
// are given, once; Resume runs the call with them.
func TestClientAwaitsInputFromItsInstance(t *testing.T) {
	const typedCanary = "CANARY-typed-a51d"
	w := newWorld(t)
	st, d := sqliteStore(t)
	a, b := start(t, w, st, d, nil), start(t, w, st, d, nil)
	agent, person := a.token("agent:ci"), a.token("user:ann")
	ctx := context.Background()
	ca := client.New(a.url, agent, &http.Client{Timeout: time.Second})
	cb := client.New(b.url, agent, nil)
	if err := ca.Start(ctx, "r1", true); err != nil {
		t.Fatal(err)
	}
	call := &veto.Call{ID: "c1", Tool: "Bash", Args: map[string]any{"command": "echo placeholder"}, Cwd: w.work, Run: veto.Run{Ref: "r1"}}
	sus, err := ca.Suspend(ctx, call, veto.AwaitInput, []string{"command"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ca.AwaitInput(ctx, "r1", "c1", 100*time.Millisecond); ok || err != nil {
		t.Fatalf("before the answer: %v %v", ok, err)
	}
	if _, _, err := ca.AwaitInput(ctx, "r1", "c1", 2*time.Minute); err == nil {
		t.Fatal("a wait of 2 minutes was asked")
	}
	var ce *client.Error
	if _, _, err := cb.AwaitInput(ctx, "r1", "c1", 0); !errors.As(err, &ce) || ce.Status != 404 || ce.Reason != "no_input" {
		t.Fatalf("the other instance's take: %v", err)
	}
	// A question, so that the other page has a form, and its token.
	if _, m := b.post("/v1/decide", agent, b.call("q1", "r1", "Bash", map[string]any{"command": "make deploy"})); m["verdict"] != "ask" {
		t.Fatalf("the question: %v", m)
	}
	hb, _ := pageSession(t, b, person)
	_, pageB := getPage(t, hb, b.url+"/ui?run=r1")
	if strings.Contains(pageB, `class="input-request`) || !strings.Contains(pageB, `data-awaiting="input" data-state="waiting" data-call="c1"`) {
		t.Fatalf("the other instance's page:\n%s", pageB)
	}
	if m := csrfField.FindStringSubmatch(pageB); m == nil {
		t.Fatal("no form token on the other page")
	} else if code, _ := postForm(t, hb, b.url+"/ui/inputs/r1/c1", url.Values{"csrf": {m[1]}, "in.command": {typedCanary}}, nil); code != 404 {
		t.Fatalf("the other instance took an answer: %d", code)
	}

	// The wait (3 s) outlasts the HTTP client's timeout (1 s).
	given := make(chan struct{})
	go func() {
		defer close(given)
		time.Sleep(1500 * time.Millisecond)
		giveInput(t, a, person, "r1", "c1", map[string]string{"command": "ls # " + typedCanary})
	}()
	// The answer's request is over (its log lines written) before the
	// test ends or reads the logs.
	defer func() { <-given }()
	began := time.Now()
	in, ok, err := ca.AwaitInput(ctx, "r1", "c1", 3*time.Second)
	if err != nil || !ok || in.Values["command"] != "ls # "+typedCanary || in.By != (veto.Actor{Kind: "user", ID: "ann"}) {
		t.Fatalf("the wait: %+v %v %v after %v", in, ok, err, time.Since(began))
	}
	if _, _, err := ca.AwaitInput(ctx, "r1", "c1", 0); !errors.As(err, &ce) || ce.Status != 404 || ce.Reason != "input_taken" {
		t.Fatalf("taken twice: %v", err)
	}
	res, err := ca.Resume(ctx, sus, false, in.Values)
	if err != nil || !res.Execute || res.Args["command"] != "ls # "+typedCanary {
		t.Fatalf("the resume: %+v %v", res, err)
	}
	if strings.Contains(a.logs.String()+b.logs.String(), typedCanary) {
		t.Fatal("a log holds the typed value")
	}
}

// TestInputRequestsExpire: a request no person answers is dropped after
// an hour, and values the runtime does not take 10 minutes after the
// answer: the page lists neither, and a take answers 404.
func TestInputRequestsExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, func(c *server.Config) { c.Now = clock })
	agent, person := s.token("agent:ci"), s.token("user:ann")
	for _, id := range []string{"c1", "c2"} {
		c := s.call(id, "r1", "Bash", map[string]any{"command": "ls"})
		if code, m := s.post("/v1/suspend", agent, map[string]any{"call": c, "kind": "input", "fields": []string{"command"}}); code != 200 || m["input_form"] != true {
			t.Fatalf("suspend: %d %v", code, m)
		}
	}
	advance(5 * time.Minute)
	giveInput(t, s, person, "r1", "c2", map[string]string{"command": "ls -l"})
	advance(11 * time.Minute) // c2's values untaken for 11 min
	if code, m := s.take("r1", "c2", agent, ""); code != 404 || m["reason"] != "no_input" {
		t.Fatalf("values past their time: %d %v", code, m)
	}
	if code, _ := s.take("r1", "c1", agent, ""); code != 204 {
		t.Fatalf("a request within its hour: %d", code)
	}
	advance(45 * time.Minute) // c1 unanswered for 61 min
	if code, m := s.take("r1", "c1", agent, ""); code != 404 || m["reason"] != "no_input" {
		t.Fatalf("a request past its hour: %d %v", code, m)
	}
	hc, _ := pageSession(t, s, person)
	if _, page := getPage(t, hc, s.url+"/ui?run=r1"); strings.Contains(page, `class="input-request`) || strings.Contains(page, `data-input=`) {
		t.Fatalf("the page still lists an expired request:\n%s", page)
	}
}

// TestInputTakenOnceByConcurrentTakes: eight takes wait on one call at
// once; when the person answers, exactly one gets the values and the
// others are told they were taken.
func TestInputTakenOnceByConcurrentTakes(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	c := s.call("c1", "r1", "Bash", map[string]any{"command": "ls"})
	if code, m := s.post("/v1/suspend", agent, map[string]any{"call": c, "kind": "input", "fields": []string{"command"}}); code != 200 {
		t.Fatalf("suspend: %d %v", code, m)
	}
	type result struct {
		code   int
		reason any
	}
	results := make(chan result, 8)
	for range 8 {
		go func() {
			code, m := s.take("r1", "c1", agent, "20s")
			results <- result{code, m["reason"]}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	giveInput(t, s, person, "r1", "c1", map[string]string{"command": "ls -l"})
	got := map[result]int{}
	for range 8 {
		select {
		case r := <-results:
			got[r]++
		case <-time.After(15 * time.Second):
			t.Fatalf("the takes did not return: %v", got)
		}
	}
	if got[result{200, nil}] != 1 || got[result{404, "input_taken"}] != 7 {
		t.Fatalf("the takes: %v", got)
	}
}
