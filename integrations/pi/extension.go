// Package piext holds veto's pi extension (veto.ts, in this directory),
// which veto init pi writes into a project's .pi/extensions/ or the
// user's ~/.pi/agent/extensions/, with the line that configures it
// (INSTALLED) naming the hook program of the veto that installed it.
package piext

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
)

// Source is the extension as this repository holds it.
//
//go:embed veto.ts
var Source []byte

// Config is what an installed copy's INSTALLED line holds.
type Config struct {
	Hook      []string `json:"hook,omitempty"`      // the hook program and its arguments (veto-hook pi)
	URL       string   `json:"url,omitempty"`       // veto serve's base URL, instead of the hook
	TokenFile string   `json:"tokenFile,omitempty"` // the file of the hook's agent token, with URL
	TimeoutMs int      `json:"timeoutMs,omitempty"` // the limit of every answer
}

// linePrefix starts the INSTALLED line of every file veto writes whole
// for a runtime (pi's extension, OpenCode's plugin, the Claude Agent
// SDK's module): the same TypeScript constant in each.
const linePrefix = "const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = "

// File is one such file: its source, the header every copy starts with,
// and the end of its INSTALLED line ("; // veto init CLIENT").
type File struct {
	Name       string // what errors call it ("the OpenCode plugin")
	Source     []byte
	Header     string
	LineSuffix string
}

// Header is what every copy of pi's extension starts with.
const Header = "// veto's guard for pi (npm @mariozechner/pi-coding-agent)"

// Extension is pi's extension.
var Extension = File{Name: "pi's extension", Source: Source, Header: Header, LineSuffix: "; // veto init pi"}

// Installed is the extension with cfg on its INSTALLED line.
func Installed(cfg Config) ([]byte, error) { return Extension.Installed(cfg) }

// IsVeto reports whether b is a copy of veto's extension (any version):
// what uninstall may remove.
func IsVeto(b []byte) bool { return Extension.IsVeto(b) }

// ConfigOf is the configuration an installed copy holds.
func ConfigOf(b []byte) (Config, bool) { return Extension.ConfigOf(b) }

// Installed is the file with cfg on its INSTALLED line.
func (f File) Installed(cfg Config) ([]byte, error) {
	line, ok := f.installedLine(f.Source)
	if !ok {
		return nil, errors.New("veto: " + f.Name + " has no INSTALLED line")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(f.Source, line, []byte(linePrefix+string(b)+f.LineSuffix), 1), nil
}

// IsVeto reports whether b is a copy of the file (any version).
func (f File) IsVeto(b []byte) bool {
	_, ok := f.installedLine(b)
	return ok && bytes.HasPrefix(b, []byte(f.Header))
}

// ConfigOf is the configuration an installed copy holds.
func (f File) ConfigOf(b []byte) (Config, bool) {
	line, ok := f.installedLine(b)
	if !ok || !bytes.HasPrefix(b, []byte(f.Header)) {
		return Config{}, false
	}
	var c Config
	raw := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte(linePrefix)), []byte(f.LineSuffix))
	if json.Unmarshal(raw, &c) != nil {
		return Config{}, false
	}
	return c, true
}

func (f File) installedLine(b []byte) ([]byte, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(linePrefix)) && bytes.HasSuffix(line, []byte(f.LineSuffix)) {
			return line, true
		}
	}
	return nil, false
}
