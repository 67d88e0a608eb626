package mcpgate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
)

// wire is one end of a newline-delimited JSON pipe the test speaks raw.
type wire struct {
	t   *testing.T
	r   *bufio.Reader
	w   io.Writer
	wmu sync.Mutex
	got chan string
}

// rawListing is the tools the raw server lists.
const rawListing = `{"tools":[{"name":"greet","description":"Greet.","inputSchema":{"type":"object","properties":{"who":{"type":"string"}}}}]}`

// newWire reads r; as a server (lists), it answers the gateway's own
// tools/list itself, so that the test sees only the rest.
func newWire(t *testing.T, r io.Reader, w io.Writer, lists bool) *wire {
	x := &wire{t: t, r: bufio.NewReader(r), w: w, got: make(chan string, 64)}
	go func() {
		for {
			line, err := x.r.ReadString('\n')
			if err != nil {
				close(x.got)
				return
			}
			line = strings.TrimSuffix(line, "\n")
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if lists && json.Unmarshal([]byte(line), &req) == nil && req.Method == "tools/list" && strings.HasPrefix(string(req.ID), `"veto-mcp-`) {
				x.wmu.Lock()
				io.WriteString(x.w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+rawListing+"}\n")
				x.wmu.Unlock()
				continue
			}
			x.got <- line
		}
	}()
	return x
}

func (x *wire) send(s string) {
	x.t.Helper()
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if _, err := io.WriteString(x.w, s+"\n"); err != nil {
		x.t.Fatal(err)
	}
}

func (x *wire) recv() string {
	x.t.Helper()
	select {
	case s, ok := <-x.got:
		if !ok {
			x.t.Fatal("the pipe closed")
		}
		return s
	case <-time.After(20 * time.Second):
		x.t.Fatal("timed out waiting for a frame")
	}
	return ""
}

// quiet asserts nothing arrives for a while.
func (x *wire) quiet() {
	x.t.Helper()
	select {
	case s := <-x.got:
		x.t.Fatalf("want nothing, got %s", s)
	case <-time.After(200 * time.Millisecond):
	}
}

// rawWorld is a gateway between two raw pipes: the test speaks for the
// agent and for the server, byte for byte.
type rawWorld struct {
	*harness
	agent, server *wire
}

func newRawWorld(t *testing.T) *rawWorld { return newRawWorldWith(t, harnessOpts{}) }

