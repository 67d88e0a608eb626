package hook_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
)

// veto-hook runs on every tool call: package initialisation of everything
// it links is paid each time (cel-go and protobuf alone cost ~3 ms, SQLite
// ~1 ms; docs/performance.md). It links the standard library and its own
// two packages and the client table (package clients, itself standard
// library only), nothing else; the work is the server's.
func TestHookBinaryIsLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/vetohq/veto/cmd/veto-hook").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/vetohq/veto/clients", "github.com/vetohq/veto/hook/wire", "github.com/vetohq/veto/cmd/veto-hook"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("veto-hook links %v, want only %v and the standard library", got, want)
	}
}

// When veto cannot run, veto-hook blocks the call itself: its denial must
// be the one each client's adapter gives.
func TestWireDenyIsTheAdaptersDeny(t *testing.T) {
	reasons := []string{"blocked.", `a "quoted" <reason> & more`, strings.Repeat("é", 3000)}
	for _, c := range hook.Clients {
		for _, r := range reasons {
			want := hook.AdapterFor(c).Deny(r)
			code, stdout, stderr := wire.Deny(c, r)
			if code != want.Exit || stdout != want.Stdout || stderr != want.Stderr {
				t.Errorf("%s: wire.Deny = %d %q %q, adapter %d %q %q", c, code, stdout, stderr, want.Exit, want.Stdout, want.Stderr)
			}
		}
	}
}

func TestWireLimitsAreTheAgents(t *testing.T) {
	if wire.MaxEvent != agent.MaxEvent {
		t.Fatalf("wire.MaxEvent %d, agent.MaxEvent %d", wire.MaxEvent, agent.MaxEvent)
	}
	long := strings.Repeat("x", agent.MaxReason+10)
	if _, _, e := wire.Deny("claude-code", long); e != agent.Clip(long)+"\n" {
		t.Fatal("wire clips reasons unlike agent.Clip")
	}
}
