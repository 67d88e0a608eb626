package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	piext "github.com/vetohq/veto/integrations/pi"
)

// extensionOpts are init's flags for a client whose registration is an
// extension file (pi's extension, OpenCode's plugin).
type extensionOpts struct {
	url, actor, tokenFile, state, pg string
	dry, http                        bool
}

// piTimeoutMs is the limit init writes into pi's extension and OpenCode's
// plugin: every answer within it, veto-hook given half.
const piTimeoutMs = 5000

// initExtension writes veto's extension for client at path (init), or
// removes it when the file there is veto's (uninstall). Another file at
// path is left as it is, and init refuses to replace it.
func initExtension(e *env, verb, client, path string, o extensionOpts) int {
	if o.http {
		fmt.Fprintf(e.stderr, "veto %s %s: this client has no HTTP hooks; drop --http\n", verb, client)
		return ExitUsage
	}
	if o.url != "" && verb != "init" {
		fmt.Fprintf(e.stderr, "veto %s %s: --url is init's\n", verb, client)
		return ExitUsage
	}
	if o.url == "" && (o.actor != "" || o.tokenFile != "") {
		fmt.Fprintf(e.stderr, "veto %s %s: --actor and --token-file go with init --url\n", verb, client)
		return ExitUsage
	}
	kind := extensionOf(client)
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "veto %s: %s: %v\n", verb, path, err)
		return ExitDeny
	}
	if exists && !kind.isVeto(old) {
		if verb == "init" {
			fmt.Fprintf(e.stderr, "veto init: %s is not veto's %s; move it first\n", path, kind.what)
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "%s: not veto's %s; nothing changed\n", path, kind.what)
		return ExitAllow
	}
	if verb != "init" {
		if !exists {
			fmt.Fprintf(e.stdout, "%s: no veto %s; nothing changed\n", path, kind.what)
			return ExitAllow
		}
		if o.dry {
			fmt.Fprintf(e.stdout, "# %s would be removed (dry run; nothing written)\n", path)
			return ExitAllow
		}
		if err := os.Remove(path); err != nil {
			fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
			return ExitDeny
		}
		fmt.Fprintf(e.stdout, "%s: veto's %s removed\n", path, kind.what)
		return ExitAllow
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: cannot find this veto binary: %v\n", verb, err)
		return ExitDeny
	}
	cfg := piext.Config{Hook: hookArgv(self, client), TimeoutMs: piTimeoutMs}
	var note string
	if o.url != "" {
		file, n, err := setUpHookToken(context.Background(), hookTokenOpts{client: client, actor: o.actor,
			file: o.tokenFile, state: o.state, pg: o.pg, dry: o.dry})
		if err != nil {
			fmt.Fprintf(e.stderr, "veto %s %s --url: %v\n", verb, client, err)
			return ExitDeny
		}
		cfg = piext.Config{URL: strings.TrimRight(o.url, "/"), TokenFile: file, TimeoutMs: piTimeoutMs}
		note = n
	}
	out, err := kind.installed(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	if o.dry {
		fmt.Fprintf(e.stdout, "# %s (dry run; nothing written)\n%s", path, out)
		return ExitAllow
	}
	if exists && bytes.Equal(old, out) {
		fmt.Fprintf(e.stdout, "%s: already as it should be; nothing changed\n", path)
		if note != "" {
			fmt.Fprintln(e.stdout, note)
		}
		return ExitAllow
	}
	if err := writeSettings(path, out); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	how := strings.Join(cfg.Hook, " ")
	if cfg.URL != "" {
		how = "veto serve at " + cfg.URL
	}
	if kind.done != nil {
		fmt.Fprintln(e.stdout, kind.done(path, how))
	} else {
		fmt.Fprintf(e.stdout, "%s: veto now answers %s (%s)\n", path, kind.answers, how)
	}
	if note != "" {
		fmt.Fprintln(e.stdout, note)
	}
	return ExitAllow
}

// hookArgv is hookCommand as an argument vector: veto-hook CLIENT beside
// this veto, else veto hook CLIENT.
func hookArgv(self, client string) []string {
	lean := filepath.Join(filepath.Dir(self), "veto-hook")
	if fi, err := os.Stat(lean); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return []string{lean, client}
	}
	return []string{self, "hook", client}
}
