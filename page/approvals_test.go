package page_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPageApprovesInChromium: the page lists the call waiting for a
// person, and its approve button, posted with the session's form token,
// lets the same call through once; a form posted without the token is
// refused. The form carries the argument hash the card showed.
func TestPageApprovesInChromium(t *testing.T) {
	bin := chromium(t)
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", map[string]any{"command": "make deploy"}))

	ctx := browser(t, bin)
	const q = `#questions article.question[data-call="c1"][data-rule="deploy-needs-person"]`
	if err := chromedp.Do(ctx, signIn(s.url, person), chromedp.WaitVisible(q),
		chromedp.Click(q+` button.approve`), chromedp.WaitNotPresent(q)); err != nil {
		t.Fatal(err)
	}
	if _, m := s.post("/v1/decide", agent, s.call("c2", "r1", "Bash", map[string]any{"command": "make deploy"})); m["verdict"] != "allow" {
		t.Fatalf("after the page's approval: %v", m)
	}
	evs, _ := st.Events(context.Background(), "r1", 0)
	var by string
	for _, e := range evs {
		if e.Kind == "approval_granted" {
			by = e.Actor.Kind + ":" + e.Actor.ID
		}
	}
	if by != "user:ann" {
		t.Fatalf("the approval is recorded as %q's", by)
	}
	// A form posted from elsewhere (no token) is refused.
	s.post("/v1/decide", agent, s.call("c3", "r1", "Bash", map[string]any{"command": "make deploy"}))
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/ui/approvals/r1/c3", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "answer=approve&args_hash=`+argsHash(map[string]any{"command": "make deploy"})+`"}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if status != 403 {
		t.Fatalf("a form without its token: %d", status)
	}
}
