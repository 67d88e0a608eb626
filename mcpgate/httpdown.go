package mcpgate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// HTTPHandler serves the gateway to one agent over MCP's streamable HTTP,
// on a loopback address: each POSTed frame goes to the gateway as it came
// and a request's answer comes back as the POST's JSON body; every other
// frame for the agent (the server's notifications and requests) goes on
// the GET event stream. It is the Transport Serve is given; it serves one
// session (the upstream is initialized once).
type HTTPHandler struct {
	in     chan []byte
	stream chan []byte // frames for the GET stream, bounded: past it they are dropped
	closed chan struct{}
	once   sync.Once

	mu        sync.Mutex
	session   string
	waiters   map[string]chan []byte
	streaming bool
	connected bool
}

// NewHTTPHandler makes the handler; give it to Serve and to an
// http.Server.
func NewHTTPHandler() *HTTPHandler {
	return &HTTPHandler{in: make(chan []byte, 16), stream: make(chan []byte, 256), closed: make(chan struct{}), waiters: map[string]chan []byte{}}
}

func (h *HTTPHandler) Connect(context.Context) (Conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.connected {
		return nil, io.ErrClosedPipe
	}
	h.connected = true
	return (*httpDown)(h), nil
}

// httpDown is the gateway's side of the handler.
type httpDown HTTPHandler

func (d *httpDown) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-d.in:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-d.closed:
		return nil, io.EOF
	}
}

func (d *httpDown) Write(_ context.Context, frame []byte) error {
	f, err := parseFrame(frame)
	if err == nil && f.kind == kindResponse {
		d.mu.Lock()
		ch, ok := d.waiters[f.idKey]
		delete(d.waiters, f.idKey)
		d.mu.Unlock()
		if ok {
			ch <- frame
			return nil
		}
	}
	select {
	case d.stream <- frame:
	default: // no one reads the stream: dropped, never buffered without bound
	}
	return nil
}

func (d *httpDown) Close() error {
	d.once.Do(func() { close(d.closed) })
	return nil
}

// loopbackHost reports whether a Host (or an Origin's host) names a
// loopback address: a page elsewhere that resolves its name to 127.0.0.1
// is refused.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "veto mcp answers on loopback names only", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !loopbackHost(u.Host) {
			http.Error(w, "veto mcp answers pages of loopback origins only", http.StatusForbidden)
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		if !h.ours(w, r) {
			return
		}
		(*httpDown)(h).Close()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// ours reports whether the request carries the session's id.
func (h *HTTPHandler) ours(w http.ResponseWriter, r *http.Request) bool {
	h.mu.Lock()
	s := h.session
	h.mu.Unlock()
	got := r.Header.Get("Mcp-Session-Id")
	switch {
	case s == "" || got == "":
		http.Error(w, "no session: initialize first", http.StatusBadRequest)
		return false
	case got != s:
		http.Error(w, "no such session", http.StatusNotFound)
		return false
	}
	select {
	case <-h.closed:
		http.Error(w, "the session ended", http.StatusNotFound)
		return false
	default:
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxFrame+1))
	if err != nil {
		return
	}
	if len(body) > MaxFrame {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorFrame(nil, codeInvalidRequest, "veto mcp: the message is over 16 MiB, so it is not passed on."))
		return
	}
	f, err := parseFrame(body)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorFrame(nil, codeParse, "veto mcp: the message is not one JSON-RPC message veto can read, so it is not passed on."))
		return
	}
	if f.kind == kindRequest && f.method == "initialize" {
		h.mu.Lock()
		if h.session != "" {
			h.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, errorFrame(f.id, codeInvalidRequest, "veto mcp serves one session, and it is initialized already."))
			return
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		h.session = hex.EncodeToString(b[:])
		h.mu.Unlock()
	} else if !h.ours(w, r) {
		return
	}
	h.mu.Lock()
	session := h.session
	h.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", session)
	if f.kind == kindBatch {
		if b := refuseBatch(f); b != nil {
			writeJSON(w, http.StatusOK, b)
		} else {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	var ch chan []byte
	if f.kind == kindRequest {
		ch = make(chan []byte, 1)
		h.mu.Lock()
		if _, dup := h.waiters[f.idKey]; dup {
			h.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, errorFrame(f.id, codeInvalidRequest, "veto mcp: a request with this id is in flight already."))
			return
		}
		h.waiters[f.idKey] = ch
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			if h.waiters[f.idKey] == ch {
				delete(h.waiters, f.idKey)
			}
			h.mu.Unlock()
		}()
	}
	select {
	case h.in <- body:
	case <-r.Context().Done():
		return
	case <-h.closed:
		http.Error(w, "the session ended", http.StatusNotFound)
		return
	}
	if ch == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	select {
	case b := <-ch:
		writeJSON(w, http.StatusOK, b)
	case <-r.Context().Done():
	case <-h.closed:
		http.Error(w, "the session ended", http.StatusNotFound)
	}
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request) {
	if !h.ours(w, r) {
		return
	}
	h.mu.Lock()
	if h.streaming {
		h.mu.Unlock()
		http.Error(w, "a stream is open already", http.StatusConflict)
		return
	}
	h.streaming = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.streaming = false
		h.mu.Unlock()
	}()
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	for {
		select {
		case b := <-h.stream:
			b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), []byte(" ")), []byte("\n"), []byte(" "))
			buf := make([]byte, 0, len(b)+24)
			buf = append(append(append(buf, "event: message\ndata: "...), b...), "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				// Lost: the agent reconnects for what comes next.
				return
			}
			if fl != nil {
				fl.Flush()
			}
		case <-r.Context().Done():
			return
		case <-h.closed:
			return
		}
	}
}
