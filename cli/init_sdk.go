package cli

import (
	"fmt"

	sdkmodule "github.com/vetohq/veto/integrations/claude-agent-sdk"
	piext "github.com/vetohq/veto/integrations/pi"
)

// The files veto writes whole for the clients whose registration is one
// (clients.Settings.Extension): pi's extension, and the Claude Agent
// SDK's module, which a host program imports. Their configuration lines
// hold the same fields.

// isVetoExtension reports whether b is veto's file for client.
func isVetoExtension(client string, b []byte) bool {
	if client == sdkClient {
		return sdkmodule.IsVeto(b)
	}
	return piext.IsVeto(b)
}

// installedExtension is veto's file for client with cfg in it.
func installedExtension(client string, cfg piext.Config) ([]byte, error) {
	if client == sdkClient {
		return sdkmodule.Installed(sdkmodule.Config(cfg))
	}
	return piext.Installed(cfg)
}

// extensionConfigOf is the configuration in veto's file for client.
func extensionConfigOf(client string, b []byte) (piext.Config, bool) {
	if client == sdkClient {
		c, ok := sdkmodule.ConfigOf(b)
		return piext.Config(c), ok
	}
	return piext.ConfigOf(b)
}

// extensionDone is what init says once it wrote veto's file for client.
func extensionDone(client, path, how string) string {
	if client == sdkClient {
		return fmt.Sprintf("%s: veto's module for the Claude Agent SDK (%s); a host program uses it as query({prompt, options: withVeto(options)}), imported from this file", path, how)
	}
	return fmt.Sprintf("%s: veto now answers pi's session_start, tool_call and tool_result (%s)", path, how)
}

// extensionNoun is what init and uninstall call veto's file for client.
func extensionNoun(client string) string {
	if client == sdkClient {
		return "module"
	}
	return "extension"
}

const sdkClient = "claude-agent-sdk"
