package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	vt "github.com/vetohq/veto"
	"github.com/vetohq/veto/cli"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/sqlite"
)

// TestCheckGoesThroughTheOneDecision is veto check's part of E22 (the
// root's TestEveryEntryPointUsesTheOneDecision holds the library's and the
// resumes', and links nothing above the root): a call past a bound is
// refused by veto check at the bounds stage, exactly as the library's
// Decide refuses it, and the refusal is recorded as every decision is.
func TestCheckGoesThroughTheOneDecision(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("VETO_MANAGED_POLICY", filepath.Join(t.TempDir(), "none.yaml"))
	deep := map[string]any{}
	for range 40 {
		deep = map[string]any{"n": deep}
	}
	g, err := vt.NewGate(vt.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	byLib := g.Decide(context.Background(), &vt.Call{ID: "deep-lib", Tool: "Read", Args: deep})

	state := filepath.Join(t.TempDir(), "veto.db")
	callJSON, _ := json.Marshal(map[string]any{"call_id": "deep-cli", "tool": "Read", "args": deep, "run": map[string]any{"ref": "e22", "fresh": true}})
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), []string{"check", "--state", state}, bytes.NewReader(callJSON), &out, &errOut)
	var byCLI struct{ Verdict, Stage, Reason string }
	if err := json.Unmarshal(out.Bytes(), &byCLI); err != nil {
		t.Fatalf("cli output %q: %v (stderr %q)", out.String(), err, errOut.String())
	}
	if byCLI.Stage != string(byLib.Stage) || byCLI.Reason != byLib.Reason || byLib.Reason != vt.ReasonBoundsExceeded {
		t.Errorf("veto check: stage %s reason %s; the library: stage %s reason %s; want bounds bounds_exceeded",
			byCLI.Stage, byCLI.Reason, byLib.Stage, byLib.Reason)
	}
	if code != cli.ExitDeny || byCLI.Verdict != "deny" {
		t.Errorf("cli exit %d verdict %s, want 1 deny", code, byCLI.Verdict)
	}

	s, err := sqlite.Open(context.Background(), state, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(context.Background(), "e22", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Kind != vt.EventDenied || last.CallID != "deep-cli" || last.Stage != vt.StageBounds || last.Reason != vt.ReasonBoundsExceeded {
		t.Fatalf("veto check recorded %+v, want its bounds refusal", evs)
	}
}
