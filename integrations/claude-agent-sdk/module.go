// Package sdkmodule holds veto's Claude Agent SDK module (veto.ts, in this
// directory), which veto init claude-agent-sdk writes into a project as
// veto-claude-agent-sdk.ts, with the line that configures it (INSTALLED)
// naming the hook program of the veto that installed it, or veto serve's
// URL and the token's file.
package sdkmodule

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
const Header = "// veto's guard for the Claude Agent SDK (npm @anthropic-ai/claude-agent-sdk)"

// Module is the file veto init writes.
var Module = piext.File{Name: "the Claude Agent SDK module", Source: Source, Header: Header, LineSuffix: "; // veto init claude-agent-sdk"}

// Installed is the file with cfg on its INSTALLED line.
func Installed(cfg Config) ([]byte, error) { return Module.Installed(cfg) }

// IsVeto reports whether b is a copy of veto's file (any version): what
// uninstall may remove.
func IsVeto(b []byte) bool { return Module.IsVeto(b) }

// ConfigOf is the configuration an installed copy holds.
func ConfigOf(b []byte) (Config, bool) { return Module.ConfigOf(b) }
