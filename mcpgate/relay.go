package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
)

// maxPending bounds the calls in flight and the records waiting: past
// it, a call is refused (never buffered without bound).
const maxPending = 1024

// relay is the gateway's byte path: one upstream connection, read by one
// goroutine, and the agent's side of the session being served.
type relay struct {
	upDone chan struct{} // the upstream's reader ended
	upGone chan struct{} // and the calls it left were answered and asked to be recorded

	downMu sync.Mutex
	down   Conn // the agent's side; nil between sessions

	callsMu  sync.Mutex
	calls    map[string]*veto.Call  // tools/call in flight upstream, by id key
	internal map[string]chan *frame // the gateway's own requests, by id key
	initKey  string                 // the agent's initialize (or server/discover) in flight
	initDisc bool                   // it is server/discover (stateless MCP, 2026-07-28)
	meta     json.RawMessage        // the agent's per-request _meta triple (stateless MCP), for the gateway's own requests
	listenID json.RawMessage        // the agent's subscriptions/listen for tool changes (stateless MCP)
	idPrefix string                 // the gateway's own ids: never the agent's
	seq      atomic.Uint64          //
	inited   atomic.Bool            // the agent said initialized
	asked    atomic.Bool            // the agent sent the server a request
	heard    atomic.Bool            // the server sent a frame
	upFirst  atomic.Bool            // the server ended while an agent's session was open
	listedCh chan struct{}          // closed once the first listing is served
	listOnce sync.Once              //
	protocol func(version string)   // told the protocol version (an HTTP upstream)
	obsQ     []obsJob               // records asked for and not yet taken, in order (obsMu)
	obsWake  chan struct{}          // a record was asked for (1-buffered)
	obsRoom  chan struct{}          // a token for each record asked for and not yet made (at most maxPending)
	window   time.Duration          // recordWindow, as the gateway started
	obsMu    sync.Mutex             //
	queued   uint64                 // records asked for
	done     uint64                 // records made (or given up)
	obsSig   chan struct{}          // closed at each record made
	quit     chan struct{}          // the gateway closed
	flush    chan struct{}          // closing: no record waits for its window
	flushed  sync.Once              //
	closing  sync.Once              //
}

type obsJob struct {
	c       *veto.Call
	outcome veto.Outcome
}

func (g *Gateway) startRelay() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	g.upDone = make(chan struct{})
	g.upGone = make(chan struct{})
	g.calls = map[string]*veto.Call{}
	g.internal = map[string]chan *frame{}
	g.idPrefix = "veto-mcp-" + hex.EncodeToString(b[:]) + "-"
	g.listedCh = make(chan struct{})
	g.obsWake = make(chan struct{}, 1)
	g.obsRoom = make(chan struct{}, maxPending)
	g.window = recordWindow
	g.obsSig = make(chan struct{})
	g.quit = make(chan struct{})
	g.flush = make(chan struct{})
	if p, ok := g.up.(interface{ setProtocol(string) }); ok {
		g.protocol = p.setProtocol
	}
	go g.readUpstream()
	go g.recordLoop()
}

// Serve relays one agent's session over t until the agent disconnects,
// the upstream ends or ctx ends, keeping the listing in step with the
// upstream and the pins meanwhile.
func (g *Gateway) Serve(ctx context.Context, t Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	down, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer down.Close()
	g.downMu.Lock()
	if g.down != nil {
		g.downMu.Unlock()
		return errors.New("mcpgate: the gateway serves one session at a time")
	}
	g.down = down
	g.downMu.Unlock()
	defer func() {
		g.downMu.Lock()
		g.down = nil
		g.downMu.Unlock()
	}()
	go func() {
		// The upstream gone, the agent's session ends too: every call
		// would fail.
		select {
		case <-g.upDone:
			g.upFirst.Store(true)
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		<-g.listedCh
		g.keepSynced(ctx)
	}()
	for {
		raw, err := down.Read(ctx)
		if errors.Is(err, errFrameTooLarge) {
			g.toAgent(ctx, errorFrame(nil, codeInvalidRequest, "veto mcp: the message is over 16 MiB, so it is not passed on."))
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		g.fromAgent(ctx, raw)
	}
}

// Close waits for the records of the calls answered, ends the upstream
// connection (its command), and then waits for the records of the calls
// it left unanswered (failed), which its reader makes once it ends: none
// is left to be made after Close, on a store its owner has closed.
func (g *Gateway) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*g.within())
	defer cancel()
	g.flushed.Do(func() { close(g.flush) })
	_ = g.waitRecords(ctx)
	var err error
	g.closing.Do(func() {
		err = g.up.Close()
		select {
		case <-g.upGone:
			_ = g.waitRecords(ctx)
		case <-ctx.Done():
		}
		close(g.quit)
	})
	return err
}