func newRawWorldWith(t *testing.T, o harnessOpts) *rawWorld {
	upR, gwUpW := io.Pipe() // the gateway writes to the server
	gwUpR, upW := io.Pipe() // the server writes to the gateway
	dnR, gwDnW := io.Pipe() // the gateway writes to the agent
	gwDnR, dnW := io.Pipe() // the agent writes to the gateway
	h := newGatewayOnly(t, "raw", &IOTransport{Reader: gwUpR, Writer: gwUpW}, o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go h.gw.Serve(ctx, &IOTransport{Reader: gwDnR, Writer: gwDnW})
	w := &rawWorld{harness: h, agent: newWire(t, dnR, dnW, false), server: newWire(t, upR, upW, true)}
	t.Cleanup(func() { upW.Close(); dnW.Close(); gwUpW.Close(); gwDnW.Close() })

	// The legacy handshake, relayed as it came; the gateway then lists.
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"a","version":"1"}}}`
	w.agent.send(init)
	if got := w.server.recv(); got != init {
		t.Fatalf("initialize reached the server as %s", got)
	}
	w.server.send(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"raw","version":"1"}}}`)
	var res struct {
		Result struct {
			Capabilities struct {
				Tools struct {
					ListChanged bool `json:"listChanged"`
				} `json:"tools"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(w.agent.recv()), &res); err != nil || !res.Result.Capabilities.Tools.ListChanged {
		t.Fatalf("the initialize result: %v %+v", err, res)
	}
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	w.agent.send(initialized)
	if got := w.server.recv(); got != initialized {
		t.Fatalf("initialized reached the server as %s", got)
	}
	// The gateway's listing is served once it is made.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case <-h.gw.listedCh:
			return w
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway did not list the server")
		}
	}
}

// Every message the gateway does not judge passes byte for byte, both
// ways: requests, their answers, notifications, the server's requests.
func TestRelayPassesOtherMessagesByteForByte(t *testing.T) {
	w := newRawWorld(t)
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":"r 1","method":"resources/read","params":{"uri":"file:///x",   "z":[1.50,2e3]}}`,
		`{"method":"prompts/get","jsonrpc":"2.0","params":{"name":"p\u00e9"},"id":9007199254740993}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r 1"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"role":"assistant","content":{"type":"text","text":"` + canary + `"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	} {
		w.agent.send(m)
		if got := w.server.recv(); got != m {
			t.Fatalf("sent %s\nthe server got %s", m, got)
		}
	}
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":"r 1","result":{"contents":[{"uri":"file:///x","text":"` + canary + `"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
		`{"jsonrpc":"2.0","id":"x","method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
	} {
		w.server.send(m)
		if got := w.agent.recv(); got != m {
			t.Fatalf("the server sent %s\nthe agent got %s", m, got)
		}
	}
	if evs := w.events(); len(evs) != 1 || evs[0].Kind != veto.EventRunStarted {
		t.Fatalf("want only the run's start recorded, got %+v", evs)
	}
}

// A tools/call is decided; allowed, it reaches the server as decided and
// the answer comes back as the server wrote it, matched by id (string
// and number ids apart), and its outcome is recorded.
func TestRelayDecidesCallsAndMatchesIDs(t *testing.T) {
	w := newRawWorld(t)
	w.agent.send(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"greet","arguments":{"who":"ada"},"_meta":{"progressToken":"p"}}}`)
	got := w.server.recv()
	want := `{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"greet","arguments":{"who":"ada"},"_meta":{"progressToken":"p"}}}`
	if got != want {
		t.Fatalf("the server got %s", got)
	}
	w.agent.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet","arguments":{"who":"bob"}}}`)
	if got := w.server.recv(); !strings.Contains(got, `"id":7,`) || !strings.Contains(got, "bob") {
		t.Fatalf("the server got %s", got)
	}
	// The number's answer fails, the string's succeeds: each recorded as its own.
	failed := `{"jsonrpc":"2.0","id":7.0,"result":{"content":[],"isError":true}}`
	ok := `{"jsonrpc":"2.0","id":"7","result":{"content":[{"type":"text","text":"` + canary + `"}]}}`
	w.server.send(failed)
	if got := w.agent.recv(); got != failed {
		t.Fatalf("the agent got %s", got)
	}
	w.server.send(ok)
	if got := w.agent.recv(); got != ok {
		t.Fatalf("the agent got %s", got)
	}
	var outcomes []veto.Outcome
	var allowed []string
	for _, e := range w.events() {
		switch e.Kind {
		case veto.EventObserved:
			outcomes = append(outcomes, e.Outcome)
		case veto.EventAllowed:
			allowed = append(allowed, e.CallID)
		}
	}
	if len(allowed) != 2 || len(outcomes) != 2 || outcomes[0] != veto.Failed || outcomes[1] != veto.Succeeded {
		t.Fatalf("allowed %v, outcomes %v", allowed, outcomes)
	}
}

// What the gateway cannot judge never reaches the server: a batch with a
// call in it, a frame naming a member twice, a call it cannot read, a
// tools/call without an id, a frame over the depth bound.
func TestRelayRefusesWhatItCannotJudge(t *testing.T) {
	w := newRawWorld(t)
	refused := func(frame, wantID string) {
		t.Helper()
		w.agent.send(frame)
		if wantID == "" {
			w.agent.quiet()
		} else {
			got := w.agent.recv()
			if !strings.Contains(got, `"id":`+wantID) || strings.Contains(got, canary) {
				t.Fatalf("%s\nanswered %s", frame, got)
			}
		}
		w.server.quiet()
	}
	refused(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"`+canary+`"}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, "1")
	refused(`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"greet"}}`, "null")
	refused(`{"jsonrpc":"2.0","id":1,"meth\u006fd":"ping","method":"tools/call","params":{"name":"greet"}}`, "null")
	refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","name":"other"}}`, "1")
	refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":"`+canary+`"}}`, "1")
	refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"greet"}`, "1")
	refused(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"greet","arguments":{}}}`, "")
	refused(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"greet"}}`, "null")
	refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":`+strings.Repeat("[", MaxDepth)+strings.Repeat("]", MaxDepth)+`}}}`, "null")
	refused(`{"jsonrpc":"2.0","id":1,"method":"tools/call"`, "null")
	// The batch's call was answered, not decided: nothing was recorded but the run.
	if evs := w.events(); len(evs) != 1 {
		t.Fatalf("recorded %+v", evs)
	}
}

