package hook

import "github.com/vetohq/veto/agent"

// AdapterIn returns a client's adapter for a project directory given by
// the caller (Claude Code's CLAUDE_PROJECT_DIR, as an HTTP hook passes it),
// nil for an unknown name. It knows none of the client's other variables
// (wire.ClientKeys): a call waiting for a person is refused.
func AdapterIn(name, projectDir string) agent.Adapter { return adapter(name, projectDir, nil) }
