package server

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/toolpath"
)

// A request names the workspace and the cwd its call runs in, and the
// file rules take the workspace as a write root: a call claiming "/"
// could write /etc/ld.so.preload. So the service accepts only workspaces
// inside the roots its operator named (veto serve --workspace-root), and
// a cwd inside the workspace, before any rule runs. With no root named it
// accepts none: a workspace of / or of the user's home needs the
// operator's word.

// Reason codes of a claimed place refused.
const (
	// ReasonWorkspaceRefused: the call's workspace (as claimed, or found
	// from its cwd) is outside every workspace root.
	ReasonWorkspaceRefused = "workspace_refused"
	// ReasonCwdOutside: the call's cwd is outside its workspace.
	ReasonCwdOutside = "cwd_outside_workspace"
)

// workspaceRoots resolves the operator's roots: absolute, symlinks of
// the existing prefix resolved, as a call's paths are.
func workspaceRoots(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("server: workspace root %q is not an absolute path", d)
		}
		p, err := toolpath.Resolve(d, toolpath.LiveEnv("/"))
		if err != nil {
			return nil, fmt.Errorf("server: workspace root %q: %w", d, err)
		}
		out = append(out, p.Real)
	}
	return out, nil
}

// place bounds the workspace and cwd c claims; a call that claims
// neither passes (no write root is placed for it). On a pass the
// workspace found is pinned in c, so that the rules judge the place that
// was checked. reason is "" for a pass.
func (s *Server) place(c *veto.Call) (status int, reason, msg string) {
	if c.Cwd == "" && c.Workspace == "" {
		return 0, "", ""
	}
	refuse := func(why string) (int, string, string) {
		return http.StatusForbidden, ReasonWorkspaceRefused, "The call's workspace " + why + ", so the call is refused before any rule: start veto serve with --workspace-root DIR for the projects it decides."
	}
	for _, p := range []string{c.Cwd, c.Workspace} {
		if p != "" && !filepath.IsAbs(p) {
			return refuse("or cwd is not an absolute path")
		}
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	env := toolpath.LiveEnv(cwd)
	ws, err := toolpath.Workspace(c.Workspace, env)
	if err != nil {
		return refuse("cannot be resolved")
	}
	if !s.inRoots(ws) {
		if len(s.roots) == 0 {
			return refuse("is not accepted: this veto serve names no workspace root")
		}
		return refuse("is outside every workspace root of this veto serve")
	}
	// A workspace found from the cwd (none reported) is the cwd or a
	// directory above it, resolved from it: the cwd lies in it, and is
	// not resolved again.
	if c.Cwd != "" && c.Workspace != "" {
		d, err := toolpath.Resolve(c.Cwd, env)
		if err != nil || !toolpath.Within(d.Real, ws, false) {
			return http.StatusForbidden, ReasonCwdOutside, "The call's cwd is outside its workspace, so the call is refused before any rule."
		}
	}
	c.Workspace = ws
	return 0, "", ""
}

// inRoots reports whether the workspace ws (a Real path) lies in a root.
func (s *Server) inRoots(ws string) bool {
	for _, r := range s.roots {
		if toolpath.Within(ws, r, false) {
			return true
		}
	}
	return false
}
