// Package mcpgate is veto's MCP gateway: it stands between an agent and
// one upstream MCP server, relaying JSON-RPC frames as bytes (relay.go),
// decides every tools/call through the gate before the upstream sees it,
// and records what each call did. Only what it judges or pins is decoded:
// initialize (or server/discover), tools/list, the server's
// notifications/tools/list_changed, and tools/call with its answer.
//
// Each call is decided as the tool mcp__NAME__TOOL, described by the
// policy's descriptor, the curated one of a known server (tools.MCPServers)
// or one built from the tool's input schema (Describe). A denial is a tool
// result with isError and veto's reason; the upstream never sees the call.
// Every failure of veto on the way (the state refused, a panic, the
// deadline) is such a denial.
//
// The listing the agent sees is the upstream's, less the tools
// offerability refuses and those whose definitions are not pinned: each
// tool's name, description and input schema are hashed and pinned the
// first time the server is listed (Pins); a tool whose definition changes
// later, or that appears after the first listing, is refused
// (tool_definition_changed, tool_new) until a person approves it
// (`veto mcp approve`, by the hash of the definition they read).
//
// What the server sends is bounded, never cut: a tool whose name is
// outside the MCP character set (ValidToolName) is neither listed nor
// called (tool_name_invalid), and one whose definition is over
// MaxDefinition is never pinned, shown or called
// (tool_definition_too_large).
package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/internal/loaded"
)

// BuildFunc builds the gate the gateway decides with: the policy's, with
// the descriptors the gateway adds (extra: for tools it has none for) and
// the gateway's rules appended, and the offerability the gate uses.
type BuildFunc func(extra []veto.Descriptor, rules []veto.Rule) (*veto.Gate, veto.Offerability, error)

// Config is what a Gateway is made from.
type Config struct {
	// Name is the server's name: its tools are decided as mcp__NAME__TOOL.
	Name string
	// Upstream reaches the server the gateway stands in front of.
	Upstream Transport
	Build    BuildFunc
	Pins     *Pins
	// Acquire, when set, proves the state sound before each use and holds
	// it until release (an SQLite file); nil for PostgreSQL.
	Acquire func(ctx context.Context) (release func(), err error)
	// Together, when set, runs f with one write transaction held for it
	// (an SQLite file: state.Service.Together), its appends stored in one
	// commit or none, the error that commit's. A decision made right
	// after a result then stores the result's record and itself at once.
	Together func(ctx context.Context, f func(ctx context.Context)) error

	Run       string // the run every call belongs to; started fresh by Start
	Actor     veto.Actor
	Cwd       string // where calls are judged from (the gateway's directory)
	Workspace string
	// Deadline bounds each decision and each record (default 2s).
	Deadline time.Duration
	// Poll is how often the pins are read again, so that an approval
	// reaches the listing, and every 15 polls the server is listed again
	// (default 2s; negative: never).
	Poll   time.Duration
	Logger *slog.Logger // what the gateway does, never a call's arguments or output
	Now    func() time.Time
}

// Gateway is one upstream server behind veto, relayed to one agent at a
// time: frames pass as bytes, and only those it judges or pins are read.
type Gateway struct {
	cfg  Config
	log  *slog.Logger
	up   Conn
	rule *pinRule

	decideMu sync.Mutex // one decision or record of the run at a time

	// deadline is cfg.Deadline, in nanoseconds, read by every decision and
	// sync (a test changes it on a running gateway).
	deadline atomic.Int64

	mu       sync.Mutex
	impl     string // what the upstream calls itself
	gate     *veto.Gate
	offer    veto.Offerability
	extra    map[string]veto.Descriptor // descriptors the gateway added, by tool
	listing  map[string]listed          // the upstream's tools, by their own names
	pinned   map[string]string          // tool → pinned hash
	served   map[string]string          // tools served downstream → the hash they were served at
	list     []byte                     // the served tools, as the tools array of a tools/list result
	awaiting []string                   // the tools refused until approved, as last said
	tooLarge []string                   // the tools refused for their definitions' size, as last said
	synced   bool
	syncing  chan struct{} // one sync at a time
	resyncCh chan struct{}

	relay
}

