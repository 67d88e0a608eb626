package e2e

import "testing"

// TestClaudeCodeRunsUnseenCommandsUnderVetoExec (issue 30's Show): the
// real Claude Code runs calls the analyzer cannot vouch for — a build step
// built at run time, a python3 one-liner, a script written and run — and
// veto's reply rewrites each to run under veto exec (updatedInput): the
// harmless ones run with their output; the ones that reach for the SSH
// key (interpreter code that builds its path, a copy of cat under another
// name, a shell function) are stopped at the execve or the open, the
// canary never reaching the model.
func TestClaudeCodeRunsUnseenCommandsUnderVetoExec(t *testing.T) {
	need(t)
	node := clients(t)
	playScenarios(t, clientRun{display: "Claude Code", name: "claude-code", file: "claude-code-exec.json",
		spec:  func(t *testing.T, s *sandbox, calls []Call) runSpec { return claudeRun(t, s, node, calls) },
		setup: describeNotes, failIsError: true, sharedIDs: true})
}