const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeInternal       = -32603
)

// errorFrame is a JSON-RPC error response; id nil is null.
func errorFrame(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		V  string          `json:"jsonrpc"`
		ID json.RawMessage `json:"id"`
		E  struct {
			Code int    `json:"code"`
			Msg  string `json:"message"`
		} `json:"error"`
	}{V: "2.0", ID: id, E: struct {
		Code int    `json:"code"`
		Msg  string `json:"message"`
	}{code, msg}})
	return b
}

// resultFrame is a JSON-RPC result response.
func resultFrame(id json.RawMessage, result json.RawMessage) []byte {
	b := make([]byte, 0, len(id)+len(result)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// toAgent writes one frame to the agent of the session, if any.
func (g *Gateway) toAgent(ctx context.Context, b []byte) {
	g.downMu.Lock()
	d := g.down
	g.downMu.Unlock()
	if d == nil {
		return
	}
	if err := d.Write(ctx, b); err != nil && ctx.Err() == nil {
		g.log.Warn("veto mcp: writing to the agent failed", "server", g.cfg.Name)
	}
}

func (g *Gateway) toServer(ctx context.Context, b []byte) error {
	return g.up.Write(ctx, b)
}

// refuseBatch answers a batch: veto decides messages one at a time, so
// none of a batch's is passed on, and each request in it is answered
// with an error (a batch of notifications gets no answer).
func refuseBatch(f *frame) []byte {
	var out []json.RawMessage
	for _, it := range f.items {
		e, err := parseFrame(it)
		if err != nil || e.kind != kindRequest {
			continue
		}
		out = append(out, errorFrame(e.id, codeInvalidRequest, "veto mcp: JSON-RPC batches are not passed on; send each message alone."))
	}
	if len(out) == 0 {
		return nil
	}
	b, _ := json.Marshal(out)
	return b
}

// fromAgent handles one frame of the agent's: most pass to the server as
// they came; tools/call is decided, tools/list answered from the pinned
// listing, and nothing the gateway cannot read is passed on.
func (g *Gateway) fromAgent(ctx context.Context, raw []byte) {
	f, err := parseFrame(raw)
	if err != nil {
		// Not passed on: it could be a call the gateway cannot judge.
		g.toAgent(ctx, errorFrame(nil, codeParse, "veto mcp: the message is not one JSON-RPC message veto can read, so it is not passed on."))
		return
	}
	switch f.kind {
	case kindBatch:
		if b := refuseBatch(f); b != nil {
			g.toAgent(ctx, b)
		}
		return
	case kindRequest:
		if g.idTaken(f.idKey) {
			g.toAgent(ctx, errorFrame(f.id, codeInvalidRequest, "veto mcp: a request with this id is in flight already."))
			return
		}
		switch f.method {
		case "tools/call", "tools/list", "server/discover", "subscriptions/listen":
			g.noteMeta(f)
		}
		switch f.method {
		case "tools/call":
			g.startSync(ctx)
			g.onCall(ctx, f)
			return
		case "tools/list":
			g.startSync(ctx)
			g.onList(ctx, f)
			return
		case "initialize", "server/discover":
			g.callsMu.Lock()
			g.initKey, g.initDisc = f.idKey, f.method == "server/discover"
			if f.method == "initialize" {
				g.meta = nil // the legacy handshake: requests carry no _meta triple
			}
			g.callsMu.Unlock()
		}
	case kindNotification:
		switch f.method {
		case "tools/call", "tools/list":
			return // a call without an id cannot be answered: never passed on
		case "notifications/initialized":
			if err := g.toServer(ctx, raw); err != nil {
				return
			}
			g.startSync(ctx)
			return
		case "notifications/cancelled":
			g.onCancelled(f)
		}
	}
	if f.kind == kindRequest {
		g.asked.Store(true)
	}
	if err := g.toServer(ctx, raw); err != nil && f.kind == kindRequest {
		g.toAgent(ctx, errorFrame(f.id, codeInternal, "veto mcp: the MCP server "+g.cfg.Name+" cannot be reached."))
	}
}

// idTaken reports whether id is one the gateway matches answers by now:
// a tools/call in flight, or the gateway's own.
func (g *Gateway) idTaken(key string) bool {
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	_, call := g.calls[key]
	_, own := g.internal[key]
	return call || own
}

// startSync starts the first listing, once: after the agent's
// initialized (or the server's answer to server/discover), or at the
// agent's first tools/list or tools/call if neither came.
func (g *Gateway) startSync(ctx context.Context) {
	if !g.inited.Swap(true) {
		go g.firstSync(ctx)
	}
}

// noteMeta keeps what a stateless client (MCP 2026-07-28) says of itself
// in each request's _meta (its protocol version, information and
// capabilities), for the gateway's own requests; and the id of its
// subscriptions/listen for tool changes, which the gateway's own
// notification names.
func (g *Gateway) noteMeta(f *frame) {
	m, err := members(f.params)
	if err != nil {
		return
	}
	for _, mb := range m {
		switch mb.key {
		case "_meta":
			mm, err := members(mb.value)
			if err != nil {
				continue
			}
			keep := map[string]json.RawMessage{}
			for _, x := range mm {
				switch x.key {
				case "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities":
					keep[x.key] = x.value
				}
			}
			if len(keep) > 0 {
				b, _ := json.Marshal(keep)
				g.callsMu.Lock()
				g.meta = b
				g.callsMu.Unlock()
			}
		case "notifications":
			if f.method != "subscriptions/listen" {
				continue
			}
			var n struct {
				Tools bool `json:"toolsListChanged"`
			}
			if json.Unmarshal(mb.value, &n) == nil && n.Tools {
				g.callsMu.Lock()
				g.listenID = f.id
				g.callsMu.Unlock()
			}
		}
	}
}

// firstSync lists and pins the server's tools once the agent has
// initialized it, and lets the listing be served.
func (g *Gateway) firstSync(ctx context.Context) {
	defer g.listOnce.Do(func() { close(g.listedCh) })
	if err := g.sync(ctx, true); err != nil && ctx.Err() == nil {
		g.log.Warn("veto mcp: listing the server's tools failed; its calls are refused until a listing succeeds", "server", g.cfg.Name)
	}
}

// waitListed waits for the first listing (bounded: a server that never
// lists leaves every call refused).
func (g *Gateway) waitListed(ctx context.Context) {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-g.listedCh:
	case <-t.C:
	case <-ctx.Done():
	}
}

// onList answers tools/list from the gateway's own copy of the pinned,
// offered definitions; the server's own answer never reaches the agent.
func (g *Gateway) onList(ctx context.Context, f *frame) {
	g.waitListed(ctx)
	g.mu.Lock()
	list := g.list
	g.mu.Unlock()
	if list == nil {
		list = []byte("[]")
	}
	res := make([]byte, 0, len(list)+12)
	res = append(append(append(res, `{"tools":`...), list...), '}')
	g.toAgent(ctx, resultFrame(f.id, res))
}

// listChanged tells the agent the listing changed.
func (g *Gateway) listChanged() {
	if !g.inited.Load() {
		return
	}
	g.callsMu.Lock()
	listen := g.listenID
	g.callsMu.Unlock()
	if listen != nil {
		g.toAgent(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(listen)+`}}}`))
		return
	}
	g.toAgent(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
}

// onCall decides one tools/call. Refused, the gateway answers it and the
// server never sees it; allowed, the call is written to the server as
// decided (its name, its arguments as veto read them, its other
// params as they came) and
// its answer is matched by id.
func (g *Gateway) onCall(ctx context.Context, f *frame) {
	answered := false
	answer := func(res json.RawMessage) {
		answered = true
		g.toAgent(ctx, resultFrame(f.id, res))
	}
	defer func() {
		if recover() != nil {
			g.log.Error("veto mcp: the gateway failed on a call; it is refused", "server", g.cfg.Name)
			if !answered {
				answer(denial("veto failed while handling this call, so it is refused."))
			}
		}
	}()
	p, err := parseCallParams(f.params)
	if err != nil {
		answer(denial("veto cannot read this call, so it is refused."))
		return
	}
	c, ok := g.callOf(p.name, p.args)
	if !ok {
		answer(denial("veto cannot read this call's arguments (they must be one JSON object), so it is refused."))
		return
	}
	g.waitListed(ctx)
	v := g.decide(ctx, c)
	if !v.Allowed {
		answer(denial(agent.Reason(v)))
		return
	}
	if v.Args != nil {
		c.Args = v.Args // patched: run as veto allowed it
	}
	args, err := json.Marshal(c.Args)
	if err != nil {
		answer(denial("veto cannot write this call's arguments, so it is refused."))
		return
	}
	name, _ := json.Marshal(p.name)
	req := make([]byte, 0, len(f.id)+len(name)+len(args)+len(f.params)+80)
	req = append(req, `{"jsonrpc":"2.0","id":`...)
	req = append(req, f.id...)
	req = append(req, `,"method":"tools/call","params":{"name":`...)
	req = append(req, name...)
	req = append(req, `,"arguments":`...)
	req = append(req, args...)
	for _, m := range p.rest {
		k, _ := json.Marshal(m.key)
		req = append(append(append(append(req, ','), k...), ':'), m.value...)
	}
	req = append(req, "}}"...)

	g.callsMu.Lock()
	if len(g.calls) >= maxPending {
		g.callsMu.Unlock()
		answer(denial("veto has too many calls in flight, so this one is refused."))
		g.enqueue(c, veto.Failed)
		return
	}
	g.calls[f.idKey] = c
	g.callsMu.Unlock()
	if err := g.toServer(ctx, req); err != nil {
		if g.takeCall(f.idKey) != nil {
			g.enqueue(c, veto.Failed)
			answer(notAnswered(g.cfg.Name))
		}
	}
}

// notAnswered is the result of a call the server never answered.
func notAnswered(server string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text",
		"text": "The MCP server " + server + " did not answer this call."}}, "isError": true})
	return b
}