// listed is one upstream tool as last listed.
type listed struct {
	tool *mcp.Tool
	hash string
	size int // its definition's length: over MaxDefinition it is refused
}

// tooLarge reports whether the tool's definition is over the bound a
// person can be shown whole.
func (l listed) tooLarge() bool { return l.size > MaxDefinition }

// New records the run's start and connects to the upstream (starting its
// command). The upstream is initialized by the agent's own initialize,
// relayed, and listed and pinned right after; see Serve.
func New(ctx context.Context, cfg Config) (*Gateway, error) {
	if !ValidServerName(cfg.Name) {
		return nil, errors.New("mcpgate: a server name is required: printable, at most 64 bytes, without \"__\"")
	}
	if cfg.Upstream == nil || cfg.Build == nil || cfg.Pins == nil || cfg.Run == "" {
		return nil, errors.New("mcpgate: Upstream, Build, Pins and Run are required")
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = 2 * time.Second
	}
	if cfg.Poll == 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, rule: &pinRule{server: cfg.Name}, syncing: make(chan struct{}, 1), resyncCh: make(chan struct{}, 1)}
	g.deadline.Store(int64(cfg.Deadline))
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	gate, offer, err := cfg.Build(nil, []veto.Rule{g.rule})
	if err != nil {
		return nil, &StartError{Step: "building the gate", Err: err}
	}
	g.gate, g.offer = gate, offer
	if err := g.withState(ctx, func(ctx context.Context) error {
		return gate.Start(ctx, veto.Run{Ref: cfg.Run, Fresh: true})
	}); err != nil {
		return nil, &StartError{Step: "starting the run", State: true, Err: err}
	}
	up, err := cfg.Upstream.Connect(ctx)
	if err != nil {
		return nil, &StartError{Step: "connecting to the server", Err: err}
	}
	g.up = up
	g.startRelay()
	return g, nil
}

// StartError is why New failed: the step, whether the state refused it,
// and the cause.
type StartError struct {
	Step  string
	State bool // the state refused it
	Err   error
}

func (e *StartError) Error() string { return "mcpgate: " + e.Step + ": " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Gate is the gate the gateway decides with now.
func (g *Gateway) Gate() *veto.Gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gate
}