// The listing the agent gets is the gateway's: answered by it, with the
// pinned tools only, never the server's answer passed through.
func TestRelayAnswersTheListing(t *testing.T) {
	w := newRawWorld(t)
	w.agent.send(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)
	got := w.agent.recv()
	if !strings.Contains(got, `"id":"l"`) || !strings.Contains(got, `"name":"greet"`) {
		t.Fatalf("the listing: %s", got)
	}
	w.server.quiet()
}

// A call's observation is recorded after its answer went back, and the
// run's next decision waits for it.
func TestRelayNextDecisionWaitsForTheObservation(t *testing.T) {
	w := newRawWorld(t)
	// Hold the run's lock: the observation cannot be made yet.
	w.agent.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"a"}}}`)
	w.server.recv()
	w.gw.decideMu.Lock()
	w.server.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	w.agent.recv() // the answer is back while the record waits
	w.agent.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"b"}}}`)
	w.server.quiet() // not decided: it waits for the observation
	w.gw.decideMu.Unlock()
	w.server.recv()
	var kinds []veto.EventKind
	for _, e := range w.events() {
		kinds = append(kinds, e.Kind)
	}
	want := []veto.EventKind{veto.EventRunStarted, veto.EventAllowed, veto.EventObserved, veto.EventAllowed}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
}

// kinds is the events' kinds, in order.
func kinds(evs []veto.Event) []veto.EventKind {
	var out []veto.EventKind
	for _, e := range evs {
		out = append(out, e.Kind)
	}
	return out
}

