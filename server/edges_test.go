package server_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServerKnowsNoHTMLNorClients: the service is the JSON API alone. It
// links no html/template (the page is package page), no hook program and
// no MCP gateway (cli hands it the client adapters and mounts the page),
// and not the page itself; go list -deps, so that nothing it imports
// brings them in either.
func TestServerKnowsNoHTMLNorClients(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/vetohq/veto/server").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list gave %d packages: %v", len(deps), deps)
	}
	forbidden := []string{"html/template", "github.com/vetohq/veto/hook", "github.com/vetohq/veto/mcpgate", "github.com/vetohq/veto/page"}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("server links %s", d)
			}
		}
	}
}
