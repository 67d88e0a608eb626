package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/toolpath"
	"github.com/vetohq/veto/tools"
	"go.yaml.in/yaml/v3"
)

// Compiler compiles a user rule. Package policy/celrule implements it for
// CEL; without one, a policy that has user rules does not load.
type Compiler interface {
	Compile(r RuleSpec) (veto.Rule, error)
}

// CompileError places a problem inside a rule's expression: line and
// column are 1-based within the expression's text.
type CompileError struct {
	Line, Col int
	Msg       string
}

func (e *CompileError) Error() string { return e.Msg }

// Policy is the effective policy: every file merged.
type Policy struct {
	Layers []*Layer

	Off         map[string]string // built-in rule id → the file that turned it off
	ExtraRoots  []string
	TempDirs    []string // nil: the default temporary directories
	Protected   []string // added to the defaults
	Persistence []string
	Credentials []string
	Manifest    []string // nil: no manifest
	WriteScopes [][]string

	Interpreters   []string // nil: any
	MaxDepth       int
	DefaultTimeout time.Duration

	EgressMode      egress.Mode // "" : open
	EgressAllow     []string    // nil: none set
	Private         []string
	MaxCalls        map[string]int
	MaxFailedWrites int

	Tools []veto.Descriptor // the built-in descriptors and those the files add
	Offer veto.Offer

	Rules []UserRule

	// Approve: hooks answer allow for the user (the user's file only).
	Approve bool

	origins []origin
}

// UserRule is a compiled user rule and where it was written.
type UserRule struct {
	Spec  RuleSpec
	Rule  veto.Rule
	Where string // file:line:col
}

// origin records where a part of the effective policy came from.
type origin struct {
	key, value, where string
}

// LoadOptions says where the policy files are.
type LoadOptions struct {
	UserPath    string // "" skips the user's file
	ProjectPath string // "" skips the project's file
	FlagPath    string // --policy; must exist when set
	ManagedPath string // "" skips the managed file
	Compiler    Compiler
}

// Locate returns where the policy files of a call running in cwd are: the
// user's under $XDG_CONFIG_HOME (or ~/.config), the project's in the
// workspace's .veto directory, the managed one in /etc/veto (or
// $VETO_MANAGED_POLICY).
func Locate(cwd, workspace string) LoadOptions {
	o := LoadOptions{ManagedPath: "/etc/veto/veto.yaml"}
	if m := os.Getenv("VETO_MANAGED_POLICY"); m != "" {
		o.ManagedPath = m
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		o.UserPath = filepath.Join(x, "veto", "veto.yaml")
	} else if h, err := os.UserHomeDir(); err == nil {
		o.UserPath = filepath.Join(h, ".config", "veto", "veto.yaml")
	}
	if cwd != "" {
		if ws, err := toolpath.Workspace(workspace, toolpath.LiveEnv(cwd)); err == nil {
			o.ProjectPath = filepath.Join(ws, ".veto", "veto.yaml")
		}
	}
	return o
}

