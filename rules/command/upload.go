package command

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/shell"
)

// The upload and install rules, declared once.
var (
	uploadLocal = &rule.Reason{Code: "upload_local_data", Message: "The command sends local files, or local data from a pipeline or a redirection, to a host that is not on the egress allow-list.",
		Risk: veto.RiskHigh, Advice: &veto.Advice{Instead: "Send it to a host on the egress allow-list, or ask the user to add the host (veto egress allow).", Policy: "egress.allow"}}
	Upload = &rule.Info{ID: "shell.upload", Doc: "Refuses a command that sends local files or a pipeline's local data to a host not on the egress allow-list, in every egress mode; a push to a remote by name, and a host on this machine, are allowed.",
		Risk: veto.RiskHigh, Advice: rule.Off("shell.upload"), Reasons: []*rule.Reason{uploadLocal}}

	installSource = &rule.Reason{Code: "install_source", Message: "The command installs a package from a URL, a git remote, or a file outside the workspace, not from the ecosystem's registry or a host on the egress allow-list.",
		Risk: veto.RiskHigh, Advice: &veto.Advice{Instead: "Install the package from its registry, or ask the user to add the host to the egress allow-list.", Policy: "egress.allow"}}
	registryRedirect = &rule.Reason{Code: "registry_redirect", Message: "The command points a package manager at a registry or index other than the ecosystem's, on a host not on the egress allow-list.",
		Risk: veto.RiskHigh, Advice: &veto.Advice{Instead: "Keep the ecosystem's registry, or ask the user to add the registry's host to the egress allow-list.", Policy: "egress.allow"}}
	installScript = &rule.Reason{Code: "install_script", Message: "The command adds a script to package.json that package managers run on their own at install time (preinstall, install, postinstall, prepare).",
		Risk: veto.RiskHigh, Advice: &veto.Advice{Instead: "Add it under another script name the user runs by hand."}}
	Install = &rule.Info{ID: "shell.install", Doc: "Refuses installing a package from a URL, a git remote or a file outside the workspace, pointing a package manager at another registry, and adding an install-time script, unless the host is the ecosystem's registry or on the egress allow-list.",
		Risk: veto.RiskHigh, Advice: rule.Off("shell.install"), Reasons: []*rule.Reason{installSource, registryRedirect, installScript}}
)

// listed judges a host against the egress allow-list in every mode
// (egress.Policy.Lists); unknown is a host veto could not determine.
func (s *Set) listed(ctx context.Context, in *veto.Input, host string, unknown, registries bool) (bool, error) {
	if unknown {
		return false, nil
	}
	return s.egress.Lists(ctx, in, host, registries)
}

// upload refuses a command that sends local data to a host not on the
// allow-list.
type upload struct{ s *Set }

func (r *upload) Info() veto.RuleInfo { return Upload.RuleInfo() }

func (r *upload) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	if a.report == nil {
		return veto.Allow(), nil
	}
	for _, u := range a.report.Uploads {
		ok, err := r.s.listed(ctx, in, u.Host, u.Unknown, false)
		if err != nil {
			return veto.Decision{}, err
		}
		if !ok {
			return uploadLocal.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

// install refuses an install from outside the registry, a registry
// redirection and an install-time script.
type install struct{ s *Set }

func (r *install) Info() veto.RuleInfo { return Install.RuleInfo() }

func (r *install) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	a := r.s.analyze(in)
	if a.report == nil {
		return veto.Allow(), nil
	}
	for _, i := range a.report.Installs {
		reason := installSource
		switch i.Kind {
		case shell.InstallScript:
			return installScript.Deny(), nil
		case shell.InstallRedirect:
			reason = registryRedirect
		}
		if i.Kind == shell.InstallSource && i.Path != "" && !i.Unknown {
			if !inWorkspace(in, i.Path, i.Dir) {
				return installSource.Deny(), nil
			}
			continue
		}
		ok, err := r.s.listed(ctx, in, i.Host, i.Unknown, true)
		if err != nil {
			return veto.Decision{}, err
		}
		if !ok {
			return reason.Deny(), nil
		}
	}
	return veto.Allow(), nil
}

// inWorkspace reports whether a path (relative to dir) lies in the call's
// workspace.
func inWorkspace(in *veto.Input, p, dir string) bool {
	ws := in.Call.Workspace
	if ws == "" {
		ws = in.Call.Cwd
	}
	if ws == "" || strings.HasPrefix(p, "~") {
		return false
	}
	if !filepath.IsAbs(p) {
		if dir == "" {
			dir = in.Call.Cwd
		}
		if dir == "" {
			return false
		}
		p = filepath.Join(dir, p)
	}
	rel, err := filepath.Rel(filepath.Clean(ws), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
