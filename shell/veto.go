package shell

// runVeto is veto itself: veto exec runs its command under the supervisor,
// and the command is analysed as any wrapper's is (the supervisor decides
// more, never less). Every other subcommand is veto.control's to judge.
func runVeto(w *walker, c *cmd) stage {
	if len(c.args) == 0 || c.args[0].unknown || c.args[0].lit != "exec" {
		return stage{}
	}
	o := parseOpts(c.args[1:], optSpec{long: map[string]bool{"run": true, "state": true}}, true)
	return w.nested(c, o.operands)
}
