package shell_test

import (
	"testing"

	"github.com/vetohq/veto/shell"
)

// veto exec's command is analysed as a wrapper's: the supervisor decides
// more, never less, so an agent gains nothing by naming it.
func TestVetoExecIsAWrapper(t *testing.T) {
	env := shell.Env{Cwd: "/w", Vars: map[string]string{"HOME": "/home/a"}}
	for _, src := range []string{
		"veto exec -- git reset --hard",
		"veto exec --run r1 --state /tmp/s.db -- git reset --hard",
		"/usr/local/bin/veto exec --run=r1 git reset --hard",
	} {
		rep := shell.Analyze(src, env)
		if len(rep.Findings) == 0 || rep.Findings[0].Reason != shell.GitDestructive {
			t.Errorf("%q: findings %+v", src, rep.Findings)
		}
	}
	if rep := shell.Analyze("veto exec -- go test ./...", env); len(rep.Findings) != 0 {
		t.Errorf("veto exec of an ordinary command: %+v", rep.Findings)
	}
	if rep := shell.Analyze("veto version", env); len(rep.Findings) != 0 {
		t.Errorf("veto version: %+v", rep.Findings)
	}
}
