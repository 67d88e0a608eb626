// Package ocplugin holds veto's OpenCode plugin (veto.ts, in this
// directory), which veto init opencode writes into a project's
// .opencode/plugins/ or the user's ~/.config/opencode/plugins/, with the
// line that configures it (INSTALLED) naming the hook program of the veto
// that installed it.
package ocplugin

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
)

// Source is the plugin as this repository holds it.
//
//go:embed veto.ts
var Source []byte

// Config is what an installed copy's INSTALLED line holds.
type Config struct {
	Hook      []string `json:"hook,omitempty"`      // the hook program and its arguments (veto-hook opencode)
	URL       string   `json:"url,omitempty"`       // veto serve's base URL, instead of the hook
	TokenFile string   `json:"tokenFile,omitempty"` // the file of the hook's agent token, with URL
	TimeoutMs int      `json:"timeoutMs,omitempty"` // the limit of every answer
}

const (
	linePrefix = "const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = "
	lineSuffix = "; // veto init opencode"
	// Header is what every copy of the plugin starts with.
	Header = "// veto's guard for OpenCode (npm opencode-ai)"
)

// Installed is the plugin with cfg on its INSTALLED line.
func Installed(cfg Config) ([]byte, error) {
	line, ok := installedLine(Source)
	if !ok {
		return nil, errors.New("ocplugin: the plugin has no INSTALLED line")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(Source, line, []byte(linePrefix+string(b)+lineSuffix), 1), nil
}

// IsVeto reports whether b is a copy of veto's plugin (any version): what
// uninstall may remove.
func IsVeto(b []byte) bool {
	_, ok := installedLine(b)
	return ok && bytes.HasPrefix(b, []byte(Header))
}

// ConfigOf is the configuration an installed copy holds.
func ConfigOf(b []byte) (Config, bool) {
	line, ok := installedLine(b)
	if !ok || !bytes.HasPrefix(b, []byte(Header)) {
		return Config{}, false
	}
	var c Config
	raw := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte(linePrefix)), []byte(lineSuffix))
	if json.Unmarshal(raw, &c) != nil {
		return Config{}, false
	}
	return c, true
}

func installedLine(b []byte) ([]byte, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(linePrefix)) && bytes.HasSuffix(line, []byte(lineSuffix)) {
			return line, true
		}
	}
	return nil, false
}
