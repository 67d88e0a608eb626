package server_test

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
	code, out := upload(csrf[1], whatIfPolicy, transcript.String())
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
	if code, _ := upload("0000", whatIfPolicy, transcript.String()); code != 403 {
		t.Fatalf("without the form's token: %d", code)
	}
	if code, out := upload(csrf[1], strings.Repeat("#", 300<<10), transcript.String()); code != 400 || !strings.Contains(out, "larger than the page takes") {
		t.Fatalf("a policy past its bound: %d\n%s", code, out)
	}
	if code, out := upload(csrf[1], "rules: [", transcript.String()); code != 400 || !strings.Contains(out, "does not load") {
		t.Fatalf("a broken policy: %d\n%s", code, out)
	}
}
