package hook_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The hook program runs on every tool call: package initialisation of
// everything it links is paid each time. These must never be linked into
// it (each costs milliseconds per process; measured in docs/performance.md).
var heavy = []string{
	"cel.dev/cel-go", "github.com/google/cel-go", "google.golang.org/protobuf",
	"github.com/jackc/pgx", "github.com/mark3labs/mcp-go", "github.com/santhosh-tekuri/jsonschema",
	"github.com/modelcontextprotocol/go-sdk", "github.com/prometheus/",
	"github.com/vetohq/veto/policy/celrule", "github.com/vetohq/veto/postgres", "github.com/vetohq/veto/cli",
}

func TestHookBinaryIsLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/vetohq/veto/cmd/veto-hook").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages", len(deps))
	}
	for _, d := range deps {
		for _, h := range heavy {
			if strings.HasPrefix(d, h) {
				t.Errorf("veto-hook links %s", d)
			}
		}
	}
}
