// Command mcp measures what a tools/call gains through veto mcp: the same
// calls, from the go-sdk's client, to an MCP server over stdio directly
// and through `veto mcp` (its own process, on a fresh SQLite state, with
// the default policy), and prints the latency of each at p50 and p99 and
// the difference.
//
//	go run ./bench/mcp [-n 2000] [-rounds 3] [-gap 0] [-server echo|everything] [-node DIR]
//	                   [-upstream stdio|http] [-before VETO]
//
// -upstream http serves the echo server over streamable HTTP on loopback
// instead (the direct call then goes over HTTP too, and veto mcp is given
// --url). -before names another veto binary (an older build): each round
// then measures it too, between the direct call and this build's, so that
// before and after come from one interleaved run. Over stdio each round
// also measures the floor of any gateway that runs as a process of its
// own: a relay that passes the bytes each way and judges nothing.
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
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vetohq/veto/cli"
)

const (
	asVeto     = "VETO_BENCH_MCP_AS_VETO"
	asEcho     = "VETO_BENCH_MCP_AS_ECHO"
	asEchoHTTP = "VETO_BENCH_MCP_AS_ECHO_HTTP" // the file to write the server's URL to
	asRelay    = "VETO_BENCH_MCP_AS_RELAY"
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
		if err := echoServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv(asRelay) == "1":
		os.Exit(relay(os.Args[1:]))
	case os.Getenv(asEchoHTTP) != "":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(1)
		}
		s := echoServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		if err := os.WriteFile(os.Getenv(asEchoHTTP), []byte("http://"+l.Addr().String()+"/mcp"), 0o600); err != nil {
			os.Exit(1)
		}
		http.Serve(l, h)
		os.Exit(0)
	}
	n := flag.Int("n", 2000, "calls per measurement")
	rounds := flag.Int("rounds", 3, "measurements of each, alternating")
	which := flag.String("server", "echo", "echo (this program's own Go server) or everything (npm's reference server)")
	gap := flag.Duration("gap", 0, "a pause between calls, as an agent's thinking makes (the gateway records a result after returning it)")
	node := flag.String("node", filepath.Join("mcpgate", "testdata", "node"), "where npm installed the reference servers")
	upstreamFlag := flag.String("upstream", "stdio", "how the server is reached: stdio, or http (streamable HTTP on loopback; -server echo only)")
	before := flag.String("before", "", "another veto binary to measure in the same rounds (an older build)")
	flag.Parse()
	if v := os.Getenv("VETO_BENCH_MCP_GATEWAY_ENV"); v != "" {
		extraGatewayEnv = append(extraGatewayEnv, v)
	}
	if err := run(*n, *rounds, *which, *node, *gap, *upstreamFlag, *before); err != nil {
		fmt.Fprintln(os.Stderr, "bench/mcp:", err)
		os.Exit(1)
	}
}

func echoServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
		})
	return s
}

