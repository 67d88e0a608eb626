package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// HTTPTransport reaches a server over MCP's streamable HTTP: each frame
// is POSTed as it came, and what the server answers (a JSON body or an
// event stream) is read back as frames; server-initiated messages come on
// a GET event stream, opened once the session is initialized.
type HTTPTransport struct {
	URL    string
	Client *http.Client // default: http.DefaultClient's transport, no timeout (streams are long)
}

func (t *HTTPTransport) Connect(context.Context) (Conn, error) {
	c := t.Client
	if c == nil {
		c = &http.Client{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &httpConn{url: t.URL, client: c, ctx: ctx, cancel: cancel, in: make(chan []byte, 64)}, nil
}

type httpConn struct {
	url    string
	client *http.Client
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	in     chan []byte

	mu       sync.Mutex
	session  string
	version  string
	getting  bool // a GET stream is open or being opened
	initDone chan struct{}
	once     sync.Once
}

func (c *httpConn) setProtocol(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}

func (c *httpConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, io.EOF
	}
}

func (c *httpConn) deliver(b []byte) {
	select {
	case c.in <- b:
	case <-c.ctx.Done():
	}
}

func (c *httpConn) headers(h http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != "" {
		h.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		h.Set("Mcp-Protocol-Version", c.version)
	}
}

// Write POSTs one frame. The initialize is answered, and initialized
// delivered, before Write returns (the answer names the session every
// later POST carries);
// every other POST runs on its own, so that a long call holds up nothing.
func (c *httpConn) Write(_ context.Context, frame []byte) error {
	f, err := parseFrame(frame)
	if err != nil {
		return err
	}
	switch {
	case f.kind == kindRequest && f.method == "initialize":
		c.post(frame, f)
		return nil
	case f.kind == kindNotification && f.method == "notifications/initialized":
		// Delivered before anything else is sent: a server refuses
		// requests of a session not yet initialized.
		c.post(frame, f)
		c.openStream()
		return nil
	}
	go c.post(frame, f)
	return nil
}

// post sends one frame and delivers what comes back; a request the
// server does not answer is answered with an error of the gateway's.
func (c *httpConn) post(frame []byte, f *frame) {
	fail := func() {
		if f.kind == kindRequest {
			c.deliver(errorFrame(f.id, codeInternal, "veto mcp: the MCP server did not answer over HTTP."))
		}
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, bytes.NewReader(frame))
	if err != nil {
		fail()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.headers(req.Header)
	standardHeaders(req.Header, f)
	resp, err := c.client.Do(req)
	if err != nil {
		fail()
		return
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.mu.Lock()
		if c.session == "" {
			c.session = s
		}
		c.mu.Unlock()
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		return
	}
	if resp.StatusCode != http.StatusOK {
		fail()
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxFrame+1))
		if err != nil || len(b) > MaxFrame {
			fail()
			return
		}
		c.deliver(b)
	case "text/event-stream":
		if !c.events(resp.Body) {
			fail()
		}
	default:
		fail()
	}
}

// openStream opens the GET stream of server-initiated messages, once;
// it is opened again when it ends (a server without one says 405).
func (c *httpConn) openStream() {
	c.mu.Lock()
	if c.getting {
		c.mu.Unlock()
		return
	}
	c.getting = true
	c.mu.Unlock()
	go func() {
		for failures := 0; failures < 5 && c.ctx.Err() == nil; {
			req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.url, nil)
			if err != nil {
				return
			}
			req.Header.Set("Accept", "text/event-stream")
			c.headers(req.Header)
			resp, err := c.client.Do(req)
			if err != nil {
				failures++
				sleep(c.ctx, time.Second)
				continue
			}
			if resp.StatusCode == http.StatusMethodNotAllowed {
				resp.Body.Close()
				return
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				failures++
				sleep(c.ctx, time.Second)
				continue
			}
			failures = 0
			c.events(resp.Body)
			resp.Body.Close()
			sleep(c.ctx, 100*time.Millisecond)
		}
	}()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// events reads an event stream, delivering each event's data as a frame;
// an event over MaxFrame ends the stream (false).
func (c *httpConn) events(r io.Reader) bool {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	has := false
	for {
		line, err := readLine(br)
		if err != nil {
			return !errors.Is(err, errFrameTooLarge)
		}
		s := string(line)
		switch {
		case s == "":
			if has && len(bytes.TrimSpace(data)) > 0 {
				c.deliver(data)
			}
			data, has = nil, false
		case strings.HasPrefix(s, "data:"):
			v := strings.TrimPrefix(strings.TrimPrefix(s, "data:"), " ")
			if has {
				data = append(data, '\n')
			}
			if len(data)+len(v) > MaxFrame {
				return false
			}
			data, has = append(data, v...), true
		}
	}
}

// Close ends the session (DELETE, at most 2s) and every stream.
func (c *httpConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		session := c.session
		c.mu.Unlock()
		if session != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil); err == nil {
				c.headers(req.Header)
				if resp, err := c.client.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		c.cancel()
	})
	return nil
}

// stateless is the first MCP version whose streamable HTTP carries the
// request's method and name in headers too.
const stateless = "2026-07-28"

// standardHeaders sets what MCP 2026-07-28 asks of each POST beside the
// body: the request's own protocol version (its _meta's), its method and
// the name it acts on (a tool's, a prompt's, a resource's URI).
func standardHeaders(h http.Header, f *frame) {
	if f.kind != kindRequest && f.kind != kindNotification {
		return
	}
	m, _ := members(f.params)
	var name string
	for _, mb := range m {
		switch mb.key {
		case "_meta":
			mm, _ := members(mb.value)
			for _, x := range mm {
				var v string
				if x.key == "io.modelcontextprotocol/protocolVersion" && json.Unmarshal(x.value, &v) == nil && v != "" {
					h.Set("Mcp-Protocol-Version", v)
				}
			}
		case "protocolVersion":
			var v string
			if f.method == "initialize" && json.Unmarshal(mb.value, &v) == nil && v != "" {
				h.Set("Mcp-Protocol-Version", v)
			}
		case "name":
			if f.method == "tools/call" || f.method == "prompts/get" {
				json.Unmarshal(mb.value, &name)
			}
		case "uri":
			if f.method == "resources/read" {
				json.Unmarshal(mb.value, &name)
			}
		}
	}
	if v := h.Get("Mcp-Protocol-Version"); v == "" || v < stateless || f.kind != kindRequest {
		return
	}
	h.Set("Mcp-Method", headerValue(f.method))
	if name != "" {
		h.Set("Mcp-Name", headerValue(name))
	}
}

// headerValue is s as a header carries it: as it is when it is visible
// ASCII, else base64 in the =?base64?…?= form MCP names.
func headerValue(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
		}
	}
	if strings.TrimSpace(s) != s {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
	}
	return s
}
