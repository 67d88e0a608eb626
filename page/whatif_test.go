package page_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// whatIfPolicy refuses a recursive delete: under it, the session's
// cleanup would have been refused.
const whatIfPolicy = `rules:
  - id: no-rm-rf
    match: {tool: Bash}
    deny: 'args.command.contains("rm -rf")'
    reason: recursive_delete
    message: Recursive deletes need a person.
`

// TestPageWhatIf: a session veto decided (the calls sent to veto serve, the
// transcript holding the same calls with canaries in their arguments) is
// uploaded with a policy to the page's what-if; the answer shows each
// verdict that would change as a card with data attributes (tool, rule,
// reason, before and after), and the counts; no argument text or canary
// appears on it or in the service's log, nothing is added to the store,
// and no upload is spilled to a temporary file. Without the form's token
// it is refused, as is an upload past its bound.
func TestPageWhatIf(t *testing.T) {
	const canary = "CANARY-whatif-c4d2"
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	const run = "sess-9e1"
	transcript := recordSession(t, s, w, tok, run, canary)
	before, _ := st.Events(context.Background(), run, 0)

	hc, page := pageSession(t, s, tok)
	_, form := getPage(t, hc, s.url+"/ui/whatif")
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(form)
	if csrf == nil || !strings.Contains(page, `href="/ui/whatif"`) {
		t.Fatalf("no what-if form:\n%s", form)
	}
	upload := func(token, policy, tr string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("csrf", token)
		pw, _ := mw.CreateFormFile("policy", "new.yaml")
		io.WriteString(pw, policy)
		tw, _ := mw.CreateFormFile("transcript", "session.jsonl")
		io.WriteString(tw, tr)
		mw.Close()
		resp, err := hc.Post(s.url+"/ui/whatif", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	code, out := upload(csrf[1], whatIfPolicy, transcript)
	if code != 200 {
		t.Fatalf("what-if: %d\n%s", code, out)
	}
	for _, want := range []string{
		`data-run="sess-9e1" data-calls="3" data-unchanged="2" data-newly-denied="1" data-newly-allowed="0"`,
		`data-index="2" data-call="toolu_2" data-tool="Bash" data-before="allow" data-before-rule="" data-before-reason="" data-after="deny" data-after-rule="no-rm-rf" data-after-reason="recursive_delete"`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the what-if lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `<article class="decision change`); n != 1 {
		t.Fatalf("%d change cards, want 1", n)
	}
	for name, text := range map[string]string{"the page": out, "the log": s.logs.String()} {
		if strings.Contains(text, canary) || strings.Contains(text, "rm -rf build") {
			t.Fatalf("%s holds argument text:\n%s", name, text)
		}
	}
	after, _ := st.Events(context.Background(), run, 0)
	if len(after) != len(before) {
		t.Fatalf("the what-if added %d event(s) to the store", len(after)-len(before))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("the upload left files in TMPDIR: %v", left)
	}
	if code, _ := upload("0000", whatIfPolicy, transcript); code != 403 {
		t.Fatalf("without the form's token: %d", code)
	}
	if code, out := upload(csrf[1], strings.Repeat("#", 300<<10), transcript); code != 400 || !strings.Contains(out, "larger than the page takes") {
		t.Fatalf("a policy past its bound: %d\n%s", code, out)
	}
	if code, out := upload(csrf[1], "rules: [", transcript); code != 400 || !strings.Contains(out, "does not load") {
		t.Fatalf("a broken policy: %d\n%s", code, out)
	}
}

// recordSession has veto serve decide a session's three calls (each
// allowed; the cleanup and the tests carry the canary) and returns the
// session's transcript, as Claude Code would have written it.
func recordSession(t *testing.T, s *service, w world, tok, run, canary string) string {
	t.Helper()
	s.post("/v1/runs", tok, map[string]any{"ref": run, "fresh": true})
	calls := []struct {
		id, tool string
		args     map[string]any
	}{
		{"toolu_1", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}},
		{"toolu_2", "Bash", map[string]any{"command": "rm -rf build # " + canary}},
		{"toolu_3", "Bash", map[string]any{"command": "go test ./... # " + canary}},
	}
	var transcript strings.Builder
	for _, c := range calls {
		if _, m := s.post("/v1/decide", tok, s.call(c.id, run, c.tool, c.args)); m["verdict"] != "allow" {
			t.Fatalf("%s: %v", c.id, m)
		}
		in, _ := json.Marshal(c.args)
		transcript.WriteString(`{"type":"assistant","sessionId":"` + run + `","cwd":"` + w.work + `","message":{"content":[{"type":"tool_use","id":"` + c.id + `","name":"` + c.tool + `","input":` + string(in) + `}]}}` + "\n")
		transcript.WriteString(`{"type":"user","sessionId":"` + run + `","message":{"content":[{"type":"tool_result","tool_use_id":"` + c.id + `","is_error":false}]}}` + "\n")
	}
	return transcript.String()
}

// TestPageWhatIfInChromium: the what-if's form in headless Chromium, the
// files chosen as a person would: the changed verdict is drawn as a card
// found by its data attributes, and the page holds no argument text.
func TestPageWhatIfInChromium(t *testing.T) {
	bin := chromium(t)
	const canary = "CANARY-whatif-b81f"
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	tok := s.token("user:ann")
	dir := t.TempDir()
	tr, pol := filepath.Join(dir, "session.jsonl"), filepath.Join(dir, "new.yaml")
	if err := os.WriteFile(tr, []byte(recordSession(t, s, w, tok, "sess-c0de", canary)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte(whatIfPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, bin)
	const card = `article.change[data-call="toolu_2"][data-before="allow"][data-after="deny"][data-after-rule="no-rm-rf"][data-after-reason="recursive_delete"]`
	if err := chromedp.Do(ctx, signIn(s.url, tok), chromedp.Click(`a.nav`), chromedp.WaitVisible(`form.whatif`),
		chromedp.SetUploadFiles(`input[name="transcript"]`, []string{tr}), chromedp.SetUploadFiles(`input[name="policy"]`, []string{pol}),
		chromedp.Click(`form.whatif button`), chromedp.WaitVisible(card)); err != nil {
		t.Fatal(err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, canary) || strings.Contains(html, "rm -rf build") {
		t.Fatalf("the what-if shows argument text:\n%s", html)
	}
	if !strings.Contains(html, `data-newly-denied="1"`) {
		t.Fatalf("the counts:\n%s", html)
	}
}
