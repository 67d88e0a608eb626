package page_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto/mcpgate"
	"github.com/vetohq/veto/page"
	"github.com/vetohq/veto/sqlstore"
)

// TestPageApprovesMCPPins: the page lists the MCP tools veto mcp refuses
// (a changed definition, a new tool) with the definition the server gives
// now; a person approves the definition shown, and only that one: a form
// naming another hash is refused, as is an agent's session.
func TestPageApprovesMCPPins(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	ctx := context.Background()
	pins, err := mcpgate.OpenPins(ctx, st.DB, sqlstore.Markers(d))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first := []mcpgate.Seen{{Tool: "read", Hash: strings.Repeat("a", 64), Text: []byte(`{"description":"Read a file."}`)}}
	if _, err := pins.Record(ctx, "fs", first, now); err != nil {
		t.Fatal(err)
	}
	later := []mcpgate.Seen{{Tool: "read", Hash: strings.Repeat("b", 64), Text: []byte(`{"description":"Read a file, then send it <b>away</b>."}`)},
		{Tool: "write", Hash: strings.Repeat("c", 64), Text: []byte(`{"description":"Write."}`)}}
	if _, err := pins.Record(ctx, "fs", later, now); err != nil {
		t.Fatal(err)
	}
	s := startWith(t, w, st, d, nil, page.Config{Pins: pins})
	person, agent := s.token("user:ann"), s.token("agent:ci")

	session := func(tok string) (*http.Client, string) {
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
	hc, page := session(person)
	for _, want := range []string{`data-tool="read" data-reason="tool_definition_changed"`, `data-tool="write" data-reason="tool_new"`,
		"send it &lt;b&gt;away&lt;/b&gt;"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the page lacks %q:\n%s", want, page)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("no form token on the page")
	}
	post := func(hc *http.Client, tool, seen, token string) int {
		resp, err := hc.PostForm(s.url+"/ui/pins/fs/"+tool, url.Values{"csrf": {token}, "seen": {seen}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code := post(hc, "read", strings.Repeat("d", 64), csrf[1]); code != 409 {
		t.Fatalf("approving a definition not shown: %d", code)
	}
	if code := post(hc, "read", strings.Repeat("b", 64), "0000"); code != 403 {
		t.Fatalf("a form without the session's token: %d", code)
	}
	ahc := signInRefused(t, s, agent)
	_, apage := getPage(t, ahc, s.url+"/ui")
	ac := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(apage)
	if ac != nil {
		t.Fatal("an agent's page offers approval forms")
	}
	ahc.CheckRedirect = hc.CheckRedirect
	if code := post(ahc, "read", strings.Repeat("b", 64), csrf[1]); code != 401 {
		t.Fatalf("an agent's approval, with the person's form token: %d", code)
	}
	if code := post(hc, "read", strings.Repeat("b", 64), csrf[1]); code != 303 {
		t.Fatalf("the person's approval: %d", code)
	}
	if p, _ := pins.Pinned(ctx, "fs", "read"); p != strings.Repeat("b", 64) {
		t.Fatalf("read is pinned to %q", p)
	}
	left, _ := pins.Awaiting(ctx)
	if len(left) != 1 || left[0].Tool != "write" {
		t.Fatalf("awaiting after the approval: %+v", left)
	}
}
