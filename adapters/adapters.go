// Package adapters links every client adapter, each of which registers
// itself with package agent at init (as the rule families register with
// package rule, linked by package rules). A program that answers hook
// events (veto, its tests) imports it once; packages hook and server find
// the adapters in agent's registry and link none of them. Adding a client
// is one line here (docs/clients.md says what else).
package adapters

import (
	_ "github.com/vetohq/veto/claudeagentsdk" // claude-agent-sdk
	_ "github.com/vetohq/veto/claudecode"     // claude-code
	_ "github.com/vetohq/veto/claudecode"     // claude-code
	_ "github.com/vetohq/veto/codex"          // codex
	_ "github.com/vetohq/veto/codex"          // codex
	_ "github.com/vetohq/veto/copilotcli"     // copilot-cli
	_ "github.com/vetohq/veto/copilotcli"     // copilot-cli
	_ "github.com/vetohq/veto/cursor"         // cursor
	_ "github.com/vetohq/veto/cursor"         // cursor
	_ "github.com/vetohq/veto/geminicli"      // gemini-cli
	_ "github.com/vetohq/veto/geminicli"      // gemini-cli
	_ "github.com/vetohq/veto/opencode"       // opencode
	_ "github.com/vetohq/veto/pi"             // pi
	_ "github.com/vetohq/veto/pi"             // pi
)
