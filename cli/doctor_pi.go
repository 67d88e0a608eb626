package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto/clients"
)

// extension checks a client's extension file (pi's .pi/extensions/veto.ts,
// OpenCode's .opencode/plugins/veto.ts)
// as veto init wrote it: that it is veto's, that the hook it names is a
// program veto init writes and answers the probe in the blocking form
// within the extension's limit; 1 when veto's extension is there.
func (d *doctor) extension(ctx context.Context, c *clients.Client, path, dir string) int {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		d.problem("fix its permissions, or move it aside and run veto init "+c.Name, "%s: %v", path, err)
		return 0
	}
	kind := extensionOf(c.Name)
	cfg, ok := kind.configOf(b)
	if !ok {
		if kind.isVeto(b) || bytes.Contains(b, []byte("veto-hook")) {
			d.problem("veto init "+c.Name+" (move the file aside first)", "%s: veto's %s, with a configuration line veto cannot read", path, kind.what)
		}
		return 0
	}
	limit := time.Duration(cfg.TimeoutMs) * time.Millisecond
	if limit <= 0 {
		limit = piTimeoutMs * time.Millisecond
	}
	if cfg.URL != "" {
		fi, err := os.Stat(cfg.TokenFile)
		switch {
		case cfg.TokenFile == "" || err != nil:
			d.problem("veto init "+c.Name+" --url "+cfg.URL, "%s: the hook's token file %q cannot be read: every call is blocked", path, cfg.TokenFile)
		case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0:
			d.problem("chmod 600 "+cfg.TokenFile, "%s: the token file is not a regular file only its owner may read: every call is blocked", path)
		default:
			d.ok("%s: %s asks veto serve at %s (not probed: the service decides)", path, c.Display, cfg.URL)
		}
		return 1
	}
	argv := cfg.Hook
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) || !(slices.Equal(argv[1:], []string{c.Name}) || slices.Equal(argv[1:], []string{"hook", c.Name})) {
		d.problem("veto init "+c.Name+" (it rewrites the "+kind.what+")", "%s: the hook is not one veto init writes (want PROGRAM hook %s or veto-hook %s)", path, c.Name, c.Name)
		return 1
	}
	fi, err := os.Stat(argv[0])
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.problem("install veto there again, or run veto init "+c.Name+" from the veto you use",
			"%s: the registered program %s does not exist: the %s blocks every call", path, argv[0], kind.what)
		return 1
	case err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
		d.problem("chmod +x it, or run veto init "+c.Name+" again", "%s: the registered program %s is not an executable file", path, argv[0])
		return 1
	}
	// The extension (or plugin) gives the hook half its limit, and waits the limit.
	withBudget := append(slices.Clone(argv), "--timeout", (limit / 2).String())
	took, err := d.probe(ctx, c, withBudget, dir, limit)
	if err != nil {
		d.problem("run the command by hand with a hook event on stdin to see why; veto init "+c.Name+" rewrites it", "%s: %s: %v", path, strings.Join(argv, " "), err)
		return 1
	}
	d.ok("%s: %s refuses a read of ~/.ssh/id_rsa in %s's blocking form (%d ms of %s)", path, filepath.Base(argv[0]),
		c.Display, took.Milliseconds(), limit)
	return 1
}

// blockingOutput reports whether stdout is c's denial: pi's extension and
// OpenCode's plugin read {"block": true}; the other clients a "deny" in
// their JSON.
func blockingOutput(c *clients.Client, stdout []byte) bool {
	if !c.Settings.Extension {
		return bytes.Contains(stdout, []byte(`"deny"`))
	}
	var v struct {
		Block *bool `json:"block"`
		Ask   bool  `json:"ask"`
	}
	return json.Unmarshal(stdout, &v) == nil && v.Block != nil && *v.Block && !v.Ask
}
