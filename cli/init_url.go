package cli

import (
	"encoding/json"
	"strings"

	"github.com/vetohq/veto/server"
)

// TokenEnv is the variable an HTTP hook reads veto serve's token from: the
// settings file names it, never holds the secret.
const TokenEnv = "VETO_TOKEN"

// httpHooks are the clients whose hooks can POST to veto serve instead of
// running a command, and the path of their endpoint.
var httpHooks = map[string]string{"claude-code": "/v1/hooks/claude-code"}

// httpForm is the layout of client's HTTP hook entries ("type": "http",
// the endpoint's URL where a command hook has its command), registered
// fail-closed like the command form; ok is false for a client without.
func (ch clientHooks) httpForm(client string) (clientHooks, bool) {
	if _, ok := httpHooks[client]; !ok {
		return clientHooks{}, false
	}
	h := ch
	h.CommandKey = "url"
	h.Entry = map[string]any{
		"type": "http",
		"headers": map[string]any{
			"Authorization":         "Bearer $" + TokenEnv,
			server.ProjectDirHeader: "$CLAUDE_PROJECT_DIR",
		},
		"allowedEnvVars": []any{TokenEnv, "CLAUDE_PROJECT_DIR"},
		"timeout":        json.Number("5"),
	}
	return h, true
}

// hookURL is the endpoint init registers for client under base.
func hookURL(base, client string) string {
	return strings.TrimRight(base, "/") + httpHooks[client]
}

// isVetoURL reports whether a hook entry's URL is veto serve's endpoint
// for client.
func isVetoURL(u, client string) bool {
	p, ok := httpHooks[client]
	return ok && strings.HasSuffix(u, p)
}
