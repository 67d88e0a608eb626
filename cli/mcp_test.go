package cli_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
)

// veto mcp refuses what it cannot run as asked, before it starts
// anything, with the problem named.
func TestMCPUsage(t *testing.T) {
	state := filepath.Join(t.TempDir(), "veto.db")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"mcp", "--", "true"}, cli.ExitUsage, "--name is required"},
		{[]string{"mcp", "--name", "a__b", "--", "true"}, cli.ExitUsage, "--name is required"},
		{[]string{"mcp", "--name", "fs"}, cli.ExitUsage, "one of them"},
		{[]string{"mcp", "--name", "fs", "--url", "http://127.0.0.1:1/mcp", "--", "true"}, cli.ExitUsage, "one of them"},
		{[]string{"mcp", "--name", "fs", "--listen", "0.0.0.0:8080", "--", "true"}, cli.ExitUsage, "loopback"},
		{[]string{"mcp", "--name", "fs", "--actor", "nobody", "--", "true"}, cli.ExitUsage, "--actor"},
		{[]string{"mcp", "approve", "--state", state}, cli.ExitUsage, "--name is required"},
		{[]string{"mcp", "pins", "--name", "fs", "--state", state, "extra"}, cli.ExitUsage, "takes no arguments"},
		{[]string{"mcp", "approve", "--name", "fs", "--state", state}, cli.ExitUsage, "by the hash veto mcp pins --name fs --show prints"},
		{[]string{"mcp", "approve", "--name", "fs", "--state", state, "sha256:" + strings.Repeat("0", 64)}, cli.ExitDeny, "no tool of \"fs\" shows the definition"},
		{[]string{"mcp", "--name", "f\x1bs", "--", "true"}, cli.ExitUsage, "--name is required"},
		// A command that is no MCP server: the agent's initialize, relayed,
		// is never answered, and the gateway says so.
		{[]string{"mcp", "--name", "fs", "--state", state, "--", "true"}, cli.ExitDeny, "connecting to the server failed"},
	} {
		var out, errOut bytes.Buffer
		initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
		code := cli.Main(context.Background(), c.args, strings.NewReader(initialize), &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.says) {
			t.Errorf("veto %v: exit %d, want %d saying %q: %s", c.args, code, c.code, c.says, errOut.String())
		}
	}
	// The same command, ended before the agent says a word: the gateway
	// still says the server never answered, and refuses.
	pr, pw := io.Pipe()
	defer pw.Close()
	var errOut bytes.Buffer
	code := cli.Main(context.Background(), []string{"mcp", "--name", "fs", "--state", state, "--", "true"}, pr, io.Discard, &errOut)
	if code != cli.ExitDeny || !strings.Contains(errOut.String(), "connecting to the server failed") {
		t.Errorf("a server gone before the agent spoke: exit %d: %s", code, errOut.String())
	}
	if out := run(t, "mcp", "--help"); !strings.Contains(out, "veto mcp approve --name NAME") {
		t.Errorf("--help: %s", out)
	}
	if out := run(t, "mcp", "pins", "--name", "fs", "--state", state); !strings.Contains(out, "TOOL") {
		t.Errorf("pins of a server never listed: %s", out)
	}
}
