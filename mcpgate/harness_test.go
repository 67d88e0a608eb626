package mcpgate

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/postgres"
	"github.com/vetohq/veto/postgres/pgtest"
	"github.com/vetohq/veto/sqlite"
	"github.com/vetohq/veto/sqlstore"
)

// canary is in every secret a test plants: it must never come back.
const canary = "CANARY-7f3a9c1e-do-not-leak"

// harness is one gateway on a real SQLite state in a temporary home and
// workspace, and an agent's client session with it.
type harness struct {
	t        testing.TB
	home, ws string
	file     *sqlite.File // nil on PostgreSQL
	pg       *sqlstore.Store
	pins     *Pins
	gw       *Gateway
	agent    *mcp.ClientSession
	run      string
	stderr   *strings.Builder
	bo       policy.BuildOptions // what the gate is built with
}

type harnessOpts struct {
	policyYAML string
	actor      veto.Actor
	postgres   bool // a fresh PostgreSQL schema instead of an SQLite file
	// together, when set, stands in for the state's Config.Together, given
	// the state's own.
	together func(ctx context.Context, f func(context.Context), state func(context.Context, func(context.Context)) error) error
}

func newHarness(t testing.TB, name string, upstream mcp.Transport, o harnessOpts) *harness {
	t.Helper()
	h := newGatewayOnly(t, name, SDKTransport(upstream), o)
	ctx, cancel := context.WithCancel(context.Background())
	agentSide, gwSide := mcp.NewInMemoryTransports()
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.gw.Serve(ctx, SDKTransport(gwSide))
	}()
	// The gateway is done writing the state before the state is closed and
	// its directory removed (a record still being written left a file in
	// it, under the race detector).
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	var err error
	h.agent, err = client.Connect(ctx, agentSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.agent.Close() })
	return h
}

// newGatewayOnly is a harness's gateway in front of upstream, not yet
// serving an agent.
func newGatewayOnly(t testing.TB, name string, upstream Transport, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir(), ws: t.TempDir(), run: "mcp-test-" + strings.ReplaceAll(t.Name(), "/", "-")}
	if err := os.MkdirAll(filepath.Join(h.ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var store veto.Store
	var acquire func(context.Context) (func(), error)
	var together func(context.Context, func(context.Context)) error
	if o.postgres {
		pg, err := postgres.Open(ctx, pgtest.Fresh(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		h.pg, store = pg, pg
		if h.pins, err = OpenPins(ctx, pg.DB, sqlstore.Markers("postgres")); err != nil {
			t.Fatal(err)
		}
	} else {
		h.file = sqlite.OpenFile(filepath.Join(t.TempDir(), "veto.db"), sqlite.Options{Verify: true, BusyTimeout: time.Second})
		t.Cleanup(func() { h.file.Close() })
		store, acquire, together = h.file, h.file.Acquire, h.file.Together
		release, err := h.file.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h.pins, err = OpenPins(ctx, func() *sql.DB { return h.file.Store().DB() }, sqlstore.Markers("sqlite"))
		release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if inner := together; o.together != nil && inner != nil {
		together = func(ctx context.Context, f func(context.Context)) error { return o.together(ctx, f, inner) }
	}
	lo := policy.LoadOptions{}
	if o.policyYAML != "" {
		lo.FlagPath = filepath.Join(t.TempDir(), "veto.yaml")
		if err := os.WriteFile(lo.FlagPath, []byte(o.policyYAML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := policy.Load(lo)
	if err != nil {
		t.Fatal(err)
	}
	if o.actor == (veto.Actor{}) {
		o.actor = veto.Actor{Kind: "agent", ID: "test"}
	}
	h.bo = policy.BuildOptions{Store: store, Home: h.home, TempDirs: []string{}, Vars: map[string]string{"HOME": h.home}}
	h.gw, err = New(ctx, Config{
		Name: name, Upstream: upstream, Pins: h.pins, Acquire: acquire, Together: together, Run: h.run,
		Build: PolicyBuild(p, h.bo),
		Actor: o.actor, Cwd: h.ws, Workspace: h.ws, Poll: 50 * time.Millisecond, Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.gw.Close() })
	return h
}

// call calls a tool through the gateway; it returns the result's text.
func (h *harness) call(tool string, args any) (string, bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.agent.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		h.t.Fatalf("calling %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// denied calls a tool and wants it refused by veto with the reason.
func (h *harness) denied(tool string, args map[string]any, reason string) string {
	h.t.Helper()
	text, isErr := h.call(tool, args)
	if !isErr || !strings.HasPrefix(text, "veto blocked") || !strings.Contains(text, reason) {
		h.t.Fatalf("%s: want veto's refusal (%s), got isError=%v %q", tool, reason, isErr, text)
	}
	if strings.Contains(text, canary) {
		h.t.Fatalf("%s: the refusal leaks the canary: %q", tool, text)
	}
	return text
}

// listed returns the names of the tools the agent is shown.
func (h *harness) listed() map[string]bool {
	h.t.Helper()
	out := map[string]bool{}
	for tool, err := range h.agent.Tools(context.Background(), nil) {
		if err != nil {
			h.t.Fatal(err)
		}
		out[tool.Name] = true
	}
	return out
}

// eventually waits for cond, failing after a while.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	h.t.Fatalf("timed out waiting for %s", what)
}

// events returns the run's events, as the log stores them, and fails if
// any stored byte holds the canary.
func (h *harness) events() []veto.Event {
	h.t.Helper()
	// The last call's record is made after its result went back.
	ctx := context.Background()
	if err := h.gw.waitRecords(ctx); err != nil {
		h.t.Fatal(err)
	}
	release, err := h.acquire(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	defer release()
	var out []veto.Event
	err = h.store().Scan(ctx, veto.LogQuery{Run: h.run}, func(_ string, _ uint64, stored []byte) error {
		if strings.Contains(string(stored), canary) {
			h.t.Errorf("a stored event holds the canary")
		}
		e, err := eventlog.DecodeEvent(stored)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// decision is the decision event of the n-th call of tool (0-based).
func decisionOf(evs []veto.Event, tool string) []veto.Event {
	var out []veto.Event
	for _, e := range evs {
		if e.Tool == tool && (e.Kind == veto.EventAllowed || e.Kind == veto.EventDenied || e.Kind == veto.EventToolDenied) {
			out = append(out, e)
		}
	}
	return out
}

// acquire proves the state sound (an SQLite file) for a use of the test's.
func (h *harness) acquire(ctx context.Context) (func(), error) {
	if h.file == nil {
		return func() {}, nil
	}
	return h.file.Acquire(ctx)
}

// store is the state's store, acquired.
func (h *harness) store() *sqlstore.Store {
	if h.file == nil {
		return h.pg
	}
	return h.file.Store()
}

// testLogger logs the gateway's lines to the test's log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
