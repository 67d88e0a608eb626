package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vetohq/veto/cli"
	piext "github.com/vetohq/veto/integrations/pi"
	"github.com/vetohq/veto/server"
)

// TestInitPi: veto init pi writes veto's extension into the project's
// .pi/extensions (--user: ~/.pi/agent/extensions), configured with this
// veto's hook; a second init changes nothing; uninstall removes only
// veto's file, and init refuses to replace another.
func TestInitPi(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	path := filepath.Join(dir, ".pi", "extensions", "veto.ts")
	run(t, "init", "pi", "--dir", dir)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := piext.ConfigOf(first)
	if !ok || len(cfg.Hook) < 2 || !filepath.IsAbs(cfg.Hook[0]) || cfg.Hook[len(cfg.Hook)-1] != "pi" || cfg.TimeoutMs != 5000 || cfg.URL != "" {
		t.Fatalf("the extension's configuration: %+v (%v)", cfg, ok)
	}
	if !slices.Equal(cfg.Hook[1:], []string{"hook", "pi"}) && !slices.Equal(cfg.Hook[1:], []string{"pi"}) {
		t.Fatalf("the hook %v is not veto hook pi nor veto-hook pi", cfg.Hook)
	}
	if !bytes.Contains(first, []byte(`pi.on("tool_call"`)) {
		t.Fatal("the file is not the extension")
	}
	run(t, "init", "pi", "--dir", dir)
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Fatal("a second init changed the file")
	}
	// Another extension beside it is never touched.
	other := filepath.Join(dir, ".pi", "extensions", "mine.ts")
	os.WriteFile(other, []byte("export default function (pi) {}\n"), 0o644)
	run(t, "uninstall", "pi", "--dir", dir)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("uninstall left veto's extension")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("uninstall removed another extension")
	}
	// A file of that name that is not veto's: init refuses, uninstall leaves it.
	os.WriteFile(path, []byte("export default function (pi) {}\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := cli.Main(context.Background(), []string{"init", "pi", "--dir", dir}, strings.NewReader(""), &out, &errOut); code == 0 ||
		!strings.Contains(errOut.String(), "not veto's extension") {
		t.Fatalf("init over another file: exit %d: %s", code, errOut.String())
	}
	run(t, "uninstall", "pi", "--dir", dir)
	if b, _ := os.ReadFile(path); string(b) != "export default function (pi) {}\n" {
		t.Fatalf("another file was changed: %s", b)
	}
	// --user: pi's user extension directory.
	run(t, "init", "pi", "--user")
	user := filepath.Join(home, ".pi", "agent", "extensions", "veto.ts")
	if b, err := os.ReadFile(user); err != nil || !piext.IsVeto(b) {
		t.Fatalf("%s: %v", user, err)
	}
	run(t, "uninstall", "pi", "--user")
	if _, err := os.Stat(user); err == nil {
		t.Fatal("uninstall --user left the extension")
	}
}

// TestInitPiURL: with --url the extension asks veto serve, with an
// agent's token read from a file (0600) that init made; neither the
// token nor a variable holding it is in the extension.
func TestInitPiURL(t *testing.T) {
	config, state := isolate(t)
	dir := t.TempDir()
	run(t, "init", "pi", "--dir", dir, "--url", "http://127.0.0.1:8181/")
	b, err := os.ReadFile(filepath.Join(dir, ".pi", "extensions", "veto.ts"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(config, "veto", "tokens", "pi.token")
	cfg, _ := piext.ConfigOf(b)
	if cfg.URL != "http://127.0.0.1:8181" || cfg.TokenFile != file || len(cfg.Hook) != 0 {
		t.Fatalf("the configuration: %+v", cfg)
	}
	tok := tokenIn(t, state, file)
	if tok.Role != server.RoleAgent || tok.Actor.Kind != "agent" || tok.Actor.ID != "pi" {
		t.Fatalf("the hook's token: %+v", tok)
	}
	secret, _ := os.ReadFile(file)
	if bytes.Contains(b, bytes.TrimSpace(secret)) {
		t.Fatal("the extension holds the token")
	}
}