// Load reads every policy file and merges them. Problems from every file
// are reported together.
func Load(o LoadOptions) (*Policy, error) {
	layers := []*Layer{{Kind: KindBuiltin, Path: "builtin"}}
	var probs Problems
	for _, f := range []struct {
		kind, path string
		optional   bool
	}{
		{KindUser, o.UserPath, true},
		{KindProject, o.ProjectPath, true},
		{KindFlag, o.FlagPath, false},
		{KindManaged, o.ManagedPath, true},
	} {
		if f.path == "" {
			continue
		}
		l, err := ReadFile(f.kind, f.path, f.optional)
		if ps, ok := err.(Problems); ok {
			probs = append(probs, ps...)
			continue
		}
		if l != nil {
			layers = append(layers, l)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return Merge(layers, o.Compiler)
}

// builtinRuleIDs are the ids of every built-in rule.
func builtinRuleIDs() []string {
	return slices.Concat(command.RuleIDs, []string{"net.egress"}, files.RuleIDs,
		[]string{"sequence.no_egress_after_private_read", "sequence.max_calls", "sequence.max_failed_writes"})
}

var roles = map[string]veto.Role{"path": veto.RolePath, "source_path": veto.RoleSourcePath, "moved_path": veto.RoleMoved,
	"url": veto.RoleURL, "command": veto.RoleCommand, "content": veto.RoleContent, "input": veto.RoleInput}

var capabilities = map[string]veto.Capability{"reads": veto.CapReads, "writes": veto.CapWrites, "executes": veto.CapExecutes,
	"network": veto.CapNetwork, "content_from_source": veto.CapContentFromSource, "overwrites": veto.CapOverwrites,
	"edits": veto.CapEdits, "searches_tree": veto.CapSearchesTree}

// Merge merges layers in order (the first must be the built-in one).
func Merge(layers []*Layer, compiler Compiler) (*Policy, error) {
	p := &Policy{Layers: layers, Off: map[string]string{}, Tools: tools.Defaults()}
	var probs Problems
	known := map[string]string{} // tool name → where described
	for _, d := range p.Tools {
		known[d.Name] = "builtin"
	}
	ruleIDs := map[string]string{}
	for _, id := range builtinRuleIDs() {
		ruleIDs[id] = "builtin"
	}
	for _, l := range layers {
		if l.Kind == KindBuiltin {
			continue
		}
		trusted := l.Kind == KindUser
		f := &l.File
		where := func(keys ...any) string {
			n := find(l.doc, keys...)
			if n == nil {
				return l.Path
			}
			return fmt.Sprintf("%s:%d:%d", l.Path, n.Line, n.Column)
		}
		bad := func(msg string, keys ...any) {
			probs = append(probs, at(l.Path, find(l.doc, keys...), msg))
		}
		if f.Approve {
			if trusted {
				p.Approve = true
				p.note("approve", "true", where("approve"))
			} else {
				bad(fmt.Sprintf("approve: only the user's policy may make veto approve calls, not the %s policy", l.Kind), "approve")
			}
		}
		if f.Builtin != nil {
			for i, id := range f.Builtin.Off {
				switch {
				case !slices.Contains(builtinRuleIDs(), id):
					bad(fmt.Sprintf("builtin.off: %q is not a built-in rule; they are %s", id, strings.Join(builtinRuleIDs(), ", ")), "builtin", "off", i)
				case !trusted:
					bad(fmt.Sprintf("builtin.off: only the user's policy may turn a built-in rule off, not the %s policy", l.Kind), "builtin", "off", i)
				default:
					p.Off[id] = where("builtin", "off", i)
					p.note("builtin.off", id, where("builtin", "off", i))
				}
			}
		}
		if fr := f.Files; fr != nil {
			for _, list := range []struct {
				key string
				in  []string
				out *[]string
			}{
				{"protected", fr.Protected, &p.Protected},
				{"persistence", fr.Persistence, &p.Persistence},
				{"credentials", fr.Credentials, &p.Credentials},
			} {
				for i, pat := range list.in {
					if err := files.CheckPattern(pat); err != nil {
						bad(fmt.Sprintf("files.%s: %v", list.key, err), "files", list.key, i)
						continue
					}
					*list.out = append(*list.out, pat)
					p.note("files."+list.key, pat, where("files", list.key, i))
				}
			}
			for i, r := range fr.ExtraRoots {
				if !filepath.IsAbs(r) && r != "~" && !strings.HasPrefix(r, "~/") {
					bad("files.extra_roots: a root must be absolute or start with ~/", "files", "extra_roots", i)
				}
			}
			for i, r := range fr.TempDirs {
				if !filepath.IsAbs(r) {
					bad("files.temp_dirs: a temporary directory must be absolute", "files", "temp_dirs", i)
				}
			}
			if fr.ExtraRoots != nil {
				if trusted {
					p.ExtraRoots = cleanAll(fr.ExtraRoots)
				} else {
					p.ExtraRoots = intersect(p.ExtraRoots, cleanAll(fr.ExtraRoots))
				}
				p.note("files.extra_roots", strings.Join(fr.ExtraRoots, ", "), where("files", "extra_roots"))
			}
			if fr.TempDirs != nil {
				if trusted {
					p.TempDirs = cleanAll(fr.TempDirs)
				} else {
					current := p.TempDirs
					if current == nil {
						current = defaultTempDirs()
					}
					p.TempDirs = intersect(current, cleanAll(fr.TempDirs))
				}
				p.note("files.temp_dirs", strings.Join(fr.TempDirs, ", "), where("files", "temp_dirs"))
			}
			if fr.Manifest != nil {
				if p.Manifest == nil {
					p.Manifest = cleanAll(fr.Manifest)
				} else {
					p.Manifest = intersect(p.Manifest, cleanAll(fr.Manifest))
				}
				p.note("files.manifest", strings.Join(fr.Manifest, ", "), where("files", "manifest"))
			}
			if fr.WriteScope != nil {
				for i, pat := range fr.WriteScope {
					if err := files.CheckPattern(pat); err != nil {
						bad(fmt.Sprintf("files.write_scope: %v", err), "files", "write_scope", i)
					}
				}
				p.WriteScopes = append(p.WriteScopes, fr.WriteScope)
				p.note("files.write_scope", strings.Join(fr.WriteScope, ", "), where("files", "write_scope"))
			}
		}
		if sh := f.Shell; sh != nil {
			if sh.Interpreters != nil {
				for i, name := range sh.Interpreters {
					if name == "" || strings.ContainsAny(name, "/ ") {
						bad("shell.interpreters: an interpreter is a program name, as python3", "shell", "interpreters", i)
					}
				}
				if p.Interpreters == nil || trusted {
					p.Interpreters = slices.Clone(sh.Interpreters)
				} else {
					p.Interpreters = intersect(p.Interpreters, sh.Interpreters)
				}
				p.note("shell.interpreters", strings.Join(sh.Interpreters, ", "), where("shell", "interpreters"))
			}
			if sh.MaxDepth < 0 {
				bad("shell.max_depth: want a positive number", "shell", "max_depth")
			} else if sh.MaxDepth > 0 && (p.MaxDepth == 0 || sh.MaxDepth < p.MaxDepth || trusted) {
				p.MaxDepth = sh.MaxDepth
				p.note("shell.max_depth", fmt.Sprint(sh.MaxDepth), where("shell", "max_depth"))
			}
			if d := time.Duration(sh.DefaultTimeout); d > 0 && (p.DefaultTimeout == 0 || d < p.DefaultTimeout || trusted) {
				p.DefaultTimeout = d
				p.note("shell.default_timeout", d.String(), where("shell", "default_timeout"))
			}
		}
		if eg := f.Egress; eg != nil {
			// An earlier file's allowlist mode with no list allows nothing:
			// a later file's list may not widen it.
			wasAllowlist := p.EgressMode == egress.Allowlist
			switch egress.Mode(eg.Mode) {
			case "":
			case egress.Allowlist:
				p.EgressMode = egress.Allowlist
				p.note("egress.mode", eg.Mode, where("egress", "mode"))
			case egress.Open:
				if p.EgressMode == egress.Allowlist && !trusted {
					bad(fmt.Sprintf("egress.mode: only the user's policy may open egress that another file limited, not the %s policy", l.Kind), "egress", "mode")
				} else {
					p.EgressMode = egress.Open
					p.note("egress.mode", eg.Mode, where("egress", "mode"))
				}
			default:
				bad(fmt.Sprintf("egress.mode: %q is not open or allowlist", eg.Mode), "egress", "mode")
			}
			if eg.Allow != nil {
				ok := true
				for i, h := range eg.Allow {
					if _, err := egress.ParseList([]string{h}); err != nil {
						bad(fmt.Sprintf("egress.allow: %v", err), "egress", "allow", i)
						ok = false
					}
				}
				if ok {
					if trusted || (p.EgressAllow == nil && !wasAllowlist) {
						p.EgressAllow = slices.Clone(eg.Allow)
					} else {
						p.EgressAllow = append([]string{}, intersect(p.EgressAllow, eg.Allow)...)
					}
					p.note("egress.allow", strings.Join(eg.Allow, ", "), where("egress", "allow"))
				}
			}
		}
		if sq := f.Sequence; sq != nil {
			for i, pat := range sq.Private {
				if err := files.CheckPattern(pat); err != nil {
					bad(fmt.Sprintf("sequence.private: %v", err), "sequence", "private", i)
					continue
				}
				p.Private = append(p.Private, pat)
				p.note("sequence.private", pat, where("sequence", "private", i))
			}
			globs := make([]string, 0, len(sq.MaxCalls))
			for g := range sq.MaxCalls {
				globs = append(globs, g)
			}
			slices.Sort(globs)
			for _, g := range globs {
				n := sq.MaxCalls[g]
				if _, err := path.Match(g, ""); err != nil || g == "" {
					bad(fmt.Sprintf("sequence.max_calls: %q is not a tool name or glob", g), "sequence", "max_calls", g)
					continue
				}
				if n < 0 {
					bad(fmt.Sprintf("sequence.max_calls: %q: want a limit of 0 or more", g), "sequence", "max_calls", g)
					continue
				}
				if p.MaxCalls == nil {
					p.MaxCalls = map[string]int{}
				}
				if cur, ok := p.MaxCalls[g]; !ok || n < cur || trusted {
					p.MaxCalls[g] = n
					p.note("sequence.max_calls", fmt.Sprintf("%s: %d", g, n), where("sequence", "max_calls", g))
				}
			}
			if sq.MaxFailedWrites < 0 {
				bad("sequence.max_failed_writes: want a positive number", "sequence", "max_failed_writes")
			} else if sq.MaxFailedWrites > 0 && (p.MaxFailedWrites == 0 || sq.MaxFailedWrites < p.MaxFailedWrites || trusted) {
				p.MaxFailedWrites = sq.MaxFailedWrites
				p.note("sequence.max_failed_writes", fmt.Sprint(sq.MaxFailedWrites), where("sequence", "max_failed_writes"))
			}
		}
		names := make([]string, 0, len(f.Tools))
		for name := range f.Tools {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			spec := f.Tools[name]
			if prev, ok := known[name]; ok {
				bad(fmt.Sprintf("tools: %q is already described (%s); a later policy cannot change a tool's description", name, prev), "tools", name)
				continue
			}
			d := veto.Descriptor{Name: name, Params: map[string]veto.Role{}, TrustZones: spec.TrustZones}
			okSpec := true
			for param, role := range spec.Params {
				r, ok := roles[role]
				if !ok {
					bad(fmt.Sprintf("tools.%s.params.%s: unknown role %q; roles are path, source_path, moved_path, url, command, content, input", name, param, role), "tools", name, "params", param)
					okSpec = false
				}
				d.Params[param] = r
			}
			for i, c := range spec.Capabilities {
				cp, ok := capabilities[c]
				if !ok {
					bad(fmt.Sprintf("tools.%s.capabilities: unknown capability %q; they are reads, writes, executes, network, content_from_source, overwrites, edits, searches_tree", name, c), "tools", name, "capabilities", i)
					okSpec = false
				}
				d.Caps |= cp
			}
			if okSpec {
				known[name] = where("tools", name)
				p.Tools = append(p.Tools, d)
				p.note("tools", name, where("tools", name))
			}
		}
		if o := f.Offer; o != nil {
			if o.RequireRegistered {
				p.Offer.RequireRegistered = true
				p.note("offer.require_registered", "true", where("offer", "require_registered"))
			}
			for i, t := range o.Unavailable {
				if !slices.Contains(p.Offer.Unavailable, t) {
					p.Offer.Unavailable = append(p.Offer.Unavailable, t)
				}
				p.note("offer.unavailable", t, where("offer", "unavailable", i))
			}
			for actor, globs := range o.Actors {
				for i, g := range globs {
					if _, err := path.Match(g, ""); err != nil {
						bad(fmt.Sprintf("offer.actors.%s: malformed glob %q", actor, g), "offer", "actors", actor, i)
					}
				}
				if p.Offer.Actors == nil {
					p.Offer.Actors = map[string][]string{}
				}
				if prev, ok := p.Offer.Actors[actor]; ok && !trusted {
					p.Offer.Actors[actor] = intersect(prev, globs)
				} else {
					p.Offer.Actors[actor] = slices.Clone(globs)
				}
				p.note("offer.actors."+actor, strings.Join(globs, ", "), where("offer", "actors", actor))
			}
		}
		for i, r := range f.Rules {
			w := where("rules", i)
			if !veto.ValidID(r.ID) {
				bad(fmt.Sprintf("rules[%d].id: %q must match [a-z][a-z0-9_.-]* and be at most 64 characters", i, r.ID), "rules", i, "id")
				continue
			}
			if prev, dup := ruleIDs[r.ID]; dup {
				bad(fmt.Sprintf("rules[%d].id: %q is already the id of a rule (%s)", i, r.ID, prev), "rules", i, "id")
				continue
			}
			ruleIDs[r.ID] = w
			if !veto.ValidID(r.Reason) {
				bad(fmt.Sprintf("rule %s: reason %q must match [a-z][a-z0-9_.-]* and be at most 64 characters", r.ID, r.Reason), "rules", i, "reason")
			}
			if strings.TrimSpace(r.Deny) == "" {
				bad(fmt.Sprintf("rule %s: deny is required: the CEL expression that is true when the call must be denied", r.ID), "rules", i)
				continue
			}
			for j, n := range r.Needs {
				if n != "complete_history" && n != "known_target" {
					bad(fmt.Sprintf("rule %s: needs %q is not known; needs are complete_history, known_target", r.ID, n), "rules", i, "needs", j)
				}
			}
			if r.Risk != "" {
				if _, err := veto.ParseRisk(r.Risk); err != nil || r.Risk == "none" {
					bad(fmt.Sprintf("rule %s: risk %q is not one of low, medium, high, critical", r.ID, r.Risk), "rules", i, "risk")
				}
			}
			if r.Match != nil {
				for _, g := range []string{r.Match.Tool, r.Match.Actor} {
					if _, err := path.Match(g, ""); err != nil {
						bad(fmt.Sprintf("rule %s: malformed match glob %q", r.ID, g), "rules", i, "match")
					}
				}
			}
			if compiler == nil {
				bad(fmt.Sprintf("rule %s: this program cannot compile CEL rules", r.ID), "rules", i)
				continue
			}
			compiled, err := compiler.Compile(r)
			if err != nil {
				n := find(l.doc, "rules", i, "deny")
				prob := at(l.Path, n, fmt.Sprintf("rule %s: %v", r.ID, err))
				if ce, ok := err.(*CompileError); ok && n != nil {
					prob.Line, prob.Col = exprPos(n, l.raw, ce.Line, ce.Col)
					prob.Msg = fmt.Sprintf("rule %s: %s", r.ID, ce.Msg)
				}
				probs = append(probs, prob)
				continue
			}
			p.Rules = append(p.Rules, UserRule{Spec: r, Rule: compiled, Where: w})
			p.note("rules", r.ID, w)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return p, nil
}

// exprPos maps a position inside an expression to the file: a plain or
// quoted scalar starts at its node; a block scalar (| or >) on the lines
// after its indicator, at their indentation.
func exprPos(n *yaml.Node, raw []byte, line, col int) (int, int) {
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		lines := strings.Split(string(raw), "\n")
		indent := 0
		if i := n.Line; i < len(lines) { // the first content line, 0-based index = node line
			indent = len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		}
		return n.Line + line, indent + col
	}
	if line > 1 {
		return n.Line + line - 1, col
	}
	offset := 0
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		offset = 1
	}
	return n.Line, n.Column + offset + col - 1
}

func (p *Policy) note(key, value, where string) {
	p.origins = append(p.origins, origin{key, value, where})
}

func cleanAll(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.HasPrefix(s, "/") {
			s = path.Clean(s)
		}
		out = append(out, s)
	}
	return out
}

// intersect keeps what both lists hold, in a's order.
func intersect(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func defaultTempDirs() []string {
	out := []string{}
	if t := os.Getenv("TMPDIR"); t != "" {
		out = append(out, path.Clean(t))
	}
	return append(out, "/tmp", "/var/tmp")
}

// Show lists the effective policy, a line per part, each with the file
// (and line and column) it came from; the built-in lists are summed up.
func (p *Policy) Show() []string {
	out := []string{
		fmt.Sprintf("files.protected: %d built-in pattern(s)", len(files.DefaultProtected)),
		fmt.Sprintf("files.persistence: %d built-in pattern(s)", len(files.DefaultPersistence)),
		fmt.Sprintf("files.credentials: %d built-in pattern(s)", len(files.DefaultCredentials)),
		"tools: the built-in descriptors (Claude Code, mcp__filesystem__*, mcp__git__*, mcp__fetch__fetch)",
	}
	for _, o := range p.origins {
		out = append(out, fmt.Sprintf("%s: %s    # %s", o.key, o.value, o.where))
	}
	return out
}
