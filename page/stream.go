package page

import (
	"bytes"
	"encoding/base64"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/server"
)

// maxCursor bounds a cursor the page reads back (Last-Event-ID, ?after=):
// room for a run ref of 6 KiB, far past the decision path's bound on refs
// (veto.Limits.MaxName, 256 bytes by default).
const maxCursor = 8192

// cursorOf is the page's cursor after the last event q was moved past:
// the service's cursor, base64url-encoded, so that no run ref (a newline,
// a colon, anything an input put there) shapes the stream's id line or
// the attribute that carries it.
func cursorOf(q *veto.LogQuery) string {
	return base64.RawURLEncoding.EncodeToString([]byte(server.Cursor(q)))
}

// parseCursor sets q to go on after the place a cursor of cursorOf names;
// false when s is none.
func parseCursor(s string, q *veto.LogQuery) bool {
	if s == "" || len(s) > maxCursor {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	return server.ParseCursor(string(b), q)
}

// frame is one server-sent event of the page's stream: the id (a cursor
// of cursorOf: base64url, no line break), the event's name (the page's
// own word) and data, one "data:" line for each of its lines, which the
// browser joins again with line feeds. So no text in data (a run ref with
// a line break, kept in an older event) can end the event, start another
// or set the id: the browser reads back exactly data, its carriage
// returns as line feeds, as an HTML parser reads them anyway.
func frame(id, event string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("id: ")
	b.WriteString(id)
	b.WriteString("\nevent: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for {
		i := bytes.IndexAny(data, "\r\n")
		line := data
		if i >= 0 {
			line = data[:i]
		}
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
		if i < 0 {
			break
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b.WriteByte('\n')
	return b.Bytes()
}
