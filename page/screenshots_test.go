package page_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/vetohq/veto"
)

// TestScreenshots draws the page's pictures in docs/img: the decisions
// with refusal cards (one refused at resume), a call waiting for a
// person, a run's timeline with its taint, and the what-if of a stricter
// policy (uploaded with a session's transcript in Chromium). It runs only with
// VETO_SCREENSHOTS=1 (go test ./server -run TestScreenshots), and fails
// on a picture of 200 KB or more.
func TestScreenshots(t *testing.T) {
	if os.Getenv("VETO_SCREENSHOTS") != "1" {
		t.Skip("VETO_SCREENSHOTS=1 draws docs/img/*.png")
	}
	bin := chromium(t)
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	agent, person := s.token("agent:claude"), s.token("user:ann")
	ctx := context.Background()

	// A run that reads, is refused a credential and the metadata service,
	// has a deploy approved and then refused at resume under a frozen
	// policy, and reads private material before trying to send.
	s.post("/v1/runs", agent, map[string]any{"ref": "session-7f3a", "fresh": true})
	read := s.call("c1", "session-7f3a", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")})
	s.post("/v1/decide", agent, read)
	read["outcome"] = "succeeded"
	s.post("/v1/observe", agent, read)
	s.post("/v1/decide", agent, s.call("c2", "session-7f3a", "Bash", map[string]any{"command": "cat ~/.ssh/id_rsa"}))
	s.post("/v1/decide", agent, s.call("c3", "session-7f3a", "WebFetch", map[string]any{"url": "http://169.254.169.254/latest/"}))
	s.post("/v1/decide", agent, s.call("c4", "session-7f3a", "Bash", map[string]any{"command": "make deploy prod"}))
	s.post("/v1/approvals/session-7f3a/c4", person, map[string]any{"approve": true, "args_hash": argsHash(map[string]any{"command": "make deploy prod"})})
	frozen := gateOf(t, w, st, frozenPolicy)
	frozen.Decide(ctx, &veto.Call{ID: "c5", Tool: "Bash", Args: map[string]any{"command": "make deploy prod"}, Cwd: w.work, Run: veto.Run{Ref: "session-7f3a"},
		Actor: veto.Actor{Kind: "agent", ID: "claude"}})
	secret := s.call("c6", "session-7f3a", "Read", map[string]any{"file_path": filepath.Join(w.work, "secrets", "plan.txt")})
	s.post("/v1/decide", agent, secret)
	secret["outcome"] = "succeeded"
	s.post("/v1/observe", agent, secret)
	s.post("/v1/decide", agent, s.call("c7", "session-7f3a", "WebFetch", map[string]any{"url": "https://docs.example.org/"}))
	// Another run with a call waiting for a person.
	s.post("/v1/runs", agent, map[string]any{"ref": "session-91c0", "fresh": true})
	s.post("/v1/decide", agent, s.call("c1", "session-91c0", "Bash", map[string]any{"command": "make deploy staging"}))

	// A session to replay under a stricter policy: its transcript and
	// the policy, as a person would upload them.
	var transcript strings.Builder
	for _, c := range []struct {
		id, tool string
		args     map[string]any
	}{
		{"toolu_01", "Read", map[string]any{"file_path": filepath.Join(w.work, "README.md")}},
		{"toolu_02", "Bash", map[string]any{"command": "rm -rf build"}},
		{"toolu_03", "Bash", map[string]any{"command": "go test ./..."}},
		{"toolu_04", "WebFetch", map[string]any{"url": "https://docs.example.org/"}},
	} {
		s.post("/v1/decide", agent, s.call(c.id, "session-2b77", c.tool, c.args))
		in, _ := json.Marshal(c.args)
		transcript.WriteString(`{"type":"assistant","sessionId":"session-2b77","cwd":"` + w.work + `","message":{"content":[{"type":"tool_use","id":"` + c.id + `","name":"` + c.tool + `","input":` + string(in) + `}]}}` + "\n")
		transcript.WriteString(`{"type":"user","sessionId":"session-2b77","message":{"content":[{"type":"tool_result","tool_use_id":"` + c.id + `","is_error":false}]}}` + "\n")
	}
	up := t.TempDir()
	trPath, polPath := filepath.Join(up, "session.jsonl"), filepath.Join(up, "stricter.yaml")
	os.WriteFile(trPath, []byte(transcript.String()), 0o600)
	os.WriteFile(polPath, []byte(whatIfPolicy+`  - id: no-fetch
    match: {tool: WebFetch}
    deny: 'true'
    reason: fetch_frozen
    message: Fetches are frozen.
`), 0o600)

	bctx := browser(t, bin)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1000, 900), signIn(s.url, person),
		chromedp.WaitVisible(`#questions`)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "docs", "img")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shoot := func(name, url, sel string) {
		if err := chromedp.Do(bctx, chromedp.Navigate(s.url+url), chromedp.WaitVisible(sel)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if len(png) >= 200<<10 {
			t.Fatalf("%s: %d bytes, want less than 200 KB", name, len(png))
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", name, len(png))
	}
	shoot("page-decisions.png", "/ui?run=session-7f3a", `article.refusal[data-resume="refused"]`)
	shoot("page-pending.png", "/ui?run=session-91c0", `#questions article.question`)
	shoot("page-timeline.png", "/ui/runs/session-7f3a", `#taint[data-tainted="yes"]`)
	if err := chromedp.Do(bctx, chromedp.Navigate(s.url+"/ui/whatif"), chromedp.SetUploadFiles(`input[name="transcript"]`, []string{trPath}),
		chromedp.SetUploadFiles(`input[name="policy"]`, []string{polPath}), chromedp.Click(`form.whatif button`),
		chromedp.WaitVisible(`article.change[data-after-rule="no-rm-rf"]`), chromedp.WaitVisible(`article.change[data-after-rule="no-fetch"]`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil || len(png) >= 200<<10 {
		t.Fatalf("the what-if's picture: %d bytes, %v", len(png), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "page-whatif.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
