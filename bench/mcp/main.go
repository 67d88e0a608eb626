// Command mcp measures what a tools/call gains through veto mcp: the same
// calls, from the go-sdk's client, to an MCP server over stdio directly
// and through `veto mcp` (its own process, on a fresh SQLite state, with
// the default policy), and prints the latency of each at p50 and p99 and
// the difference.
//
//	go run ./bench/mcp [-n 2000] [-rounds 3] [-gap 0] [-server echo|everything] [-node DIR]
//
// The server is a Go echo server of this program's own (-server echo), or
// the reference everything server from npm (-server everything: its echo
// tool; -node is the directory npm installed it in, by default
// mcpgate/testdata/node). The program runs itself as veto and as the echo
// server, so nothing but the module is needed; every process gets a
// throw-away HOME.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto/cli"
)

const (
	asVeto = "VETO_BENCH_MCP_AS_VETO"
	asEcho = "VETO_BENCH_MCP_AS_ECHO"
)

// extraGatewayEnv is added to veto mcp's environment ($VETO_BENCH_MCP_GATEWAY_ENV, one
// NAME=VALUE), to try a setting.
var extraGatewayEnv []string

type echoArgs struct {
	Message string `json:"message" jsonschema:"what to echo"`
}

func main() {
	switch {
	case os.Getenv(asVeto) == "1":
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	case os.Getenv(asEcho) == "1":
		s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the message."},
			func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	n := flag.Int("n", 2000, "calls per measurement")
	rounds := flag.Int("rounds", 3, "measurements of each, alternating")
	which := flag.String("server", "echo", "echo (this program's own Go server) or everything (npm's reference server)")
	gap := flag.Duration("gap", 0, "a pause between calls, as an agent's thinking makes (the gateway records a result after returning it)")
	node := flag.String("node", filepath.Join("mcpgate", "testdata", "node"), "where npm installed the reference servers")
	flag.Parse()
	if v := os.Getenv("VETO_BENCH_MCP_GATEWAY_ENV"); v != "" {
		extraGatewayEnv = append(extraGatewayEnv, v)
	}
	if err := run(*n, *rounds, *which, *node, *gap); err != nil {
		fmt.Fprintln(os.Stderr, "bench/mcp:", err)
		os.Exit(1)
	}
}

func run(n, rounds int, which, node string, gap time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "veto-bench-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".state"), "VETO_MANAGED_POLICY=" + filepath.Join(home, "none.yaml")}
	upstream := []string{"env", asVeto + "=", asEcho + "=1", self}
	if which == "everything" {
		abs, err := filepath.Abs(filepath.Join(node, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
		if err != nil {
			return err
		}
		upstream = []string{"node", abs}
	} else if which != "echo" {
		return fmt.Errorf("-server: want echo or everything")
	}
	direct := func() *exec.Cmd {
		c := exec.Command(upstream[0], upstream[1:]...)
		c.Env, c.Dir = env, home
		return c
	}
	gateway := func() *exec.Cmd {
		args := append([]string{"mcp", "--name", "bench", "--state", filepath.Join(home, "veto.db"), "--"}, upstream...)
		c := exec.Command(self, args...)
		c.Env, c.Dir = append(append(env, asVeto+"=1"), extraGatewayEnv...), home
		c.Stderr = os.Stderr
		return c
	}
	fmt.Printf("%d calls of echo per measurement, %s server over stdio, %v between calls\n", n, which, gap)
	var d50, g50 []time.Duration
	for r := 0; r < rounds; r++ {
		d, err := measure(direct(), n, gap)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		g, err := measure(gateway(), n, gap)
		if err != nil {
			return fmt.Errorf("through veto mcp: %w", err)
		}
		fmt.Printf("round %d: direct p50 %v p99 %v | through veto mcp p50 %v p99 %v | gained p50 %v\n", r+1,
			pct(d, 50), pct(d, 99), pct(g, 50), pct(g, 99), pct(g, 50)-pct(d, 50))
		d50, g50 = append(d50, pct(d, 50)), append(g50, pct(g, 50))
	}
	slices.Sort(d50)
	slices.Sort(g50)
	fmt.Printf("median of rounds: direct p50 %v, through veto mcp p50 %v: a call gains %v at p50\n",
		d50[len(d50)/2], g50[len(g50)/2], g50[len(g50)/2]-d50[len(d50)/2])
	return nil
}

// measure connects to the server cmd starts and times n calls of echo,
// after a warm-up.
func measure(cmd *exec.Cmd, n int, gap time.Duration) ([]time.Duration, error) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}}
	for i := 0; i < 50; i++ {
		if _, err := s.CallTool(ctx, params); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		if gap > 0 {
			time.Sleep(gap)
		}
		start := time.Now()
		res, err := s.CallTool(ctx, params)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("the call was refused or failed")
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out, nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := len(sorted) * p / 100
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i].Round(time.Microsecond)
}
