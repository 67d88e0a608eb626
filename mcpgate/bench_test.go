package mcpgate

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto"
)

// BenchmarkDirect is a call of the in-process notes server without the
// gateway; BenchmarkGateway the same call through it, on a real SQLite
// state: the difference is what the gateway adds in process (the
// decision, its record, the pin, the observation and one more hop).
func BenchmarkDirect(b *testing.B) {
	n := newNotes()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := n.server.Connect(ctx, serverSide, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"who": "ada"}}
	b.ResetTimer()
	for b.Loop() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}

func BenchmarkGateway(b *testing.B) {
	n := newNotes()
	h := newHarness(b, "notes", n.transport(b), harnessOpts{})
	params := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"who": "ada"}}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if res, err := h.agent.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkGatewayDecide is the gateway's own part of a call: the
// decision with its record on SQLite, then the observation's record.
func BenchmarkGatewayDecide(b *testing.B) {
	benchDecisions(b, func(h *harness, c *veto.Call) {
		h.gw.decideMu.Lock()
		h.gw.observe(context.Background(), c, veto.Succeeded)
		h.gw.decideMu.Unlock()
	})
}

// benchDecisions decides an allowed call of the notes server at each
// turn of b, then hands the call to after.
func benchDecisions(b *testing.B, after func(h *harness, c *veto.Call)) *harness {
	n := newNotes()
	h := newHarness(b, "notes", n.transport(b), harnessOpts{})
	ctx := context.Background()
	// The tool is offerable once the server's first listing pinned it.
	if _, err := h.agent.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		c, _ := h.gw.callOf("greet", []byte(`{"who":"ada"}`))
		if v := h.gw.decide(ctx, c); !v.Allowed {
			b.Fatal(v)
		}
		after(h, c)
	}
	b.StopTimer()
	return h
}

// BenchmarkGatewayDecideAfterResult is BenchmarkGatewayDecide as an agent
// calling again at once makes it: each call's result is asked to be
// recorded, and the next decision takes that record into its own commit.
func BenchmarkGatewayDecideAfterResult(b *testing.B) {
	h := benchDecisions(b, func(h *harness, c *veto.Call) { h.gw.enqueue(c, veto.Succeeded) })
	if err := h.gw.waitRecords(context.Background()); err != nil {
		b.Fatal(err)
	}
}