func (g *Gateway) takeCall(key string) *veto.Call {
	g.callsMu.Lock()
	defer g.callsMu.Unlock()
	c := g.calls[key]
	delete(g.calls, key)
	return c
}

// onCancelled notes the agent's cancellation of a call in flight: its
// outcome is cancelled (an answer the server sends after is passed on).
func (g *Gateway) onCancelled(f *frame) {
	m, err := members(f.params)
	if err != nil {
		return
	}
	for _, mb := range m {
		if mb.key != "requestId" {
			continue
		}
		key, err := idKey(mb.value)
		if err != nil {
			return
		}
		if c := g.takeCall(key); c != nil {
			g.enqueue(c, veto.Cancelled)
		}
	}
}

// readUpstream reads the server's frames until it is gone: answers to
// the gateway's own requests are taken, tools/call answers recorded,
// list_changed acted on, and everything else passed to the agent as it
// came.
func (g *Gateway) readUpstream() {
	defer func() {
		if recover() != nil {
			g.log.Error("veto mcp: the gateway failed reading the server", "server", g.cfg.Name)
		}
		close(g.upDone)
		g.upstreamGone()
		close(g.upGone)
	}()
	ctx := context.Background()
	for {
		raw, err := g.up.Read(ctx)
		if errors.Is(err, errFrameTooLarge) {
			g.log.Warn("veto mcp: a message of the server's is over 16 MiB; it is dropped", "server", g.cfg.Name)
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				g.log.Warn("veto mcp: reading the server failed", "server", g.cfg.Name)
			}
			return
		}
		g.heard.Store(true)
		g.fromServer(ctx, raw, true)
	}
}