func run(n, rounds int, which, node string, gap time.Duration, via, before string) error {
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
	var url string
	switch via {
	case "stdio":
	case "http":
		if which != "echo" {
			return fmt.Errorf("-upstream http: with -server echo only")
		}
		addr := filepath.Join(home, "addr")
		srv := exec.Command(self)
		srv.Env = append(env, asEchoHTTP+"="+addr)
		if err := srv.Start(); err != nil {
			return err
		}
		defer func() { srv.Process.Kill(); srv.Wait() }()
		for deadline := time.Now().Add(20 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("the HTTP echo server did not start")
			}
			b, _ := os.ReadFile(addr)
			url = string(b)
		}
	default:
		return fmt.Errorf("-upstream: want stdio or http")
	}
	direct := func() mcp.Transport {
		if url != "" {
			return &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
		}
		c := exec.Command(upstream[0], upstream[1:]...)
		c.Env, c.Dir = env, home
		return &mcp.CommandTransport{Command: c}
	}
	gateway := func(veto string, state string) mcp.Transport {
		args := []string{"mcp", "--name", "bench", "--state", filepath.Join(home, state)}
		if url != "" {
			args = append(args, "--url", url)
		} else {
			args = append(append(args, "--"), upstream...)
		}
		c := exec.Command(self, args...)
		c.Env = append(append(env, asVeto+"=1"), extraGatewayEnv...)
		if veto != "" {
			c = exec.Command(veto, args...)
			c.Env = append(env, extraGatewayEnv...)
		}
		c.Dir = home
		c.Stderr = os.Stderr
		return &mcp.CommandTransport{Command: c}
	}
	fmt.Printf("%d calls of echo per measurement, %s server over %s, %v between calls\n", n, which, via, gap)
	// The relay floor (stdio only): a process between the client and the
	// server that passes the bytes each way, judging nothing.
	relayed := func() mcp.Transport {
		c := exec.Command(self, upstream...)
		c.Env, c.Dir = append(env, asRelay+"=1"), home
		c.Stderr = os.Stderr
		return &mcp.CommandTransport{Command: c}
	}
	var d50, b50, g50, r50 []time.Duration
	for r := 0; r < rounds; r++ {
		d, err := measure(direct(), n, gap)
		if err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		if url == "" {
			rl, err := measure(relayed(), n, gap)
			if err != nil {
				return fmt.Errorf("through the relay: %w", err)
			}
			fmt.Printf("round %d: through a relay (the floor of a gateway in a process of its own) p50 %v, gained p50 %v\n", r+1, pct(rl, 50), pct(rl, 50)-pct(d, 50))
			r50 = append(r50, pct(rl, 50)-pct(d, 50))
		}
		var b []time.Duration
		if before != "" {
			if b, err = measure(gateway(before, "before.db"), n, gap); err != nil {
				return fmt.Errorf("through the -before veto mcp: %w", err)
			}
		}
		g, err := measure(gateway("", "veto.db"), n, gap)
		if err != nil {
			return fmt.Errorf("through veto mcp: %w", err)
		}
		if before != "" {
			fmt.Printf("round %d: direct p50 %v p99 %v | before p50 %v p99 %v, gained p50 %v | through veto mcp p50 %v p99 %v | gained p50 %v\n", r+1,
				pct(d, 50), pct(d, 99), pct(b, 50), pct(b, 99), pct(b, 50)-pct(d, 50), pct(g, 50), pct(g, 99), pct(g, 50)-pct(d, 50))
			b50 = append(b50, pct(b, 50))
		} else {
			fmt.Printf("round %d: direct p50 %v p99 %v | through veto mcp p50 %v p99 %v | gained p50 %v\n", r+1,
				pct(d, 50), pct(d, 99), pct(g, 50), pct(g, 99), pct(g, 50)-pct(d, 50))
		}
		d50, g50 = append(d50, pct(d, 50)), append(g50, pct(g, 50))
	}
	slices.Sort(d50)
	slices.Sort(g50)
	if before != "" {
		slices.Sort(b50)
		fmt.Printf("median of rounds: direct p50 %v, before p50 %v (gains %v), through veto mcp p50 %v: a call gains %v at p50\n",
			d50[len(d50)/2], b50[len(b50)/2], b50[len(b50)/2]-d50[len(d50)/2], g50[len(g50)/2], g50[len(g50)/2]-d50[len(d50)/2])
		return nil
	}
	fmt.Printf("median of rounds: direct p50 %v, through veto mcp p50 %v: a call gains %v at p50\n",
		d50[len(d50)/2], g50[len(g50)/2], g50[len(g50)/2]-d50[len(d50)/2])
	if len(r50) > 0 {
		slices.Sort(r50)
		fmt.Printf("median of rounds: a call through the relay gains %v at p50\n", r50[len(r50)/2])
	}
	return nil
}

// relay runs argv as a child and passes bytes between it and this
// process's stdin and stdout, each way as they come: the least a gateway
// of its own process adds to a call over stdio.
func relay(argv []string) int {
	if len(argv) == 0 {
		return 64
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := c.Start(); err != nil {
		return 1
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	if c.Wait() != nil {
		return 1
	}
	return 0
}

// measure connects to the server t reaches and times n calls of echo,
// after a warm-up.
func measure(t mcp.Transport, n int, gap time.Duration) ([]time.Duration, error) {
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s, err := client.Connect(ctx, t, nil)
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