// A call made right after a result is decided in the commit that records
// the result: the decision takes the record no one has begun to make,
// where it would have waited for the record's own commit. Here no record
// is made alone (the window is an hour): the second call is decided at
// once, and its decision comes after the first call's result.
func TestRelayDecisionRecordsTheResultBeforeItInItsCommit(t *testing.T) {
	defer func(w time.Duration) { recordWindow = w }(recordWindow)
	recordWindow = time.Hour
	var held, commits atomic.Int32
	w := newRawWorldWith(t, harnessOpts{together: func(ctx context.Context, f func(context.Context), state func(context.Context, func(context.Context)) error) error {
		held.Add(1)
		err := state(ctx, f)
		if err == nil {
			commits.Add(1)
		}
		return err
	}})
	w.agent.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"a"}}}`)
	w.server.recv()
	w.server.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	w.agent.recv()
	w.agent.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"b"}}}`)
	w.server.recv() // decided, with the record an hour from being made alone
	w.server.send(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	w.agent.recv()
	if held.Load() != 1 || commits.Load() != 1 {
		t.Fatalf("%d transactions held, %d committed; want the second decision's, one", held.Load(), commits.Load())
	}
	// The second call's record is still waiting: the next decision takes it.
	w.gw.obsMu.Lock()
	waiting := len(w.gw.obsQ)
	w.gw.obsMu.Unlock()
	if waiting != 1 {
		t.Fatalf("%d records waiting, want the second call's", waiting)
	}
	w.agent.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"who":"c"}}}`)
	w.server.recv()
	got := kinds(w.events())
	want := []veto.EventKind{veto.EventRunStarted, veto.EventAllowed, veto.EventObserved, veto.EventAllowed, veto.EventObserved, veto.EventAllowed}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// A decision whose commit, the records taken with it, fails refuses its
// call, as any decision not recorded does; the records are then made
// each alone: no result the agent was given goes unrecorded.
func TestRelayDecisionWhoseCommitFailsIsRefusedAndTheResultKept(t *testing.T) {
	defer func(w time.Duration) { recordWindow = w }(recordWindow)
	recordWindow = time.Hour
	var fail atomic.Bool
	w := newRawWorldWith(t, harnessOpts{together: func(ctx context.Context, f func(context.Context), state func(context.Context, func(context.Context)) error) error {
		if !fail.Load() {
			return state(ctx, f)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return state(ctx, func(ctx context.Context) {
			f(ctx)
			cancel() // the commit is refused: nothing of it is stored
		})
	}})
	w.agent.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"a"}}}`)
	w.server.recv()
	w.server.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	w.agent.recv()
	fail.Store(true)
	w.agent.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"b"}}}`)
	got := w.agent.recv()
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "could not record this decision") {
		t.Fatalf("the call whose decision was not stored: %s", got)
	}
	w.server.quiet() // refused: it never reached the server
	evs := w.events()
	if k := fmt.Sprint(kinds(evs)); k != fmt.Sprint([]veto.EventKind{veto.EventRunStarted, veto.EventAllowed, veto.EventObserved}) {
		t.Fatalf("events %v, want the first call's decision and result only", k)
	}
	if evs[2].Outcome != veto.Succeeded {
		t.Fatalf("the result recorded as %q", evs[2].Outcome)
	}
}

// FuzzParseFrame: whatever the bytes, the classifier never panics, and
// what it accepts reads the same to encoding/json (no member two readers
// could take differently), within the bounds.
func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"ada"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"isError":true}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`,
		`{"method":"a","meth\u006fd":"b","id":1}`,
		`{"id":1e2,"result":{}}`, `{"id":null,"error":{}}`, `"x"`, `[]`, `{}`, ` {"id" : -0.0 , "result" : 1 } `,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a\"b","arguments":{"x":[{"y":"\\"}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := parseFrame(b)
		if err != nil {
			return
		}
		if !json.Valid(b) || depthOver(b, MaxDepth) {
			t.Fatalf("accepted %q", b)
		}
		if fr.kind == kindBatch {
			for _, it := range fr.items {
				if !json.Valid(it) {
					t.Fatalf("a batch element %q is not JSON", it)
				}
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("accepted %q, which encoding/json reads as no object: %v", b, err)
		}
		var method string
		if raw, ok := m["method"]; ok {
			json.Unmarshal(raw, &method)
		}
		if method != fr.method {
			t.Fatalf("%q: method %q, encoding/json reads %q", b, fr.method, method)
		}
		if _, ok := m["id"]; ok != (fr.id != nil) {
			t.Fatalf("%q: id %q", b, fr.id)
		}
		if fr.kind == kindRequest && fr.method == "tools/call" {
			p, err := parseCallParams(fr.params)
			if err != nil {
				return
			}
			var q struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(fr.params, &q) != nil || q.Name != p.name {
				t.Fatalf("%q: name %q, encoding/json reads %q", b, p.name, q.Name)
			}
		}
		isErrorResult(fr.result)
	})
}

// Close leaves no record to be made after it: a result waiting for the
// next decision is recorded at once, and a call still in flight is
// answered and recorded failed. (Made after Close, on a store its owner
// had closed, a record reopened an SQLite file in a directory being
// removed.)
func TestCloseMakesEveryRecordBeforeItReturns(t *testing.T) {
	defer func(w time.Duration) { recordWindow = w }(recordWindow)
	recordWindow = time.Hour
	w := newRawWorld(t)
	w.agent.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"a"}}}`)
	w.server.recv()
	w.agent.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"who":"b"}}}`)
	w.server.recv() // in flight when the gateway closes
	w.server.send(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	w.agent.recv() // recorded by the next decision, or in an hour
	w.gw.Close()
	var observed []veto.Outcome
	for _, e := range w.events() {
		if e.Kind == veto.EventObserved {
			observed = append(observed, e.Outcome)
		}
	}
	if len(observed) != 2 || observed[0] != veto.Succeeded || observed[1] != veto.Failed {
		t.Fatalf("observed %v after Close, want the first call succeeded and the second failed", observed)
	}
}
