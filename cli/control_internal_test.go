package cli

import (
	"testing"

	"github.com/vetohq/veto/rules/control"
)

// TestEverySubcommandClassifiedForControl: veto.control decides each of
// veto's subcommands as read-only or changing veto; a new subcommand fails
// here until rules/control's Subcommands classifies it (and is refused to
// the agent meanwhile).
func TestEverySubcommandClassifiedForControl(t *testing.T) {
	for _, c := range commands() {
		if !control.Classified(c.name) {
			t.Errorf("veto %s: not classified in rules/control.Subcommands (read-only, or changes veto?)", c.name)
		}
	}
	for name := range control.Subcommands {
		known := name == "help" || name == "-h" || name == "-help" || name == "--help"
		for _, c := range commands() {
			known = known || c.name == name
		}
		if !known {
			t.Errorf("rules/control.Subcommands classifies %q, which veto does not have", name)
		}
	}
}
