package cli

import (
	"fmt"

	sdkmodule "github.com/vetohq/veto/integrations/claude-agent-sdk"
	ocplugin "github.com/vetohq/veto/integrations/opencode"
	piext "github.com/vetohq/veto/integrations/pi"
)

// extensionKind is what init, uninstall and doctor need of a client whose
// registration is a source file veto writes whole (pi's extension,
// OpenCode's plugin, the Claude Agent SDK's module, which a host program
// imports): how to recognise veto's copy, read its INSTALLED line, and
// write it. The files' configurations have the same fields.
type extensionKind struct {
	what      string // "extension", "plugin"
	isVeto    func([]byte) bool
	configOf  func([]byte) (piext.Config, bool)
	installed func(piext.Config) ([]byte, error)
	answers   string // what veto answers once it is written
	// done, when set, is what init says once it wrote the file (else
	// "PATH: veto now answers ANSWERS (HOW)").
	done func(path, how string) string
}

var extensionKinds = map[string]extensionKind{
	"pi": {what: "extension", isVeto: piext.IsVeto, configOf: piext.ConfigOf, installed: piext.Installed,
		answers: "pi's session_start, tool_call and tool_result"},
	"opencode": {what: "plugin", isVeto: ocplugin.IsVeto, configOf: ocplugin.ConfigOf, installed: ocplugin.Installed,
		answers: "OpenCode's tool.execute.before and tool.execute.after (and session.created)"},
	"claude-agent-sdk": {what: "module", isVeto: sdkmodule.IsVeto, configOf: sdkmodule.ConfigOf, installed: sdkmodule.Installed,
		done: func(path, how string) string {
			return fmt.Sprintf("%s: veto's module for the Claude Agent SDK (%s); a host program uses it as query({prompt, options: withVeto(options)}), imported from this file", path, how)
		}},
}

// extensionOf is client's kind of extension; pi's for a client the table
// does not name.
func extensionOf(client string) extensionKind {
	if k, ok := extensionKinds[client]; ok {
		return k
	}
	return extensionKinds["pi"]
}
