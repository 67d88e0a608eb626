package page

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/vetohq/veto"
)

// FuzzPathTo: whatever a run ref and a call id hold, the address pathTo
// draws for them, resolved as a browser resolves a form's action (dot
// segments removed), reaches the route it was drawn for with exactly those
// values, or pathTo draws none.
func FuzzPathTo(f *testing.F) {
	for _, s := range [][2]string{{"r1", "c1"}, {"A", "../../approvals/B/c"}, {"A", "%2e%2e/%2e%2e/approvals/B/c"},
		{"..", "c"}, {"a?b", "c#d"}, {"%", "%zz"}, {"a\nb", "c\rd"}, {"ü", "\x00"}, {".%2e", "%2E."}} {
		f.Add(s[0], s[1])
	}
	mux := http.NewServeMux()
	var gotRun, gotCall string
	mux.HandleFunc("POST /ui/approvals/{run}/{call}", func(w http.ResponseWriter, r *http.Request) {
		gotRun, gotCall = r.PathValue("run"), r.PathValue("call")
	})
	base, _ := url.Parse("http://127.0.0.1:1/ui?run=x")
	f.Fuzz(func(t *testing.T, run, call string) {
		p := pathTo("/ui/approvals", run, call)
		if p == "" {
			if segmentable(run) && segmentable(call) {
				t.Fatalf("no address for %q %q", run, call)
			}
			return
		}
		ref, err := url.Parse(p)
		if err != nil {
			t.Fatalf("pathTo(%q, %q) = %q: %v", run, call, p, err)
		}
		if strings.Contains(strings.ToLower(p), "%2e") {
			t.Fatalf("pathTo(%q, %q) = %q spells a dot a browser would resolve", run, call, p)
		}
		u := base.ResolveReference(ref)
		gotRun, gotCall = "\x00unset", "\x00unset"
		req := httptest.NewRequest("POST", u.String(), nil)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != 200 || gotRun != run || gotCall != call {
			t.Fatalf("pathTo(%q, %q) = %q resolved to %q: %d, run %q call %q", run, call, p, u, rec.Code, gotRun, gotCall)
		}
	})
}

// FuzzFrame: whatever a card holds, the page's stream sends it as one
// event, read back by the event stream's grammar with its id and name
// as given and its data as sent (carriage returns read as line feeds).
func FuzzFrame(f *testing.F) {
	for _, s := range []string{"<article>", "a\nid: 1\n\nevent: x\ndata: <form>", "\r\r\n\n", "", "data:", "\n"} {
		f.Add(s, "run\nid: 2")
		f.Add(s, "run-2")
	}
	f.Fuzz(func(t *testing.T, data, run string) {
		q := veto.LogQuery{AfterRun: run, AfterSeq: 7, AfterTime: 42}
		id := cursorOf(&q)
		evs := parseStream(frame(id, "decision", []byte(data)))
		want := strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
		if len(evs) != 1 || evs[0].id != id || evs[0].event != "decision" || evs[0].data != want {
			t.Fatalf("frame of %q: %q", data, evs)
		}
		var back veto.LogQuery
		if run != "" && len(run) <= 6<<10 && veto.ValidName(run) && (!parseCursor(evs[0].id, &back) || placeOf(back) != placeOf(q)) {
			t.Fatalf("cursor of %q read back as %+v", run, back)
		}
	})
}

// FuzzParseCursor: a Last-Event-ID or ?after= is untrusted: any text is
// refused or read as a place that cursorOf writes back the same.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"", "MTIzLjQucjE", "123.4.r1", "====", strings.Repeat("A", 2000), "MTIzLjQu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var q veto.LogQuery
		if !parseCursor(s, &q) {
			return
		}
		if len(s) > maxCursor {
			t.Fatalf("a cursor of %d bytes was read", len(s))
		}
		var again veto.LogQuery
		if !parseCursor(cursorOf(&q), &again) || placeOf(again) != placeOf(q) {
			t.Fatalf("%q read as %+v, written back as %+v", s, q, again)
		}
	})
}

// sseEvent is one event as the event stream's grammar reads it.
type sseEvent struct{ id, event, data string }

// parseStream reads b as a browser's EventSource does: lines end at CRLF,
// LF or CR; "data" lines are joined by line feeds; an empty line ends an
// event, which is kept when it has data.
func parseStream(b []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	var data []string
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			break // an unterminated line is no event
		}
		line := string(b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
		if line == "" {
			if data != nil {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur.event, data = "", nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			if !strings.ContainsRune(value, 0) {
				cur.id = value
			}
		case "event":
			cur.event = value
		case "data":
			data = append(data, value)
		}
	}
	return out
}

// place is where a cursor points.
type place struct {
	at  int64
	seq uint64
	run string
}

func placeOf(q veto.LogQuery) place { return place{q.AfterTime, q.AfterSeq, q.AfterRun} }
