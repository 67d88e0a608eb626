package page_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/sqlite"
)

// TestPageShowsTheCallMaskedInChromium: a question whose command holds a
// canary token (GitHub's format) is shown on a person's page as its
// command with the token masked, with the host it names; the canary is in
// no state file (the WAL included), log line, event, API answer or other
// page; the person approves it on the card, and then the call's arguments
// are gone from the state: from the table, from the database file and
// from the WAL.
//
// E32
func TestPageShowsTheCallMaskedInChromium(t *testing.T) {
	bin := chromium(t)
	const canary = "ghp_CANARYshown0123456789abcdefABCDEFgh"
	const visible = "make deploy prod --header"
	command := visible + " 'Authorization: token " + canary + "' https://deploy.example.invalid/go"
	w := newWorld(t)
	path := filepath.Join(t.TempDir(), "veto.db")
	st, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := start(t, w, st, "sqlite", nil)
	agent, person := s.token("agent:ci"), s.token("user:ann")
	s.post("/v1/runs", agent, map[string]any{"ref": "r1", "fresh": true})
	if _, m := s.post("/v1/decide", agent, s.call("c1", "r1", "Bash", map[string]any{"command": command})); m["verdict"] != "ask" {
		t.Fatalf("the question: %v", m)
	}

	ctx := browser(t, bin)
	const q = `#questions article.question[data-call="c1"]`
	if err := chromedp.Do(ctx, signIn(s.url, person), chromedp.WaitVisible(q+` dl.shown`)); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(q+` dd pre.value`))
	if err != nil {
		t.Fatal(err)
	}
	host, err := chromedp.Run(ctx, chromedp.Text(q+` code.host`))
	if err != nil {
		t.Fatal(err)
	}
	role, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+q+` dt.field').dataset.role`))
	if err != nil {
		t.Fatal(err)
	}
	if want := visible + " 'Authorization: token [masked]' https://deploy.example.invalid/go"; shown != want || host != "deploy.example.invalid" || role != "command" {
		t.Fatalf("the card shows %q (host %q, role %q), want %q", shown, host, role, want)
	}
	page, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, `data-masked="1"`) {
		t.Fatal("the card does not say a value is masked")
	}
	// The other pages and the API: no canary, and no argument text.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui/runs/r1"), chromedp.WaitVisible(`li[data-kind="invocation_denied"]`)); err != nil {
		t.Fatal(err)
	}
	timeline, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	_, list := s.get("/v1/approvals?run=r1", person)
	api, _ := json.Marshal(list)
	evs, err := st.Events(context.Background(), "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := json.Marshal(evs)
	for name, text := range map[string]string{"the page": page, "the timeline": timeline, "the API's list": string(api),
		"the events": string(events), "the log": s.logs.String()} {
		if strings.Contains(text, canary) || strings.Contains(text, "CANARYshown") {
			t.Fatalf("%s holds the canary", name)
		}
		if name != "the page" && strings.Contains(text, visible) {
			t.Fatalf("%s holds the call's arguments", name)
		}
	}
	inFiles := func(needle string) []string {
		var found []string
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(needle)) {
				found = append(found, filepath.Base(f))
			}
		}
		return found
	}
	if f := inFiles("CANARYshown"); len(f) > 0 {
		t.Fatalf("the canary is in %v", f)
	}
	if f := inFiles(visible); len(f) == 0 {
		t.Fatal("the masked arguments are in no state file: the test looks in the wrong place")
	}

	// The person approves on the card; the arguments go.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/ui"), chromedp.WaitVisible(q),
		chromedp.Click(q+` button.approve`), chromedp.WaitNotPresent(q)); err != nil {
		t.Fatal(err)
	}
	p, err := st.Load(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := p.Approvals.Shown(context.Background(), "c1", time.Now()); ok || err != nil {
		t.Fatalf("the arguments are held after the answer: %v %v", ok, err)
	}
	if f := inFiles(visible); len(f) > 0 {
		t.Fatalf("the arguments' bytes are in %v after the answer", f)
	}
	if f := inFiles("CANARYshown"); len(f) > 0 {
		t.Fatalf("the canary is in %v", f)
	}
	if _, m := s.post("/v1/decide", agent, s.call("c2", "r1", "Bash", map[string]any{"command": command})); m["verdict"] != "allow" {
		t.Fatalf("the approved call: %v", m)
	}
	var approved veto.Event
	evs, _ = st.Events(context.Background(), "r1", 0)
	for _, e := range evs {
		if e.Kind == veto.EventApproved {
			approved = e
		}
	}
	if approved.ArgsHash != argsHash(map[string]any{"command": command}) || approved.Actor.ID != "ann" {
		t.Fatalf("the approval: %+v", approved)
	}
}