// ServerSilent reports, once the gateway is closed, whether the server
// ended without a word while the agent had asked it something or was
// still connected: a command that is no MCP server. (A command that
// exits at once may end before the agent's initialize is even read.)
func (g *Gateway) ServerSilent() bool {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-g.upDone:
	case <-t.C:
		return false
	}
	return (g.asked.Load() || g.upFirst.Load()) && !g.heard.Load()
}

// upstreamGone answers every call in flight (the server did not answer
// it) and records it failed.
func (g *Gateway) upstreamGone() {
	g.callsMu.Lock()
	calls := g.calls
	g.calls = map[string]*veto.Call{}
	for k, ch := range g.internal {
		close(ch)
		delete(g.internal, k)
	}
	g.callsMu.Unlock()
	for key, c := range calls {
		g.enqueue(c, veto.Failed)
		g.toAgent(context.Background(), resultFrame(rawID(key), notAnswered(g.cfg.Name)))
	}
}

// rawID writes an id key back as JSON.
func rawID(key string) json.RawMessage {
	if len(key) > 2 && key[:2] == "s:" {
		b, _ := json.Marshal(key[2:])
		return b
	}
	return json.RawMessage(key[2:])
}

func (g *Gateway) fromServer(ctx context.Context, raw []byte, top bool) {
	f, err := parseFrame(raw)
	if err != nil {
		g.log.Warn("veto mcp: a message of the server's is not JSON-RPC veto can read; it is dropped", "server", g.cfg.Name)
		return
	}
	switch f.kind {
	case kindBatch:
		if !top {
			return
		}
		for _, it := range f.items {
			g.fromServer(ctx, it, false) // each alone, in order
		}
		return
	case kindResponse:
		g.callsMu.Lock()
		ch, own := g.internal[f.idKey]
		delete(g.internal, f.idKey)
		c := g.calls[f.idKey]
		delete(g.calls, f.idKey)
		isInit := !own && c == nil && g.initKey != "" && f.idKey == g.initKey
		disc := isInit && g.initDisc
		if isInit {
			g.initKey = ""
		}
		g.callsMu.Unlock()
		switch {
		case own:
			ch <- f
			return
		case c != nil:
			outcome := veto.Succeeded
			if f.err != nil || isErrorResult(f.result) {
				outcome = veto.Failed
			}
			// Asked for before the agent reads the answer: the run's next
			// decision waits for it.
			g.enqueue(c, outcome)
		case isInit:
			raw = g.initialized(f, raw)
			if disc && g.discovered(f.result) {
				// Stateless: no initialized follows; the gateway lists
				// once this answer is on its way.
				defer g.startSync(context.Background())
			}
		}
	case kindNotification:
		if f.method == "notifications/tools/list_changed" {
			g.resync() // the gateway lists again, and tells the agent if what it serves changed
			return
		}
	}
	g.toAgent(ctx, raw)
}

