package page_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRevokedTokenEndsItsSessions: a page session opened with a person's
// token follows the token: once the token is revoked, within the token
// cache's second, the page asks for a sign-in again (401), a form posted
// with the session's form token answers nothing, and a live stream of the
// page ends. Another person's session stays.
func TestRevokedTokenEndsItsSessions(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, ann, bob := s.token("agent:ci"), s.token("user:ann"), s.token("user:bob")
	deploy := map[string]any{"command": "make deploy"}
	s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", deploy))
	session := func(tok string) *http.Client {
		jar, _ := cookiejar.New(nil)
		hc := &http.Client{Jar: jar}
		resp, err := signInPost(hc, s.url, tok)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("sign-in: %d", resp.StatusCode)
		}
		return hc
	}
	hc, other := session(ann), session(bob)
	_, page := getPage(t, hc, s.url+"/ui")
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no form token on the page")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/ui/events", nil)
	stream, err := hc.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("the page's stream: %v %v", err, stream)
	}
	ended := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, stream.Body)
		ended <- time.Now()
	}()

	toks, err := s.toks.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok.Actor.Kind == "user" && tok.Actor.ID == "ann" {
			if err := s.toks.Revoke(context.Background(), tok.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	revoked := time.Now()
	if code, _ := getPage(t, hc, s.url+"/ui"); code != http.StatusUnauthorized {
		t.Fatalf("the revoked token's session reads the page: %d", code)
	}
	form := url.Values{"csrf": {m[1]}, "run": {"r1"}, "call": {"c1"}, "args_hash": {argsHash(deploy)}, "answer": {"approve"}}
	if code, _ := postForm(t, hc, s.url+"/ui/approvals/r1/c1", form, nil); code != http.StatusUnauthorized {
		t.Fatalf("the revoked token's session answers: %d", code)
	}
	if g := grantsOf(t, st, "r1"); len(g) != 0 {
		t.Fatalf("the revoked token's session approved %v", g)
	}
	select {
	case at := <-ended:
		if at.Sub(revoked) > 3*time.Second {
			t.Fatalf("the stream ended %v after the revocation", at.Sub(revoked))
		}
	case <-ctx.Done():
		t.Fatal("the revoked token's stream goes on")
	}
	if code, _ := getPage(t, other, s.url+"/ui"); code != 200 {
		t.Fatalf("another person's session: %d", code)
	}
}

// TestSignInTakesNoTokenInTheAddress: a token in the sign-in address is
// refused (401, no session, the token not echoed) and the form is shown;
// the form's post opens the session; a post from another site is refused;
// veto ui's one-time key still opens one session from the address, once.
func TestSignInTakesNoTokenInTheAddress(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	ui, _ := url.Parse(s.url + "/ui")
	code, body := getPage(t, hc, s.url+"/ui/login?k="+tok)
	if code != http.StatusUnauthorized || len(jar.Cookies(ui)) != 0 || strings.Contains(body, tok) ||
		!strings.Contains(body, `<input type="password" name="token"`) {
		t.Fatalf("a token in the address: %d, cookies %v\n%s", code, jar.Cookies(ui), body)
	}
	rq, _ := http.NewRequest("POST", s.url+"/ui/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	rq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rq.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := hc.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(jar.Cookies(ui)) != 0 {
		t.Fatalf("a sign-in from another site: %d", resp.StatusCode)
	}
	resp, err = signInPost(hc, s.url, tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/ui" || len(jar.Cookies(ui)) != 1 {
		t.Fatalf("the form's sign-in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	key := s.h.OneTimeKey()
	for i, want := range []int{200, 401} {
		jar, _ := cookiejar.New(nil)
		if code, _ := getPage(t, &http.Client{Jar: jar}, s.url+"/ui/login?k="+key); code != want {
			t.Fatalf("one-time key, use %d: %d", i+1, code)
		}
	}
}
