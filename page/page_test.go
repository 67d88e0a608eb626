package page_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto/internal/browsertest"
)

func chromium(t *testing.T) string { return browsertest.Chromium(t) }

// browser is a headless Chromium for one test, bounded to 90 s.
func browser(t *testing.T, bin string) context.Context {
	return browsertest.New(t, bin, 90*time.Second)
}

// TestPageInChromium: the page in headless Chromium shows a refusal card
// for each denial, found by its data attributes, with no argument text;
// a denial made while the page is open appears on it; the filters and a
// run's timeline work; the one-time key opens one session only.
func TestPageInChromium(t *testing.T) {
	bin := chromium(t)
	const canary = "CANARY-page-51e2"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:alice")
	s.post("/v1/runs", tok, map[string]any{"ref": "r1", "fresh": true})
	s.post("/v1/decide", tok, s.call("c1", "r1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}))
	s.post("/v1/decide", tok, s.call("c2", "r1", "Bash", map[string]any{"command": "cat ~/.ssh/id_rsa # " + canary}))

	ctx := browser(t, bin)

	key := s.h.OneTimeKey()
	const credCard = `article.refusal[data-rule="file.credential"][data-reason="credential_path"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui/login?k="+key), chromedp.WaitVisible(credCard)); err != nil {
		t.Fatal(err)
	}
	cardText, err := chromedp.Run(ctx, chromedp.Text(credCard))
	if err != nil {
		t.Fatal(err)
	}
	allowedRows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('article.allowed').length`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cardText, "credential_path") || !strings.Contains(cardText, "file.credential") {
		t.Fatalf("the card does not say why: %q", cardText)
	}
	if allowedRows != 1 {
		t.Fatalf("%d allowed rows, want 1", allowedRows)
	}
	// A denial made now is drawn live, first.
	s.post("/v1/decide", tok, s.call("c3", "r1", "WebFetch", map[string]any{"url": "http://169.254.169.254/latest/?q=" + canary}))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`article.refusal[data-reason="egress_metadata"]`)); err != nil {
		t.Fatal(err)
	}
	firstReason, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#decisions > article').dataset.reason`))
	if err != nil {
		t.Fatal(err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if firstReason != "egress_metadata" {
		t.Fatalf("the live denial is not first: %s", firstReason)
	}
	if strings.Contains(html, canary) {
		t.Fatal("the page shows a call's argument text")
	}
	// Filters: denials only; a run's timeline.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui?verdict=deny&risk=critical"), chromedp.WaitVisible(credCard)); err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('article.allowed').length + document.querySelectorAll('article.refusal:not([data-risk="critical"])').length`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui/runs/r1"),
		chromedp.WaitVisible(`li[data-kind="invocation_denied"][data-rule="file.credential"]`)); err != nil {
		t.Fatal(err)
	}
	timeline, err := chromedp.Run(ctx, chromedp.Text("#history"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the deny/critical filter shows %d other rows", n)
	}
	if timeline != "complete" {
		t.Fatalf("the run's history reads %q", timeline)
	}

	// The key was used: a second session is refused. Reading works
	// without a script: the cards are in the HTML.
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(s.url + "/ui/login?k=" + key)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("the one-time key opened a second session: %d", resp.StatusCode)
	}
	if resp, _ := hc.Get(s.url + "/ui"); resp.StatusCode != 401 {
		t.Fatalf("/ui without a session: %d", resp.StatusCode)
	}
	resp, err = signInPost(hc, s.url, tok) // a token of veto token create opens one too
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `data-rule="file.credential"`) || strings.Contains(string(body), canary) {
		t.Fatalf("the page without a script: %d\n%s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("no content security policy: %q", csp)
	}
}

// Every form of the page refuses a request the browser says came from
// another site or origin, even with the session's form token: approve and
// deny, an input, the what-if (and an MCP tool's definition, which this
// service, without MCP pins, refuses anyway).
func TestPageFormsRefuseOtherOrigins(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := signInPost(hc, s.url, tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The session's form token goes with each post: only the browser's
	// word about where the request came from refuses it.
	resp, err = hc.Get(s.url + "/ui/whatif")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, _ := strings.Cut(string(page), `name="csrf" value="`)
	csrf, _, _ := strings.Cut(rest, `"`)
	if csrf == "" {
		t.Fatal("no form token on the what-if page")
	}
	for _, path := range []string{"/ui/approvals/r1/c1", "/ui/inputs/r1/c1", "/ui/pins/srv/tool", "/ui/whatif"} {
		for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
			rq, _ := http.NewRequest("POST", s.url+path, strings.NewReader("answer=approve&csrf="+url.QueryEscape(csrf)))
			rq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range h {
				rq.Header.Set(k, v)
			}
			resp, err := hc.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %v: %d, want 403", path, h, resp.StatusCode)
			}
		}
	}
}