// initialized reads the server's initialize result: what it calls itself
// (for curated descriptors) and the protocol version; the agent is told
// the tools' listing may change, as the gateway says when it does.
func (g *Gateway) initialized(f *frame, raw []byte) []byte {
	if f.result == nil {
		return raw
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(f.result, &res) != nil {
		return raw
	}
	var info struct {
		Name string `json:"name"`
	}
	var meta struct {
		Info *struct {
			Name string `json:"name"`
		} `json:"io.modelcontextprotocol/serverInfo"`
	}
	if json.Unmarshal(res["serverInfo"], &info) == nil || json.Unmarshal(res["_meta"], &meta) == nil && meta.Info != nil {
		if meta.Info != nil {
			info.Name = meta.Info.Name
		}
		g.mu.Lock()
		g.impl = info.Name
		g.mu.Unlock()
	}
	var version string
	if json.Unmarshal(res["protocolVersion"], &version) == nil && g.protocol != nil {
		g.protocol(version)
	}
	caps := map[string]json.RawMessage{}
	_ = json.Unmarshal(res["capabilities"], &caps)
	if caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["tools"] = json.RawMessage(`{"listChanged":true}`)
	b, err := json.Marshal(caps)
	if err != nil {
		return raw
	}
	res["capabilities"] = b
	out, err := json.Marshal(res)
	if err != nil {
		return raw
	}
	return resultFrame(f.id, out)
}

// discovered reports whether a server/discover result takes the version
// the agent asked for: else the agent falls back to initialize, and the
// gateway lists after initialized.
func (g *Gateway) discovered(result json.RawMessage) bool {
	var res struct {
		Versions []string `json:"supportedVersions"`
	}
	var meta struct {
		Version string `json:"io.modelcontextprotocol/protocolVersion"`
	}
	g.callsMu.Lock()
	m := g.meta
	g.callsMu.Unlock()
	if result == nil || json.Unmarshal(result, &res) != nil || m == nil || json.Unmarshal(m, &meta) != nil {
		return false
	}
	return slices.Contains(res.Versions, meta.Version)
}

// request is one request of the gateway's own to the server, under an id
// the agent's never are.
func (g *Gateway) request(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	id := g.idPrefix + strconv.FormatUint(g.seq.Add(1), 10)
	ch := make(chan *frame, 1)
	g.callsMu.Lock()
	select {
	case <-g.upDone:
		g.callsMu.Unlock()
		return nil, io.EOF
	default:
	}
	g.internal["s:"+id] = ch
	g.callsMu.Unlock()
	defer func() {
		g.callsMu.Lock()
		delete(g.internal, "s:"+id)
		g.callsMu.Unlock()
	}()
	g.callsMu.Lock()
	if g.meta != nil {
		params["_meta"] = g.meta
	}
	g.callsMu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := g.toServer(ctx, b); err != nil {
		return nil, err
	}
	select {
	case f, ok := <-ch:
		if !ok {
			return nil, io.EOF
		}
		if f.err != nil {
			return nil, errors.New("mcpgate: the server answered " + method + " with an error")
		}
		return f.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// maxPages bounds a listing's pages.
const maxPages = 1000

// listTools lists every tool of the server, page by page.
func (g *Gateway) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out []*mcp.Tool
	cursor := ""
	for range maxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := g.request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return nil, err
		}
		for _, raw := range page.Tools {
			t := &mcp.Tool{}
			if err := json.Unmarshal(raw, t); err != nil {
				g.log.Warn("veto mcp: a tool's definition cannot be read; it is left out", "server", g.cfg.Name)
				continue
			}
			out = append(out, t)
		}
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
	return nil, errors.New("mcpgate: the server's listing has too many pages")
}

// enqueue asks for a call's outcome to be recorded. It is asked for
// before the agent is given the answer, and every decision makes the
// records asked for before it first (takeRecords): the run's next
// decision sees this observation. At most maxPending wait; past that it
// waits for room.
func (g *Gateway) enqueue(c *veto.Call, outcome veto.Outcome) {
	g.obsRoom <- struct{}{}
	g.obsMu.Lock()
	g.queued++
	g.obsQ = append(g.obsQ, obsJob{c: c, outcome: outcome})
	g.obsMu.Unlock()
	select {
	case g.obsWake <- struct{}{}:
	default:
	}
}

// recordWindow is how long a record asked for waits, where the state can
// hold a transaction for several appends (Config.Together), for a
// decision to take it into its own commit (takeRecords): an agent that
// calls again at once after a result (the calls of one turn of its
// model) then pays for one commit a call, not two. With no call after
// it, the record is made alone once the window has passed.
var recordWindow = 2 * time.Millisecond // a test lengthens it

// recordLoop makes the records that no decision took, in order: under
// decideMu, as a decision takes them, so that one of them is made either
// by the recorder or by the next decision, before it, never after.
func (g *Gateway) recordLoop() {
	for {
		select {
		case <-g.obsWake:
		case <-g.quit:
			return
		}
		if g.cfg.Together != nil {
			t := time.NewTimer(g.window)
			select {
			case <-t.C:
			case <-g.flush:
				t.Stop()
			case <-g.quit:
				t.Stop()
				return
			}
		}
		func() {
			g.decideMu.Lock()
			defer g.decideMu.Unlock()
			jobs := g.takeRecords()
			defer g.recorded(len(jobs))
			for _, j := range jobs {
				func() {
					defer func() {
						if recover() != nil {
							g.log.Error("veto mcp: recording a call's result failed", "server", g.cfg.Name, "call_id", j.c.ID)
						}
					}()
					g.observe(context.Background(), j.c, j.outcome)
				}()
			}
		}()
	}
}

// takeRecords takes the records asked for and not yet taken, in order;
// the caller holds decideMu, makes them, and then notes them made
// (recorded).
func (g *Gateway) takeRecords() []obsJob {
	g.obsMu.Lock()
	defer g.obsMu.Unlock()
	jobs := g.obsQ
	g.obsQ = nil
	return jobs
}

// recorded notes n records made (or given up), and their room free.
func (g *Gateway) recorded(n int) {
	if n == 0 {
		return
	}
	g.obsMu.Lock()
	g.done += uint64(n)
	close(g.obsSig)
	g.obsSig = make(chan struct{})
	g.obsMu.Unlock()
	for range n {
		<-g.obsRoom
	}
}

// waitRecords waits until every record asked for so far is made.
func (g *Gateway) waitRecords(ctx context.Context) error {
	g.obsMu.Lock()
	target := g.queued
	g.obsMu.Unlock()
	for {
		g.obsMu.Lock()
		done, sig := g.done, g.obsSig
		g.obsMu.Unlock()
		if done >= target {
			return nil
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return ctx.Err()
		case <-g.quit:
			return errors.New("mcpgate: closed")
		}
	}
}
