package control

import (
	"slices"
	"strings"

	"github.com/vetohq/veto/shell"
)

// typingCommands are the subcommands of terminal multiplexers that type
// into, or read the screen of, a pane a person may be using: with them
// the agent could start `veto approve` in the person's own shell, read
// the code its prompt shows, and type it back, all as the person.
var typingCommands = map[string][]string{
	"tmux":   {"send-keys", "send", "send-prefix", "capture-pane", "capturep", "pipe-pane", "pipep", "paste-buffer", "pasteb", "respawn-pane", "respawnp", "respawn-window", "respawnw"},
	"screen": {"stuff", "hardcopy", "paste", "readbuf", "exec"},
}

// desktopTypists type into, or read, whatever window has the focus: every
// use of them is refused.
var desktopTypists = []string{"xdotool", "ydotool", "wtype", "xte", "xvkbd", "dotool"}

// drivesTerminal reports whether a command types into or reads a terminal
// or desktop a person may be using (tmux send-keys, screen -X stuff,
// xdotool type), and so could answer veto's prompt for them. Words veto
// cannot read are judged by what they could be: a multiplexer given an
// unknown word may be given one of those subcommands.
func drivesTerminal(rep *shell.Report) bool {
	for _, c := range rep.Commands {
		prog := programName(c)
		if slices.Contains(desktopTypists, prog) {
			return true
		}
		subs, ok := typingCommands[prog]
		if !ok {
			continue
		}
		for _, a := range c.Argv[1:] {
			if a.Unknown {
				return true
			}
			for _, v := range a.Values {
				if slices.Contains(subs, strings.ToLower(strings.TrimSuffix(v, ";"))) {
					return true
				}
			}
		}
	}
	return false
}
