package command

import (
	"github.com/vetohq/veto"
	"github.com/vetohq/veto/shell"
)

// What the static analysis cannot see can still run, under veto exec,
// which decides each program the command starts, each file it opens and
// each connection it makes as it happens (docs/exec.md). Two ways in:
//
//   - In a client's call (Claude Code's Bash): a command whose only
//     refusals are what the analyzer cannot see (cannot_vouch,
//     depth_exceeded) is allowed rewritten to run under veto exec, where
//     the client runs a rewritten call (veto.Call.Rewrites), this process
//     can start a supervisor (Config.Supervisor) and the policy does not
//     say shell.exec: refuse. Every other rule still judges what the
//     analysis does see.
//   - In veto exec's own gate (Config.Supervising): each program is
//     decided as it starts, so what it would go on to do is decided when
//     it does.

// unseen reports whether a finding is only that the analysis cannot see
// something: what supervision decides at run time instead.
func unseen(r shell.Reason) bool { return r == shell.CannotVouch || r == shell.DepthExceeded }

// canSupervise reports whether what the analysis cannot see in this call
// is decided at run time: in veto exec's own gate, or for a call that is
// rewritten to run under it.
func (s *Set) canSupervise(in *veto.Input) bool {
	if s.supervising {
		return true
	}
	return s.supervisor != nil && in.Call.Rewrites && in.Call.Run.Ref != ""
}

// supervised reports whether this call is rewritten to run under veto
// exec: it can be, and the analysis met something it cannot see (a
// finding, or a path it cannot know, which the file rules would refuse
// otherwise), and nothing else refuses it, or it would not get this far.
func (s *Set) supervised(in *veto.Input) bool {
	if s.supervising || !s.canSupervise(in) {
		return false
	}
	a := s.analyze(in)
	if a.report == nil {
		return false
	}
	for _, f := range a.report.Findings {
		if f.Rule == shell.RuleAnalyzer && unseen(f.Reason) {
			return true
		}
	}
	for _, f := range a.report.Files {
		if f.Unknown {
			return true
		}
	}
	return false
}

// underExec is src rewritten to run under veto exec in run, as one line
// for the client's shell: the supervisor's command line, the run, and
// bash -c src.
func (s *Set) underExec(run, src string) string {
	return shell.ArgvLine(append(append([]string(nil), s.supervisor...), "--run", run, "--", "bash", "-c", src))
}
