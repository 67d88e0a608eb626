package server_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// FuzzParseCursor: a Last-Event-ID is the client's to send, and parsing
// one never panics; one accepted names a run that is a name, and writes
// back as itself; every cursor written from a run that is a name parses
// back to the same place, and is one line of [0-9A-Za-z._-] (a run of
// up to 16 KiB: longer than any run veto records).
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"1.2.cjE", "0.0.", "1.2.r1", "-5.18446744073709551615.YS5i", "1.2.cjEKZXZlbnQ6IHg", "x.y.z", "..", ""} {
		f.Add(s, int64(1), uint64(2), "r1")
	}
	f.Add("", int64(-1), uint64(0), "a.b\nc")
	f.Fuzz(func(t *testing.T, s string, tm int64, seq uint64, run string) {
		var q veto.LogQuery
		if server.ParseCursor(s, &q) {
			if !veto.ValidName(q.AfterRun) || q.AfterRun == "" {
				t.Fatalf("cursor %q names the run %q", s, q.AfterRun)
			}
			if again := server.Cursor(&q); again != s {
				var q2 veto.LogQuery
				if !server.ParseCursor(again, &q2) || place(q2) != place(q) {
					t.Fatalf("cursor %q writes back as %q, another place", s, again)
				}
			}
		}
		if run == "" || !veto.ValidName(run) || len(run) > 16<<10 {
			return
		}
		w := veto.LogQuery{AfterTime: tm, AfterSeq: seq, AfterRun: run}
		c := server.Cursor(&w)
		if strings.Trim(c, "0123456789-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("cursor %q of run %q holds other characters", c, run)
		}
		var back veto.LogQuery
		if !server.ParseCursor(c, &back) || place(back) != place(w) {
			t.Fatalf("cursor %q of %+v parses as %+v", c, w, back)
		}
	})
}

// place is where a query goes on after.
func place(q veto.LogQuery) [3]any { return [3]any{q.AfterTime, q.AfterSeq, q.AfterRun} }

// FuzzFrame: whatever the id, the name and the data, a frame is one
// server-sent event, as an EventSource parses it: its id is the id given
// or none, its name the name given or none, and its data the data with
// its line breaks as LF.
func FuzzFrame(f *testing.F) {
	f.Add("1.2.cjE", "invocation_denied", []byte(`{"run":"r1"}`))
	f.Add("a\nid: 9", "x\r\nevent: y", []byte("one\r\ntwo\rthree\n\ndata: four"))
	f.Add("", "", []byte(""))
	f.Fuzz(func(t *testing.T, id, event string, data []byte) {
		got := parseFrames(server.Frame(id, event, data))
		if len(got) != 1 {
			t.Fatalf("%d frames from one (%q %q %q)", len(got), id, event, data)
		}
		e := got[0]
		if e.id != "" && e.id != id || e.event != "" && e.event != event {
			t.Fatalf("frame %+v of id %q and name %q", e, id, event)
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
		if e.data != want {
			t.Fatalf("data %q, want %q", e.data, want)
		}
	})
}

// parseFrames reads b as the HTML standard's event stream parser does
// (lines end at CR, LF or CRLF; a field's value after "name: "; data
// fields joined by LF; an empty line dispatches).
func parseFrames(b []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	sc.Split(func(b []byte, atEOF bool) (int, []byte, error) {
		i := bytes.IndexAny(b, "\r\n")
		switch {
		case i < 0 && atEOF && len(b) > 0:
			return len(b), b, nil
		case i < 0:
			return 0, nil, nil
		case b[i] == '\r' && i+1 == len(b) && !atEOF:
			return 0, nil, nil // a CR that may start a CRLF
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			return i + 2, b[:i], nil
		}
		return i + 1, b[:i], nil
	})
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data != nil || cur.id != "" || cur.event != "" {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
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
