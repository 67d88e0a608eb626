package policy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/glob"
	"github.com/vetohq/veto/rule"
	_ "github.com/vetohq/veto/rules" // every built-in family registers itself
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

	Off   map[string]string // built-in rule id → the file that turned it off
	Tools []veto.Descriptor // the built-in descriptors and those the files add
	Offer veto.Offer
	Rules []UserRule

	// Approve: hooks answer allow for the user (the user's file only).
	Approve bool

	// Monitor holds the rules in monitor mode, by id, each with the file
	// that put it there; MonitorAll, when set, is where the whole policy
	// was put in monitor mode (every rule but veto.control's).
	Monitor    map[string]string
	MonitorAll string

	// settings are each section's effective settings, by key: a pointer to
	// the type the section declared.
	settings map[string]any
	origins  []origin
}

// Effective returns the effective settings of the section with the key
// (files.FilesSection.Key, ...), which must be of type E.
func Effective[E any](p *Policy, key string) E {
	e, _ := p.settings[key].(*E)
	if e == nil {
		var zero E
		return zero
	}
	return *e
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

var roles = map[string]veto.Role{"path": veto.RolePath, "source_path": veto.RoleSourcePath, "moved_path": veto.RoleMoved,
	"url": veto.RoleURL, "command": veto.RoleCommand, "content": veto.RoleContent, "input": veto.RoleInput}

var capabilities = map[string]veto.Capability{"reads": veto.CapReads, "writes": veto.CapWrites, "executes": veto.CapExecutes,
	"network": veto.CapNetwork, "content_from_source": veto.CapContentFromSource, "overwrites": veto.CapOverwrites,
	"edits": veto.CapEdits, "searches_tree": veto.CapSearchesTree}

// merger folds layers into a Policy, collecting every problem.
type merger struct {
	p        *Policy
	compiler Compiler
	probs    Problems
	known    map[string]string // tool name → where described
	ruleIDs  map[string]string // rule id → where declared
}

// layer is one file being merged.
type layer struct {
	*merger
	l       *Layer
	trusted bool
}

func (m *layer) where(keys ...any) string {
	n := find(m.l.doc, keys...)
	if n == nil {
		return m.l.Path
	}
	return fmt.Sprintf("%s:%d:%d", m.l.Path, n.Line, n.Column)
}

func (m *layer) bad(msg string, keys ...any) {
	m.probs = append(m.probs, at(m.l.Path, find(m.l.doc, keys...), msg))
}

// Merge merges layers in order (the first must be the built-in one).
func Merge(layers []*Layer, compiler Compiler) (*Policy, error) {
	m := &merger{p: &Policy{Layers: layers, Off: map[string]string{}, Monitor: map[string]string{}, Tools: tools.Defaults(), settings: map[string]any{}},
		compiler: compiler, known: map[string]string{}, ruleIDs: map[string]string{}}
	for _, d := range m.p.Tools {
		m.known[d.Name] = "builtin"
	}
	for _, id := range rule.IDs() {
		m.ruleIDs[id] = "builtin"
	}
	for _, s := range rule.Sections() {
		m.p.settings[s.Key] = s.Initial()
	}
	for _, l := range layers {
		if l.Kind == KindBuiltin {
			continue
		}
		ly := &layer{merger: m, l: l, trusted: l.Kind == KindUser || l.Kind == KindRevision}
		ly.approve()
		ly.builtin()
		ly.monitor()
		ly.sections()
		ly.tools()
		ly.offer()
		ly.rules()
	}
	if len(m.probs) > 0 {
		return nil, m.probs
	}
	return m.p, nil
}

func (m *layer) approve() {
	if !m.l.File.Approve {
		return
	}
	if !m.trusted {
		m.bad(fmt.Sprintf("approve: only the user's policy may make veto approve calls, not the %s policy", m.l.Kind), "approve")
		return
	}
	m.p.Approve = true
	m.p.note("approve", "true", m.where("approve"))
}

func (m *layer) builtin() {
	if m.l.File.Builtin == nil {
		return
	}
	ids := rule.IDs()
	for i, id := range m.l.File.Builtin.Off {
		switch {
		case !slices.Contains(ids, id):
			msg := fmt.Sprintf("builtin.off: %q is not a built-in rule; veto policy default lists them", id)
			if near := nearest(id, ids); near != "" {
				msg = fmt.Sprintf("builtin.off: %q is not a built-in rule; did you mean %s?", id, near)
			}
			m.bad(msg, "builtin", "off", i)
		case !m.trusted:
			m.bad(fmt.Sprintf("builtin.off: only the user's policy may turn a built-in rule off, not the %s policy", m.l.Kind), "builtin", "off", i)
		default:
			m.p.Off[id] = m.where("builtin", "off", i)
			m.p.note("builtin.off", id, m.where("builtin", "off", i))
		}
	}
}

// The modes a policy, a family or a rule may be in.
const (
	ModeEnforce = "enforce"
	ModeMonitor = "monitor"
)

// monitor reads mode and monitor: which rules only record their
// refusals. Monitoring loosens the policy, so only a trusted file (the
// user's, a pushed revision) may ask for it; veto.control, which guards
// veto's own switches, is never monitored.
func (m *layer) monitor() {
	f := m.l.File
	switch f.Mode {
	case "", ModeEnforce:
	case ModeMonitor:
		if !m.trusted {
			m.bad(fmt.Sprintf("mode: only the user's policy or a pushed revision may put the policy in monitor mode, not the %s policy", m.l.Kind), "mode")
			break
		}
		m.p.MonitorAll = m.where("mode")
		m.p.note("mode", ModeMonitor, m.where("mode"))
	default:
		m.bad(fmt.Sprintf("mode: %q is not monitor or enforce", f.Mode), "mode")
	}
	for i, name := range f.Monitor {
		ids, ok := monitorable(name)
		switch {
		case name == "control" || name == "veto.control":
			m.bad("monitor: veto.control guards veto itself and is always enforced", "monitor", i)
		case !ok:
			m.bad(fmt.Sprintf("monitor: %q is neither a rule family nor a built-in rule; veto policy default lists them", name), "monitor", i)
		case !m.trusted:
			m.bad(fmt.Sprintf("monitor: only the user's policy or a pushed revision may put rules in monitor mode, not the %s policy", m.l.Kind), "monitor", i)
		default:
			for _, id := range ids {
				m.p.Monitor[id] = m.where("monitor", i)
			}
			m.p.note("monitor", name, m.where("monitor", i))
		}
	}
}

// monitorable returns the built-in rules a name in monitor: stands for:
// a family's, or the one rule of that id.
func monitorable(name string) ([]string, bool) {
	for _, f := range rule.Families() {
		if f.Name == name {
			var ids []string
			for _, r := range f.Rules {
				ids = append(ids, r.ID)
			}
			return ids, true
		}
		for _, r := range f.Rules {
			if r.ID == name {
				return []string{name}, true
			}
		}
	}
	return nil, false
}

// nearest returns the id in ids closest to s, when it is a likely
// misspelling of it (at most a third of its letters off), else "".
func nearest(s string, ids []string) string {
	best, bestD := "", len(s)/3+1
	for _, id := range ids {
		if d := distance(s, id); d < bestD {
			best, bestD = id, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sections merges each rule family's section the file writes, by the
// section's own code.
func (m *layer) sections() {
	for _, s := range rule.Sections() {
		f, ok := m.l.File.Sections[s.Key]
		if !ok {
			continue
		}
		s.Merge(m.p.settings[s.Key], f, &rule.Layer{Kind: m.l.Kind, Trusted: m.trusted, Section: s.Key,
			Report: m.bad,
			Origin: func(key, value string, keys ...any) { m.p.note(key, value, m.where(keys...)) }})
	}
}

func (m *layer) tools() {
	for _, name := range slices.Sorted(maps.Keys(m.l.File.Tools)) {
		spec := m.l.File.Tools[name]
		// The user's file may redescribe a built-in tool (veto's
		// description of an MCP server may lag behind the server); no file
		// may change what another file described.
		prev, known := m.known[name]
		if known && (prev != "builtin" || !m.trusted) {
			m.bad(fmt.Sprintf("tools: %q is already described (%s); a later policy cannot change a tool's description", name, prev), "tools", name)
			continue
		}
		d := veto.Descriptor{Name: name, Params: map[string]veto.Role{}, TrustZones: spec.TrustZones}
		okSpec := true
		for param, role := range spec.Params {
			r, ok := roles[role]
			if !ok {
				m.bad(fmt.Sprintf("tools.%s.params.%s: unknown role %q; roles are path, source_path, moved_path, url, command, content, input", name, param, role), "tools", name, "params", param)
				okSpec = false
			}
			d.Params[param] = r
		}
		for i, c := range spec.Capabilities {
			cp, ok := capabilities[c]
			if !ok {
				m.bad(fmt.Sprintf("tools.%s.capabilities: unknown capability %q; they are reads, writes, executes, network, content_from_source, overwrites, edits, searches_tree", name, c), "tools", name, "capabilities", i)
				okSpec = false
			}
			d.Caps |= cp
		}
		if okSpec {
			m.known[name] = m.where("tools", name)
			m.p.Tools = slices.DeleteFunc(m.p.Tools, func(t veto.Descriptor) bool { return t.Name == name })
			m.p.Tools = append(m.p.Tools, d)
			m.p.note("tools", name, m.where("tools", name))
		}
	}
}

func (m *layer) offer() {
	o := m.l.File.Offer
	if o == nil {
		return
	}
	if o.RequireRegistered {
		m.p.Offer.RequireRegistered = true
		m.p.note("offer.require_registered", "true", m.where("offer", "require_registered"))
	}
	for i, t := range o.Unavailable {
		if !slices.Contains(m.p.Offer.Unavailable, t) {
			m.p.Offer.Unavailable = append(m.p.Offer.Unavailable, t)
		}
		m.p.note("offer.unavailable", t, m.where("offer", "unavailable", i))
	}
	for actor, globs := range o.Actors {
		for i, g := range globs {
			if g != "" && glob.CheckName(g) != nil {
				m.bad(fmt.Sprintf("offer.actors.%s: malformed glob %q", actor, g), "offer", "actors", actor, i)
			}
		}
		if m.p.Offer.Actors == nil {
			m.p.Offer.Actors = map[string][]string{}
		}
		if prev, ok := m.p.Offer.Actors[actor]; ok && !m.trusted {
			m.p.Offer.Actors[actor] = rule.Shorten(&rule.Layer{}, prev, globs, func() []string { return []string{} })
		} else {
			m.p.Offer.Actors[actor] = slices.Clone(globs)
		}
		m.p.note("offer.actors."+actor, strings.Join(globs, ", "), m.where("offer", "actors", actor))
	}
}

func (m *layer) rules() {
	for i, r := range m.l.File.Rules {
		if !m.checkRule(i, r) {
			continue
		}
		w := m.where("rules", i)
		if m.compiler == nil {
			m.bad(fmt.Sprintf("rule %s: this program cannot compile CEL rules", r.ID), "rules", i)
			continue
		}
		compiled, err := m.compiler.Compile(r)
		if err != nil {
			n := find(m.l.doc, "rules", i, r.ExprKey())
			prob := at(m.l.Path, n, fmt.Sprintf("rule %s: %v", r.ID, err))
			if ce, ok := err.(*CompileError); ok && n != nil {
				prob.Line, prob.Col = exprPos(n, m.l.raw, ce.Line, ce.Col)
				prob.Msg = fmt.Sprintf("rule %s: %s", r.ID, ce.Msg)
			}
			m.probs = append(m.probs, prob)
			continue
		}
		m.p.Rules = append(m.p.Rules, UserRule{Spec: r, Rule: compiled, Where: w})
		m.p.note("rules", r.ID, w)
		if r.Mode == ModeMonitor {
			// A file's own rule: monitoring it loosens nothing another
			// file wrote.
			m.p.Monitor[r.ID] = m.where("rules", i, "mode")
			m.p.note("rules."+r.ID+".mode", ModeMonitor, m.where("rules", i, "mode"))
		}
	}
}

// checkRule validates a user rule's declaration; false when it cannot be
// compiled at all.
func (m *layer) checkRule(i int, r RuleSpec) bool {
	if !veto.ValidID(r.ID) {
		m.bad(fmt.Sprintf("rules[%d].id: %q must match [a-z][a-z0-9_.-]* and be at most 64 characters", i, r.ID), "rules", i, "id")
		return false
	}
	if prev, dup := m.ruleIDs[r.ID]; dup {
		m.bad(fmt.Sprintf("rules[%d].id: %q is already the id of a rule (%s)", i, r.ID, prev), "rules", i, "id")
		return false
	}
	m.ruleIDs[r.ID] = m.where("rules", i)
	if !veto.ValidID(r.Reason) {
		m.bad(fmt.Sprintf("rule %s: reason %q must match [a-z][a-z0-9_.-]* and be at most 64 characters", r.ID, r.Reason), "rules", i, "reason")
	}
	if strings.TrimSpace(r.Deny) == "" && strings.TrimSpace(r.Ask) == "" {
		m.bad(fmt.Sprintf("rule %s: deny is required: the CEL expression that is true when the call must be denied (or ask, when a person must approve it)", r.ID), "rules", i)
		return false
	}
	if strings.TrimSpace(r.Deny) != "" && strings.TrimSpace(r.Ask) != "" {
		m.bad(fmt.Sprintf("rule %s: deny and ask go alone: a rule denies or asks for a person", r.ID), "rules", i, "ask")
		return false
	}
	for j, n := range r.Needs {
		if n != "complete_history" && n != "known_target" {
			m.bad(fmt.Sprintf("rule %s: needs %q is not known; needs are complete_history, known_target", r.ID, n), "rules", i, "needs", j)
		}
	}
	if r.Mode != "" && r.Mode != ModeMonitor && r.Mode != ModeEnforce {
		m.bad(fmt.Sprintf("rule %s: mode %q is not monitor or enforce", r.ID, r.Mode), "rules", i, "mode")
	}
	if r.Risk != "" {
		if _, err := veto.ParseRisk(r.Risk); err != nil || r.Risk == "none" {
			m.bad(fmt.Sprintf("rule %s: risk %q is not one of low, medium, high, critical", r.ID, r.Risk), "rules", i, "risk")
		}
	}
	if r.Match != nil {
		for _, g := range []string{r.Match.Tool, r.Match.Actor} {
			if g != "" && glob.CheckName(g) != nil {
				m.bad(fmt.Sprintf("rule %s: malformed match glob %q", r.ID, g), "rules", i, "match")
			}
		}
	}
	return true
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

// Show lists the effective policy, a line per part, each with the file
// (and line and column) it came from; the built-in lists are summed up.
func (p *Policy) Show() []string {
	var out []string
	for _, s := range rule.Sections() {
		if s.Show != nil {
			out = append(out, s.Show()...)
		}
	}
	out = append(out, "tools: the built-in descriptors (Claude Code, mcp__filesystem__*, mcp__git__*, mcp__fetch__fetch)")
	for _, o := range p.origins {
		out = append(out, fmt.Sprintf("%s: %s    # %s", o.key, o.value, o.where))
	}
	return out
}
