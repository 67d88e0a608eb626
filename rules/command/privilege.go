package command

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/glob"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/shell"
)

// The privilege and injection rules.
var (
	privilegeAdvice = veto.Advice{Instead: "Ask the user to run the privileged command, or to list it in the policy.",
		Policy: "shell.privileged in the user's veto.yaml, which lists the privileged commands that may run (shell.privilege: ask lets a person decide the others)"}

	Privilege = &rule.Info{ID: string(shell.RulePrivilege), Doc: "Refuses a command that gains root's or another user's rights or leaves the sandbox, unless shell.privileged lists it; asks a person instead when shell.privilege is ask.",
		Risk: veto.RiskHigh, Advice: privilegeAdvice, Reasons: findings(shell.RulePrivilege)}

	Injection = &rule.Info{ID: string(shell.RuleInjection), Doc: "Refuses variables that make the dynamic loader, git, a shell or an interpreter load or run code veto cannot vouch for.",
		Risk: veto.RiskHigh, Advice: rule.Off(string(shell.RuleInjection)), Reasons: findings(shell.RuleInjection)}
)

// CheckPrivileged says what is wrong with an entry of shell.privileged:
// words separated by spaces, each a glob of one word of the command.
func CheckPrivileged(p string) error {
	words := strings.Fields(p)
	if len(words) == 0 {
		return fmt.Errorf("empty privileged command")
	}
	for _, w := range words {
		if err := glob.CheckName(w); err != nil {
			return err
		}
	}
	if strings.ContainsAny(words[0], glob.Meta) {
		return fmt.Errorf("privileged command %q: its program (the first word) must be written out", p)
	}
	return nil
}

// privilegedMatch reports whether a command matches an entry of
// shell.privileged: word for word, each a glob of one word; a last word
// "*" stands for any number of words, none included. The program is
// matched by its base name unless the entry names a path. A word veto
// cannot see matches nothing, and a command given more words from its
// input (xargs sudo …) only matches an entry ending in "*".
func privilegedMatch(pattern []string, c shell.Command) bool {
	argv := c.Argv
	if len(argv) == 0 {
		return false
	}
	rest := false
	if n := len(pattern); n > 1 && pattern[n-1] == "*" {
		pattern, rest = pattern[:n-1], true
	}
	if c.InputArgs && !rest {
		return false
	}
	if len(argv) < len(pattern) || (!rest && len(argv) != len(pattern)) {
		return false
	}
	for i, w := range argv {
		if w.Unknown || len(w.Values) == 0 {
			return false
		}
		if i >= len(pattern) {
			continue
		}
		for _, v := range w.Values {
			if i == 0 && !strings.Contains(pattern[0], "/") {
				v = path.Base(v)
			}
			if !glob.Name(pattern[i], v) {
				return false
			}
		}
	}
	return true
}

// privilege refuses, or asks a person about, what shell.privilege finds,
// unless shell.privileged lists the command.
type privilege struct{ s *Set }

func (r *privilege) Info() veto.RuleInfo { return Privilege.RuleInfo() }

func (r *privilege) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	if a.report == nil {
		return veto.Allow(), nil
	}
	var asked *shell.Finding
	for i, f := range a.report.Findings {
		if f.Rule != shell.RulePrivilege || r.s.privilegedAllowed(a.report, f.Segment) {
			continue
		}
		if !r.s.askPrivilege {
			return deny(f), nil
		}
		if asked == nil {
			asked = &a.report.Findings[i]
		}
	}
	if asked != nil {
		return veto.Ask(string(asked.Reason), asked.Message), nil
	}
	return veto.Allow(), nil
}

// privilegedAllowed reports whether shell.privileged lists the command of
// segment seg.
func (s *Set) privilegedAllowed(rep *shell.Report, seg int) bool {
	if len(s.privileged) == 0 {
		return false
	}
	found := false
	for _, c := range rep.Commands {
		if c.Segment != seg {
			continue
		}
		found = true
		ok := false
		for _, p := range s.privileged {
			if privilegedMatch(p, c) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return found
}

// injection refuses what shell.injection finds.
type injection struct{ s *Set }

func (r *injection) Info() veto.RuleInfo { return Injection.RuleInfo() }

func (r *injection) Check(_ context.Context, in *veto.Input) (veto.Decision, error) {
	if a := r.s.analyze(in); a.report != nil {
		for _, f := range a.report.Findings {
			if f.Rule == shell.RuleInjection {
				return deny(f), nil
			}
		}
	}
	return veto.Allow(), nil
}
