// Package sdkmodule holds veto's Claude Agent SDK module (veto.ts, in this
// directory), which veto init claude-agent-sdk writes into a project as
// veto-claude-agent-sdk.ts, with the line that configures it (INSTALLED)
// naming the hook program of the veto that installed it, or veto serve's
// URL and the token's file.
package sdkmodule

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
)

// Source is the module as this repository holds it.
//
//go:embed veto.ts
var Source []byte

// Config is what an installed copy's INSTALLED line holds: the fields of
// pi's extension (package piext), so that veto doctor reads either.
type Config struct {
	Hook      []string `json:"hook,omitempty"`      // the hook program and its arguments (veto-hook claude-agent-sdk)
	URL       string   `json:"url,omitempty"`       // veto serve's base URL, instead of the hook
	TokenFile string   `json:"tokenFile,omitempty"` // the file of the hook's agent token, with URL
	TimeoutMs int      `json:"timeoutMs,omitempty"` // the limit of every answer
}

const (
	linePrefix = "const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = "
	lineSuffix = "; // veto init claude-agent-sdk"
	// Header is what every copy of the module starts with.
	Header = "// veto's guard for the Claude Agent SDK (npm @anthropic-ai/claude-agent-sdk)"
)

// Installed is the module with cfg on its INSTALLED line.
func Installed(cfg Config) ([]byte, error) {
	line, ok := installedLine(Source)
	if !ok {
		return nil, errors.New("sdkmodule: the module has no INSTALLED line")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(Source, line, []byte(linePrefix+string(b)+lineSuffix), 1), nil
}

// IsVeto reports whether b is a copy of veto's module (any version): what
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