// Rebuild makes build the gateway's BuildFunc (the policy changed: a
// revision activated, a file edited) and builds the gate with it and the
// descriptors the gateway added; the next call is decided by it. On an
// error the gateway keeps deciding with the gate it had.
func (g *Gateway) Rebuild(ctx context.Context, build BuildFunc) error {
	// Between syncs: a sync builds with the BuildFunc it read.
	select {
	case g.syncing <- struct{}{}:
		defer func() { <-g.syncing }()
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	list := slices.Collect(maps.Values(g.extra))
	g.mu.Unlock()
	slices.SortFunc(list, func(a, b veto.Descriptor) int { return strings.Compare(a.Name, b.Name) })
	gate, offer, err := build(list, []veto.Rule{g.rule})
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.cfg.Build, g.gate, g.offer = build, gate, offer
	g.mu.Unlock()
	return nil
}

// syncError is a failed sync's step.
type syncError struct {
	step  string
	state bool
	err   error
}

func (e *syncError) Error() string { return "mcpgate: " + e.step + ": " + e.err.Error() }
func (e *syncError) Unwrap() error { return e.err }

// KeepSynced keeps the listing in step with the upstream and the pins
// until ctx ends; Serve runs it, a server of its own (streamable HTTP)
// runs it beside.
func (g *Gateway) KeepSynced(ctx context.Context) { g.keepSynced(ctx) }

// keepSynced lists the upstream again when it says its list changed, and
// reads the pins again every Poll, until ctx ends.
func (g *Gateway) keepSynced(ctx context.Context) {
	const relist = 15
	ticks := 0
	var tick <-chan time.Time
	if g.cfg.Poll > 0 {
		t := time.NewTicker(g.cfg.Poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.resyncCh:
			if err := g.sync(ctx, true); err != nil && ctx.Err() == nil {
				g.log.Warn("veto mcp: listing the upstream's tools again failed; the listing is unchanged", "server", g.cfg.Name)
			}
		case <-tick:
			// Every relist-th tick the server is listed again too: one that
			// changes a definition without saying so is caught then.
			ticks++
			if err := g.sync(ctx, ticks%relist == 0); err != nil && ctx.Err() == nil {
				g.log.Warn("veto mcp: reading the pins failed", "server", g.cfg.Name)
			}
		}
	}
}

// resync asks for the upstream to be listed again (its list changed).
func (g *Gateway) resync() {
	select {
	case g.resyncCh <- struct{}{}:
	default:
	}
}

// Sync lists the upstream's tools again and brings the listing, the pins
// and the gate in step (what notifications/tools/list_changed does).
func (g *Gateway) Sync(ctx context.Context) error { return g.sync(ctx, true) }

// sync brings the served listing in step: with list, the upstream's tools
// are listed and recorded in the pins first; then the pins are read, the
// gate is rebuilt when the descriptors it needs changed, and the tools
// pinned and offered are served.
func (g *Gateway) sync(ctx context.Context, list bool) (err error) {
	defer func() {
		if recover() != nil {
			err = &syncError{step: "bringing the listing in step", err: errors.New("the gateway failed")}
		}
	}()
	select {
	case g.syncing <- struct{}{}:
		defer func() { <-g.syncing }()
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	listing := g.listing
	g.mu.Unlock()
	if list {
		fresh := map[string]listed{}
		var seen []Seen
		invalid := 0
		tools, err := g.listTools(ctx)
		if err != nil {
			return &syncError{step: "listing the server's tools", err: err}
		}
		for _, t := range tools {
			if !ValidToolName(t.Name) {
				invalid++ // never served, pinned, or shown: its calls are refused
				continue
			}
			_, text, err := DefinitionOf(t)
			if err != nil {
				g.log.Warn("veto mcp: a tool's definition cannot be read; it is left out", "server", g.cfg.Name)
				continue
			}
			h := Hash(text)
			fresh[t.Name] = listed{tool: t, hash: h, size: len(text)}
			seen = append(seen, Seen{Tool: t.Name, Hash: h, Text: text})
		}
		if invalid > 0 {
			// Not the names: they are what the check keeps off screens.
			g.log.Warn("veto mcp: tools whose names are outside the MCP character set are left out and refused",
				"server", g.cfg.Name, "count", invalid)
		}
		if err := g.withState(ctx, func(ctx context.Context) error {
			first, err := g.cfg.Pins.Record(ctx, g.cfg.Name, seen, g.cfg.Now())
			if first {
				g.log.Info("veto mcp: the server's tools are pinned", "server", g.cfg.Name, "tools", len(seen))
			}
			return err
		}); err != nil {
			return &syncError{step: "recording the pins", state: true, err: err}
		}
		listing = fresh
	}
	var pinned map[string]string
	if err := g.withState(ctx, func(ctx context.Context) (err error) {
		pinned, err = g.cfg.Pins.PinnedAll(ctx, g.cfg.Name)
		return err
	}); err != nil {
		return &syncError{step: "reading the pins", state: true, err: err}
	}

	// The descriptors the gate lacks: the curated ones of a known server,
	// else those the input schemas give.
	g.mu.Lock()
	gate := g.gate
	oldExtra := g.extra
	g.mu.Unlock()
	curated := map[string]veto.Descriptor{}
	g.mu.Lock()
	impl := g.impl
	g.mu.Unlock()
	for _, d := range Curated(g.cfg.Name, impl) {
		curated[d.Name] = d
	}
	extra := map[string]veto.Descriptor{}
	for name, l := range listing {
		full := ToolName(g.cfg.Name, name)
		if _, ours := oldExtra[full]; !ours && gate.Descriptor(full) != nil {
			continue // the policy's, or veto's built-in one
		}
		if d, ok := curated[full]; ok {
			extra[full] = d
		} else if d := Describe(full, l.tool); d != nil {
			extra[full] = *d
		}
	}
	var offer veto.Offerability
	if !maps.EqualFunc(extra, oldExtra, sameDescriptor) || !g.synced {
		list := slices.Collect(maps.Values(extra))
		slices.SortFunc(list, func(a, b veto.Descriptor) int { return strings.Compare(a.Name, b.Name) })
		g.mu.Lock()
		build := g.cfg.Build
		g.mu.Unlock()
		ng, no, err := build(list, []veto.Rule{g.rule})
		if err != nil {
			return &syncError{step: "building the gate", err: err}
		}
		gate, offer = ng, no
	}

	g.mu.Lock()
	if offer != nil {
		g.gate, g.offer, g.extra = gate, offer, extra
	}
	g.listing, g.pinned, g.synced = listing, pinned, true
	offer = g.offer
	served := g.served
	g.mu.Unlock()

	// What the agent is shown: the tools pinned as listed, and offered.
	want := map[string]listed{}
	var awaiting, tooLarge []string
	for name, l := range listing {
		if l.tooLarge() {
			tooLarge = append(tooLarge, name)
			continue
		}
		if pinned[name] != l.hash {
			awaiting = append(awaiting, name)
			continue
		}
		if g.offered(ctx, gate, offer, name) {
			want[name] = l
		}
	}
	slices.Sort(awaiting)
	slices.Sort(tooLarge)
	g.mu.Lock()
	news := !slices.Equal(awaiting, g.awaiting) || !slices.Equal(tooLarge, g.tooLarge)
	g.awaiting, g.tooLarge = awaiting, tooLarge
	g.mu.Unlock()
	if len(awaiting) > 0 && news {
		g.log.Warn("veto mcp: tools refused until a person approves them (veto mcp pins --show, then veto mcp approve)",
			"server", g.cfg.Name, "tools", awaiting)
	}
	if len(tooLarge) > 0 && news {
		g.log.Warn("veto mcp: tools refused because their definitions are over 64 KiB, more than a person can be shown whole",
			"server", g.cfg.Name, "tools", tooLarge)
	}
	next := map[string]string{}
	var serve []*mcp.Tool
	for name, l := range want {
		if validSchema(l.tool) {
			next[name] = l.hash
			serve = append(serve, l.tool)
		} else if served[name] != l.hash {
			g.log.Warn("veto mcp: a tool's definition is malformed; it is left out", "server", g.cfg.Name)
		}
	}
	if maps.Equal(next, served) && served != nil {
		return nil
	}
	slices.SortFunc(serve, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	if serve == nil {
		serve = []*mcp.Tool{}
	}
	encoded, err := json.Marshal(serve)
	if err != nil {
		return &syncError{step: "serving the listing", err: err}
	}
	g.mu.Lock()
	g.served, g.list = next, encoded
	g.mu.Unlock()
	if served != nil {
		g.listChanged() // the agent lists again
	}
	return nil
}

func sameDescriptor(a, b veto.Descriptor) bool {
	return a.Name == b.Name && a.Caps == b.Caps && maps.Equal(a.Params, b.Params) && slices.Equal(a.TrustZones, b.TrustZones)
}

// validSchema reports whether a tool's input schema is one an MCP
// client accepts: a JSON Schema object of type object.
func validSchema(t *mcp.Tool) bool {
	m, ok := t.InputSchema.(map[string]any)
	return ok && m["type"] == "object"
}

// offered reports whether offerability lets the tool take part: a tool it
// refuses, or cannot judge, is left out of the listing.
func (g *Gateway) offered(ctx context.Context, gate *veto.Gate, offer veto.Offerability, name string) (ok bool) {
	if offer == nil {
		return true
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	full := ToolName(g.cfg.Name, name)
	c := &veto.Call{Tool: full, Actor: g.cfg.Actor, Run: veto.Run{Ref: g.cfg.Run}, Cwd: g.cfg.Cwd, Workspace: g.cfg.Workspace}
	denial, err := offer.Offer(ctx, c, gate.Descriptor(full))
	return err == nil && denial == ""
}

// within is how long a decision or a sync may take.
func (g *Gateway) within() time.Duration { return time.Duration(g.deadline.Load()) }

// withState runs f with the state proved sound, within the deadline.
func (g *Gateway) withState(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, g.within())
	defer cancel()
	if g.cfg.Acquire != nil {
		release, err := g.cfg.Acquire(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return f(ctx)
}

// callOf is the call veto decides: the tool under its full name, the
// arguments decoded once (numbers as written), in the gateway's run.
func (g *Gateway) callOf(name string, arguments json.RawMessage) (*veto.Call, bool) {
	args := map[string]any{}
	if raw := strings.TrimSpace(string(arguments)); raw != "" && raw != "null" {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || dec.More() || args == nil {
			return nil, false
		}
	}
	if !ValidToolName(name) {
		name = recordedName(name) // refused by the pin rule; recorded without what a terminal acts on
	}
	return &veto.Call{ID: newCallID(), Tool: ToolName(g.cfg.Name, name), Args: args, Actor: g.cfg.Actor,
		Run: veto.Run{Ref: g.cfg.Run}, Cwd: g.cfg.Cwd, Workspace: g.cfg.Workspace}, true
}

// decide is one decision within the deadline, the state proved sound.
func (g *Gateway) decide(ctx context.Context, c *veto.Call) veto.Verdict {
	ctx, cancel := context.WithTimeout(ctx, g.within())
	defer cancel()
	refuse := func(reason, msg string) veto.Verdict {
		return veto.Verdict{CallID: c.ID, Tool: c.Tool, Run: c.Run.Ref, Stage: veto.StageState, Reason: reason,
			Risk: veto.RiskHigh, Message: msg}
	}
	// The run's observations asked for so far come first: the decision
	// sees every result the agent has been given. The recorder makes them
	// under decideMu too, so once the decision holds it, those the
	// recorder took are made; it makes the rest (takeRecords, below). A
	// decision refused before it takes them leaves them to the recorder.
	g.decideMu.Lock()
	defer g.decideMu.Unlock()
	if ctx.Err() != nil {
		return refuse(veto.ReasonCancelled, "the decision ran out of time, so the call is refused.")
	}
	if g.cfg.Acquire != nil {
		release, err := g.cfg.Acquire(loaded.Appends(ctx)) // its appends prove the schema where they write
		if err != nil {
			return refuse(veto.ReasonStateUnavailable, "veto cannot use its state, so the call is refused.")
		}
		defer release()
	}
	g.mu.Lock()
	gate := g.gate
	name := strings.TrimPrefix(c.Tool, "mcp__"+g.cfg.Name+"__")
	l, listedNow := g.listing[name]
	known := g.pinned[name]
	g.mu.Unlock()
	// A pin, once it matches, stays (only approve writes one, and only the
	// gateway's own listing changes what is seen); one that does not is
	// read again at the call, so that an approval counts at once.
	status := pinNew
	switch {
	case !ValidToolName(name):
		status = pinBadName
	case listedNow && l.tooLarge():
		status = pinTooLarge
	case listedNow && known == l.hash:
		status = pinOK
	case listedNow:
		pinned, err := g.cfg.Pins.Pinned(ctx, g.cfg.Name, l.tool.Name)
		switch {
		case err != nil:
			return refuse(veto.ReasonStateUnavailable, "veto cannot read the tool's pinned definition, so the call is refused.")
		case pinned == l.hash:
			status = pinOK
		case pinned != "":
			status = pinChanged
		}
	}
	// Taken here, past every refusal that records nothing: a record taken
	// is made by this decision, or none is.
	taken := g.takeRecords()
	defer g.recorded(len(taken))
	if len(taken) == 0 {
		return gate.Decide(withPin(ctx, status), c)
	}
	// What the calls taught is probed first, outside the write lock the
	// transaction holds; then the records and the decision, in one commit.
	learnt := make([]*veto.Learnt, len(taken))
	for i, j := range taken {
		learnt[i] = g.learn(ctx, gate, j)
	}
	if g.cfg.Together == nil {
		for i, j := range taken {
			g.record(ctx, gate, j, learnt[i])
		}
		return gate.Decide(withPin(ctx, status), c)
	}
	var v veto.Verdict
	err := g.cfg.Together(ctx, func(ctx context.Context) {
		for i, j := range taken {
			g.record(ctx, gate, j, learnt[i])
		}
		v = gate.Decide(withPin(ctx, status), c)
	})
	if err == nil {
		return v
	}
	// Nothing was stored: the records are made again, each alone, and the
	// call, whose decision was not recorded, is refused.
	g.log.Warn("veto mcp: a decision and the results before it could not be recorded; the call is refused", "server", g.cfg.Name, "call_id", c.ID)
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.within())
	defer cancel()
	for i, j := range taken {
		g.record(octx, gate, j, learnt[i])
	}
	return refuse(veto.ReasonStateUnavailable, "veto could not record this decision, so the call is refused.")
}

// learn probes what a call taught (veto.Gate.Learn); nil, and logged,
// when it cannot: that record is not made.
func (g *Gateway) learn(ctx context.Context, gate *veto.Gate, j obsJob) (l *veto.Learnt) {
	defer func() {
		if recover() != nil {
			g.log.Error("veto mcp: recording a call's result failed", "server", g.cfg.Name, "call_id", j.c.ID)
			l = nil
		}
	}()
	r, err := gate.Learn(ctx, j.c, j.outcome)
	if err != nil {
		g.log.Warn("veto mcp: a call's result could not be recorded", "server", g.cfg.Name, "call_id", j.c.ID)
		return nil
	}
	return &r
}

// record records what learn made with gate, the state acquired by the
// caller, which holds decideMu; a failure is logged, as the recorder's.
func (g *Gateway) record(ctx context.Context, gate *veto.Gate, j obsJob, l *veto.Learnt) {
	defer func() {
		if recover() != nil {
			g.log.Error("veto mcp: recording a call's result failed", "server", g.cfg.Name, "call_id", j.c.ID)
		}
	}()
	if l == nil {
		return // learn could not, and said so
	}
	if err := gate.RecordLearnt(ctx, *l); err != nil {
		g.log.Warn("veto mcp: a call's result could not be recorded", "server", g.cfg.Name, "call_id", j.c.ID)
	}
}

// observe records what an allowed call did, within the deadline even when
// the agent went away. The caller holds the run's lock (taken before the
// state's, as decide takes them).
func (g *Gateway) observe(ctx context.Context, c *veto.Call, outcome veto.Outcome) {
	err := g.withState(loaded.Appends(context.WithoutCancel(ctx)), func(ctx context.Context) error {
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		return gate.ObserveCall(ctx, c, outcome)
	})
	if err != nil {
		g.log.Warn("veto mcp: a call's result could not be recorded", "server", g.cfg.Name, "call_id", c.ID)
	}
}

// denial is a refused call's result: what the model reads, as an error.
func denial(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": msg}}, "isError": true})
	return b
}
