package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInitRegistersTheLeanHookWhenInstalled(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "veto")
	os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755)
	if got, want := hookCommand(self, "claude-code"), self+" hook claude-code"; got != want {
		t.Fatalf("without veto-hook: %q, want %q", got, want)
	}
	lean := filepath.Join(dir, "veto-hook")
	os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o755)
	if got, want := hookCommand(self, "claude-code"), lean+" claude-code"; got != want {
		t.Fatalf("with veto-hook: %q, want %q", got, want)
	}

	// Re-running init replaces veto's old entry rather than adding a second.
	ch, _ := hooksOf("claude-code")
	settings := map[string]any{}
	ch.add(settings, self+" hook claude-code")
	if !ch.remove(settings, "claude-code", lean+" claude-code") {
		t.Fatal("the old entry was kept")
	}
	ch.add(settings, lean+" claude-code")
	if ch.add(settings, lean+" claude-code") {
		t.Fatal("a second init changed the settings")
	}
	pre := settings["hooks"].(map[string]any)["PreToolUse"].([]any)
	if len(pre) != 1 {
		t.Fatalf("PreToolUse holds %d groups, want 1", len(pre))
	}
	// Uninstall removes either form.
	if !ch.remove(settings, "claude-code", "") || settings["hooks"] != nil {
		t.Fatalf("uninstall left %v", settings)
	}
}
