// Package ocplugin holds veto's OpenCode plugin (veto.ts, in this
// directory), which veto init opencode writes into a project's
// .opencode/plugins/ or the user's ~/.config/opencode/plugins/, with the
// line that configures it (INSTALLED) naming the hook program of the veto
// that installed it.
package ocplugin

import (
	_ "embed"

	piext "github.com/vetohq/veto/integrations/pi"
)

// Source is the file as this repository holds it.
//
//go:embed veto.ts
var Source []byte

// Config is what an installed copy's INSTALLED line holds: pi's.
type Config = piext.Config

// Header is what every copy starts with.
const Header = "// veto's guard for OpenCode (npm opencode-ai)"

// Plugin is the file veto init writes.
var Plugin = piext.File{Name: "the OpenCode plugin", Source: Source, Header: Header, LineSuffix: "; // veto init opencode"}

// Installed is the file with cfg on its INSTALLED line.
func Installed(cfg Config) ([]byte, error) { return Plugin.Installed(cfg) }

// IsVeto reports whether b is a copy of veto's file (any version): what
// uninstall may remove.
func IsVeto(b []byte) bool { return Plugin.IsVeto(b) }

// ConfigOf is the configuration an installed copy holds.
func ConfigOf(b []byte) (Config, bool) { return Plugin.ConfigOf(b) }
