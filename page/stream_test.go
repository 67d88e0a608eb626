package page_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// TestPageStreamHoldsAgainstLineBreaks: an event whose run ref holds line
// breaks and text of the stream's grammar (an older event, stored before
// the service refused such refs) is not on the page's stream at all: no
// event, card, form or link the ref forged. The events around it are,
// as the browser parses them: each id is the page's cursor (base64url,
// which takes the stream on from that event), each data its card, whole.
func TestPageStreamHoldsAgainstLineBreaks(t *testing.T) {
	w := newWorld(t)
	st, d := sqliteStore(t)
	s := start(t, w, st, d, nil)
	person := s.token("user:ann")
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := signInPost(hc, s.url, person)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/ui/events", nil)
	stream, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	const forged = `<form action="/ui/approvals/x/y"><button>forged</button></form>`
	runs := []string{"r\nid: 0.0.forged\n\nevent: decision\ndata: " + forged + "\r\rdata: <a href=//evil>x</a>\n", "plain", "plain2"}
	for i := range runs {
		ev := veto.Event{V: veto.EventVersion, Run: runs[i], Kind: veto.EventDenied, Time: time.Now(), Tool: "Bash", CallID: "c1", Rule: "file.credential",
			Reason: "credential_path", Risk: veto.RiskCritical}
		ev.Seq = 1
		if err := st.Append(ctx, runs[i], 1, []veto.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	frames := readFrames(t, stream.Body, 2)
	if len(frames) != 2 {
		t.Fatalf("%d events on the stream, want 2: %q", len(frames), frames)
	}
	for i, f := range frames {
		if f.event != "decision" || strings.Contains(f.data, "<form") || strings.Contains(f.data, "<a href=//evil") ||
			strings.Count(f.data, "<article") != 1 || !strings.Contains(f.data, `data-reason="credential_path"`) {
			t.Fatalf("event %d: %q", i, f)
		}
		for _, c := range f.id {
			if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", c) {
				t.Fatalf("event %d's id %q holds %q", i, f.id, c)
			}
		}
	}
	// The first event's id takes a new stream on after it: the second
	// event comes, the first does not.
	if !strings.Contains(frames[0].data, `data-run="plain"`) || !strings.Contains(frames[1].data, `data-run="plain2"`) {
		t.Fatalf("the events around the older one: %q", frames)
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", s.url+"/ui/events", nil)
	req.Header.Set("Last-Event-ID", frames[0].id)
	again, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Body.Close()
	if f := readFrames(t, again.Body, 1); len(f) != 1 || !strings.Contains(f[0].data, `data-run="plain2"`) {
		t.Fatalf("the stream taken on after the first event: %q", f)
	}
}

// readFrames reads server-sent events from r as a browser does (the
// EventSource's parsing: fields per line, data lines joined by line
// feeds, an empty line ends the event) until n events with data came.
func readFrames(t *testing.T, r io.Reader, n int) []sse {
	t.Helper()
	var out []sse
	var cur sse
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Split(sseLines)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data != nil {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
				if len(out) == n {
					return out
				}
			}
			cur.event, data = "", nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			cur.id = value
		case "event":
			cur.event = value
		case "data":
			data = append(data, value)
		}
	}
	return out
}

// sse is one event as a browser's EventSource reads it.
type sse struct{ id, event, data string }

// sseLines splits at CRLF, LF or CR, as the event stream's grammar does.
func sseLines(b []byte, atEOF bool) (int, []byte, error) {
	for i, c := range b {
		switch c {
		case '\n':
			return i + 1, b[:i], nil
		case '\r':
			if i+1 < len(b) {
				if b[i+1] == '\n' {
					return i + 2, b[:i], nil
				}
				return i + 1, b[:i], nil
			}
			if atEOF {
				return i + 1, b[:i], nil
			}
			return 0, nil, nil
		}
	}
	if atEOF && len(b) > 0 {
		return len(b), b, nil
	}
	return 0, nil, nil
}
