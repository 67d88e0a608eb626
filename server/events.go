package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
)

// events streams stored events as server-sent events, oldest first, then
// each new one as it is stored, with veto log's filters: run, tool,
// verdict (allow, deny), since (RFC 3339), all (every event, not only
// decisions). Each event's id is its cursor: a client that reconnects
// with Last-Event-ID goes on after it. The data is the stored event,
// which holds no argument text. A service's token streams the events
// that name its actor (reader.sees); a person's, every event.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	q, err := logQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, reasonRequestInvalid, err.Error())
		return
	}
	tool := r.URL.Query().Get("tool")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if !ParseCursor(id, &q) {
			writeError(w, http.StatusBadRequest, reasonRequestInvalid, "Last-Event-ID is not a cursor of this stream.")
			return
		}
	}
	rd := readerOf(r)
	s.Stream(w, r, &q, func(ev *veto.Event, run string, seq uint64, b []byte) []byte {
		if (tool != "" && ev.Tool != tool) || !rd.sees(ev) {
			return nil
		}
		return Frame(Cursor(&q), string(ev.Kind), b)
	})
}

// Frame is one server-sent event: its id, its name and its data. The
// id and the name are one line each: one holding a line break, NUL or
// any other control character is left out of the frame, so no value can
// start a field or a frame of its own; the data is split at its line
// breaks, one data field a line, as the format joins them again.
func Frame(id, event string, data []byte) []byte {
	b := make([]byte, 0, len(id)+len(event)+len(data)+32)
	if id != "" && veto.ValidName(id) {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if event != "" && veto.ValidName(event) {
		b = append(append(append(b, "event: "...), event...), '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(append(append(b, "data: "...), data...), '\n')
	return append(b, '\n')
}

// Stream writes server-sent events: every stored event q selects, then
// each new one, polled; frame renders one (nil: not sent). The API's
// event stream and the page's live cards are both drawn by it, so that
// both end as the service drains. The cursor in
// q moves past each event read. A failing state is said on the stream,
// and tried again.
func (s *Server) Stream(w http.ResponseWriter, r *http.Request, q *veto.LogQuery, frame func(ev *veto.Event, run string, seq uint64, b []byte) []byte) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A stream outlives the server's write timeout; each write gets its own.
	rc.SetWriteDeadline(time.Time{})
	fmt.Fprint(w, ": veto events\n\n")
	rc.Flush()
	send := func(run string, seq uint64, b []byte) error {
		ev, err := eventlog.DecodeEvent(b)
		q.AfterRun, q.AfterSeq = run, seq
		if err != nil {
			return nil // an undecodable event is not streamed; veto log verify names it
		}
		q.AfterTime = ev.Time.UnixNano()
		out := frame(&ev, run, seq, b)
		if out == nil {
			return nil
		}
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, err = w.Write(out)
		return err
	}
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		err := func() error {
			ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Deadline)
			defer cancel()
			release, err := s.acquire(ctx)
			if err != nil {
				return err
			}
			defer release()
			return s.cfg.Store.Scan(ctx, *q, send)
		}()
		if r.Context().Err() != nil {
			return
		}
		if err != nil {
			s.metrics.storeError()
			fmt.Fprintf(w, "event: error\ndata: {\"reason\":%q,\"message\":%q}\n\n", veto.ReasonStateUnavailable,
				"veto cannot read its state: "+s.cfg.Cause(err)+".")
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.stopping:
			return
		case <-tick.C:
		}
	}
}

// logQuery reads veto log's filters from the request's query.
func logQuery(r *http.Request) (veto.LogQuery, error) {
	v := r.URL.Query()
	q := veto.LogQuery{Run: v.Get("run")}
	switch v.Get("verdict") {
	case "":
		if v.Get("all") != "true" {
			q.Kinds = []veto.EventKind{veto.EventAllowed, veto.EventDenied, veto.EventToolDenied}
		}
	case "allow":
		q.Kinds = []veto.EventKind{veto.EventAllowed}
	case "deny":
		q.Kinds = []veto.EventKind{veto.EventDenied, veto.EventToolDenied}
	default:
		return q, fmt.Errorf("verdict is allow or deny")
	}
	if since := v.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return q, fmt.Errorf("since is a time in RFC 3339, as 2026-12-01T10:00:00Z")
		}
		q.Since = t
	}
	return q, nil
}

// Cursor is an event's place in the stream: time (the server's clock,
// in Unix nanoseconds), sequence number and run, after the last event q
// was moved past. The run is written in unpadded base64url, so a cursor
// is digits, two dots and [A-Za-z0-9_-] whatever the run's name: a name
// cannot shape the id line of a frame.
func Cursor(q *veto.LogQuery) string {
	return strconv.FormatInt(q.AfterTime, 10) + "." + strconv.FormatUint(q.AfterSeq, 10) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(q.AfterRun))
}

// maxCursorRun is the longest run name a cursor holds (far above any
// veto.Limits' MaxName), and maxCursor the longest cursor ParseCursor
// reads: two numbers and that name, encoded.
const (
	maxCursorRun = 16 << 10
	maxCursor    = 20 + 1 + 20 + 1 + (maxCursorRun*4+2)/3
)

// ParseCursor sets q to go on after the place s names; false when s is
// not a cursor (one Cursor wrote: a run name that is not a name is not).
func ParseCursor(s string, q *veto.LogQuery) bool {
	if len(s) > maxCursor {
		return false
	}
	t, rest, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	seq, enc, ok := strings.Cut(rest, ".")
	if !ok || enc == "" {
		return false
	}
	ti, err1 := strconv.ParseInt(t, 10, 64)
	si, err2 := strconv.ParseUint(seq, 10, 64)
	// The decoder skips line breaks: the run's part is held to the
	// alphabet first.
	if strings.Trim(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return false
	}
	run, err3 := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err1 != nil || err2 != nil || err3 != nil || len(run) == 0 || !veto.ValidName(string(run)) {
		return false
	}
	q.AfterTime, q.AfterSeq, q.AfterRun = ti, si, string(run)
	return true
}
