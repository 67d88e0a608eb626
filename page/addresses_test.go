package page_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlstore"
)

// grantsOf returns the call ids run's approval_granted events answer.
func grantsOf(t *testing.T, st *sqlstore.Store, run string) []string {
	t.Helper()
	evs, err := st.Events(context.Background(), run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Kind == veto.EventApproved {
			out = append(out, e.CallID)
		}
	}
	return out
}

// TestPageIDsCannotNameAnotherCallInChromium: a call id that climbs out of
// its address ("../../approvals/OTHER-RUN/OTHER-CALL", and its "%2e%2e"
// spelling, which a browser resolves the same) is one escaped segment of
// its form's address: clicking approve on its card, in Chromium, approves
// that call and no other, and the other run's question still waits. The
// run's link goes to its own timeline.
func TestPageIDsCannotNameAnotherCallInChromium(t *testing.T) {
	bin := chromium(t)
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	deploy := map[string]any{"command": "make deploy"}
	ctx := browser(t, bin)
	if err := chromedp.Do(ctx, signIn(s.url, person), chromedp.WaitVisible(`#decisions`)); err != nil {
		t.Fatal(err)
	}
	for i, climb := range []string{"../..", "%2e%2e/%2e%2e", "%2E%2E/.%2e"} {
		victim, attacker := "victim"+string(rune('1'+i)), "attacker"+string(rune('1'+i))
		evil := climb + "/approvals/" + victim + "/cv"
		for _, c := range []struct{ run, call string }{{victim, "cv"}, {attacker, evil}} {
			s.post("/v1/runs", agent, map[string]any{"ref": c.run, "fresh": true})
			if _, m := s.post("/v1/decide", agent, s.call(c.call, c.run, "Bash", deploy)); m["verdict"] != "ask" {
				t.Fatalf("%s/%s: %v", c.run, c.call, m)
			}
		}
		card := `#questions article.question[data-run="` + attacker + `"][data-call="` + evil + `"]`
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui"), chromedp.WaitVisible(card),
			chromedp.Click(card+` button.approve`), chromedp.WaitNotPresent(card)); err != nil {
			t.Fatalf("%s: %v", climb, err)
		}
		if g := grantsOf(t, st, victim); len(g) != 0 {
			t.Errorf("%s: the attacker's approve button approved %v in run %s", climb, g, victim)
		}
		if g := grantsOf(t, st, attacker); len(g) != 1 || g[0] != evil {
			t.Errorf("%s: the approve button's own call got %v", climb, g)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui"), chromedp.WaitVisible(`#decisions`)); err != nil {
			t.Fatal(err)
		}
		still, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#questions article.question[data-run="`+victim+`"]').length`))
		if err != nil || still != 1 {
			t.Errorf("%s: the other run's question is no longer waiting (%d, %v)", climb, still, err)
		}
	}
	// A run's link is its own timeline, whatever its ref holds.
	odd := "../../ui?x=1#y"
	s.post("/v1/runs", agent, map[string]any{"ref": odd, "fresh": true})
	s.post("/v1/decide", agent, s.call("c1", odd, "Bash", map[string]any{"command": "ls"}))
	link := `#decisions article.allowed[data-run="` + odd + `"] a`
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui"), chromedp.WaitVisible(link), chromedp.Click(link),
		chromedp.WaitVisible(`ol.timeline`)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Text(`h1 code`))
	if err != nil || title != odd {
		t.Fatalf("the run's link opened the timeline of %q (%v)", title, err)
	}
}

// TestPageFormsNameTheirAddress: a form posted to another call's address
// than the one it names (a resolved traversal, a hand-made post) answers
// nothing: 400, and no approval is recorded.
func TestPageFormsNameTheirAddress(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	deploy := map[string]any{"command": "make deploy"}
	s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", deploy))
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := signInPost(hc, s.url, person)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, page := getPage(t, hc, s.url+"/ui")
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page")
	}
	for _, want := range []string{`action="/ui/approvals/r1/c1"`, `name="run" value="r1"`, `name="call" value="c1"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the question's form lacks %s", want)
		}
	}
	form := url.Values{"csrf": {m[1]}, "run": {"r1"}, "call": {"other"}, "args_hash": {argsHash(deploy)}, "answer": {"approve"}}
	if code, _ := postForm(t, hc, s.url+"/ui/approvals/r1/c1", form, nil); code != http.StatusBadRequest {
		t.Fatalf("a form naming another call: %d", code)
	}
	if g := grantsOf(t, st, "r1"); len(g) != 0 {
		t.Fatalf("a form naming another call approved %v", g)
	}
	form.Set("call", "c1")
	if code, body := postForm(t, hc, s.url+"/ui/approvals/r1/c1", form, nil); code != http.StatusSeeOther {
		t.Fatalf("the form naming its own call: %d %s", code, body)
	}
}
