package policy

import (
	"fmt"
	"strings"

	"github.com/vetohq/veto/rule"
)

// DefaultYAML is the built-in default as a commented policy file a user
// can start from. Loaded as a policy, it changes nothing: the lists it
// shows are the defaults, and the keys that would change something are
// commented out.
func DefaultYAML() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w(`# veto.yaml: veto's built-in default, written out.
#
# Where policy files live, in order: the built-in default, the user's
# ($XDG_CONFIG_HOME/veto/veto.yaml), the project's (.veto/veto.yaml), the one given
# with --policy, and the managed one (/etc/veto/veto.yaml). The user's file configures
# the built-in rules; every later file can only narrow: add rules and patterns,
# shorten allow-lists, never turn a rule off. Check a file with: veto validate FILE
version: 1

# Built-in rules, in the order they run: %s.
builtin:
  off: []            # the user's file may list rule ids to turn off

`, strings.Join(rule.IDs(), ", "))
	for _, sec := range rule.Sections() {
		if sec.YAML != nil {
			b.WriteString(sec.YAML())
			b.WriteString("\n")
		}
	}
	w(`# tools:             # descriptors for tools veto does not know
#   mcp__db__query:
#     params: {sql: content, out: path}
#     capabilities: [reads, writes, network]

offer:
  require_registered: false   # true refuses tools without a descriptor
  unavailable: []             # tools switched off in every run
  # actors:                   # which tools an actor may use (kind:id, kind:*, *)
  #   "agent:*": [Read, Grep, Glob]

approve: false       # true: hooks answer allow for the user (skipping the client's prompt); user's file only

# rules:             # your own rules, in CEL; deny is true when the call must be refused
#   - id: no-prod-hosts
#     match: {tool: Bash}
#     deny: 'args.command.contains("prod.internal")'
#     reason: production_host
#     message: Commands against production need a person.
#     risk: high
`)
	return b.String()
}
