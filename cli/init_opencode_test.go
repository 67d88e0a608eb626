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
	ocplugin "github.com/vetohq/veto/integrations/opencode"
	"github.com/vetohq/veto/server"
)

// TestInitOpenCode: veto init opencode writes veto's plugin into the
// project's .opencode/plugins (--user: ~/.config/opencode/plugins),
// configured with this veto's hook; a second init changes nothing;
// uninstall removes only veto's file, and init refuses to replace another.
func TestInitOpenCode(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	path := filepath.Join(dir, ".opencode", "plugins", "veto.ts")
	out := run(t, "init", "opencode", "--dir", dir)
	if !strings.Contains(out, "tool.execute.before") {
		t.Fatalf("init says %q", out)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := ocplugin.ConfigOf(first)
	if !ok || len(cfg.Hook) < 2 || !filepath.IsAbs(cfg.Hook[0]) || cfg.TimeoutMs != 5000 || cfg.URL != "" {
		t.Fatalf("the plugin's configuration: %+v (%v)", cfg, ok)
	}
	if !slices.Equal(cfg.Hook[1:], []string{"hook", "opencode"}) && !slices.Equal(cfg.Hook[1:], []string{"opencode"}) {
		t.Fatalf("the hook %v is not veto hook opencode nor veto-hook opencode", cfg.Hook)
	}
	if !bytes.Contains(first, []byte(`"tool.execute.before": async`)) {
		t.Fatal("the file is not the plugin")
	}
	run(t, "init", "opencode", "--dir", dir)
	if second, _ := os.ReadFile(path); !bytes.Equal(first, second) {
		t.Fatal("a second init changed the file")
	}
	// Another plugin beside it is never touched.
	other := filepath.Join(dir, ".opencode", "plugins", "mine.ts")
	mine := "export default async function () { return {} }\n"
	os.WriteFile(other, []byte(mine), 0o644)
	run(t, "uninstall", "opencode", "--dir", dir)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("uninstall left veto's plugin")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("uninstall removed another plugin")
	}
	// A file of that name that is not veto's: init refuses, uninstall leaves it.
	os.WriteFile(path, []byte(mine), 0o644)
	var o, errOut bytes.Buffer
	if code := cli.Main(context.Background(), []string{"init", "opencode", "--dir", dir}, strings.NewReader(""), &o, &errOut); code == 0 ||
		!strings.Contains(errOut.String(), "not veto's plugin") {
		t.Fatalf("init over another file: exit %d: %s", code, errOut.String())
	}
	run(t, "uninstall", "opencode", "--dir", dir)
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Fatalf("another file was changed: %s", b)
	}
	// --user: OpenCode's global plugin directory.
	run(t, "init", "opencode", "--user")
	user := filepath.Join(home, ".config", "opencode", "plugins", "veto.ts")
	if b, err := os.ReadFile(user); err != nil || !ocplugin.IsVeto(b) {
		t.Fatalf("%s: %v", user, err)
	}
	run(t, "uninstall", "opencode", "--user")
	if _, err := os.Stat(user); err == nil {
		t.Fatal("uninstall --user left the plugin")
	}
}

// TestInitOpenCodeURL: with --url the plugin asks veto serve, with an
// agent's token read from a file (0600) that init made; neither the token
// nor a variable holding it is in the plugin.
func TestInitOpenCodeURL(t *testing.T) {
	config, state := isolate(t)
	dir := t.TempDir()
	run(t, "init", "opencode", "--dir", dir, "--url", "http://127.0.0.1:8181/")
	b, err := os.ReadFile(filepath.Join(dir, ".opencode", "plugins", "veto.ts"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(config, "veto", "tokens", "opencode.token")
	cfg, _ := ocplugin.ConfigOf(b)
	if cfg.URL != "http://127.0.0.1:8181" || cfg.TokenFile != file || len(cfg.Hook) != 0 {
		t.Fatalf("the configuration: %+v", cfg)
	}
	tok := tokenIn(t, state, file)
	if tok.Role != server.RoleAgent || tok.Actor.Kind != "agent" || tok.Actor.ID != "opencode" {
		t.Fatalf("the hook's token: %+v", tok)
	}
	secret, _ := os.ReadFile(file)
	if bytes.Contains(b, bytes.TrimSpace(secret)) {
		t.Fatal("the plugin holds the token")
	}
}
