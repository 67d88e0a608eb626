// Package opabench holds veto's path-only file rules written in Rego and
// evaluated by OPA's prepared queries, to compare with veto's native rules
// (package rules/files) for agreement and for cost.
//
// Only the checks that are pure functions of the call's resolved paths and
// its tool are here: write roots, protected paths, persistence targets and
// credentials (read, written, and tree searches). The rules that depend on
// the run's state or on the disk (stale, read before write, reference
// exists) and on git configuration (core.hooksPath) stay native.
package opabench

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/rules/files"
)

//go:embed policy.rego
var policySource string

// Query is the rule the policy decides with.
const Query = "data.veto.policy.files.decision"

// Config is what the policy's data is built from. Lists left nil take
// veto's defaults (files.DefaultProtected and the others).
type Config struct {
	// Home is the user's home directory, for "~/" patterns. Required.
	Home string
	// Roots are the write roots besides the workspace (the temporary
	// directories and the extra roots), as real absolute paths.
	Roots []string
	// Tools are the descriptors; nil means none, and every call is allowed.
	Tools []veto.Descriptor

	Protected, Persistence, Credentials []string

	// GlobsOnly puts every pattern in the glob list, where the policy
	// matches them one glob.match at a time. By default the patterns are
	// indexed by shape first (exact paths, directory trees, file names),
	// as veto's own matcher does, and only the rest are globs.
	GlobsOnly bool
}

// Decision is the policy's answer, in veto's terms.
type Decision struct {
	Allow  bool
	Rule   string // a veto rule id, empty when allowed
	Reason string // a veto reason code, empty when allowed
}

// Policy is the prepared query.
type Policy struct {
	pq    rego.PreparedEvalQuery
	tools map[string]*veto.Descriptor
}

// New builds the policy's data from cfg and prepares the query once.
func New(ctx context.Context, cfg Config) (*Policy, error) {
	data, err := Data(cfg)
	if err != nil {
		return nil, err
	}
	pq, err := prepare(ctx, Query, data)
	if err != nil {
		return nil, err
	}
	p := &Policy{pq: pq, tools: map[string]*veto.Descriptor{}}
	for i := range cfg.Tools {
		p.tools[cfg.Tools[i].Name] = &cfg.Tools[i]
	}
	return p, nil
}

// prepare compiles the policy with data under data.veto.files and
// prepares query on it.
func prepare(ctx context.Context, query string, data map[string]any) (rego.PreparedEvalQuery, error) {
	pq, err := rego.New(
		rego.Query(query),
		rego.Module("policy.rego", policySource),
		// The data is turned into OPA's AST once, here, instead of on
		// every read during evaluation.
		rego.Store(inmem.NewFromObjectWithOpts(map[string]any{"veto": map[string]any{"files": data}},
			inmem.OptReturnASTValuesOnRead(true))),
	).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("opabench: prepare: %w", err)
	}
	return pq, nil
}

// Data returns the data document the policy reads under data.veto.files.
func Data(cfg Config) (map[string]any, error) {
	if !strings.HasPrefix(cfg.Home, "/") {
		return nil, errors.New("opabench: home must be absolute")
	}
	out := map[string]any{"roots": strs(cfg.Roots)}
	credAnchors := []any{}
	for _, l := range []struct {
		name      string
		list, def []string
	}{
		{"protected", cfg.Protected, files.DefaultProtected},
		{"persistence", cfg.Persistence, files.DefaultPersistence},
		{"credentials", cfg.Credentials, files.DefaultCredentials},
	} {
		list := l.list
		if list == nil {
			list = l.def
		}
		include, exclude := newIndex(), newIndex()
		for _, src := range list {
			body, neg := strings.CutPrefix(src, "!")
			segs, err := patternSegs(body, cfg.Home)
			if err != nil {
				return nil, fmt.Errorf("opabench: %s: pattern %q: %w", l.name, src, err)
			}
			if neg {
				exclude.add(segs, cfg.GlobsOnly)
				continue
			}
			include.add(segs, cfg.GlobsOnly)
			if l.name == "credentials" {
				if a, ok := anchor(segs); ok {
					credAnchors = append(credAnchors, a)
				}
			}
		}
		out[l.name] = map[string]any{"include": include.data(), "exclude": exclude.data()}
	}
	out["credential_anchors"] = credAnchors
	tools := map[string]any{}
	for _, d := range cfg.Tools {
		params := map[string]any{}
		for name, role := range d.Params {
			switch role {
			case veto.RolePath:
				params[name] = "write"
			case veto.RoleSourcePath:
				params[name] = "read"
			case veto.RoleMoved:
				params[name] = "moved"
			}
		}
		if len(params) > 0 {
			tools[d.Name] = map[string]any{"params": params, "searches_tree": d.Has(veto.CapSearchesTree)}
		}
	}
	out["tools"] = tools
	return out, nil
}

// patternSegs turns one of veto's patterns (without its "!") into the
// segments of an absolute pattern, as files.New does: "~/" is the home
// directory, and a relative pattern matches at any depth.
func patternSegs(body, home string) ([]string, error) {
	switch {
	case body == "":
		return nil, errors.New("empty pattern")
	case body == "~" || strings.HasPrefix(body, "~/"):
		body = home + body[1:]
	case !strings.HasPrefix(body, "/"):
		body = "**/" + body
	}
	if body == "/" {
		return nil, nil
	}
	segs := strings.Split(strings.Trim(body, "/"), "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil || s == "" {
			return nil, fmt.Errorf("malformed segment %q", s)
		}
		// Character classes and escapes differ between path.Match and
		// OPA's globs ("[^…]" against "[!…]"), and braces mean
		// alternatives to OPA: veto's default lists use none of them.
		if strings.ContainsAny(s, `[]\{},`) {
			return nil, fmt.Errorf("segment %q: only *, ? and ** translate to a glob here", s)
		}
	}
	return segs, nil
}

// index is a pattern list sorted by shape, so that most patterns cost
// the policy a lookup instead of a glob.match.
type index struct {
	exact, base  map[string]any
	under, globs []any
}

func newIndex() *index {
	return &index{exact: map[string]any{}, base: map[string]any{}, under: []any{}, globs: []any{}}
}

// add files the absolute pattern segs: a literal path is exact, a literal
// directory followed by "**" is exact and under, "**" and a literal name
// is base, and anything else (or everything, with globsOnly) is a glob.
func (ix *index) add(segs []string, globsOnly bool) {
	literal := func(ss []string) bool {
		for _, s := range ss {
			if s == "**" || strings.ContainsAny(s, globMeta) {
				return false
			}
		}
		return true
	}
	n := len(segs)
	switch {
	case globsOnly || n == 0:
	case segs[0] != "**" && literal(segs):
		ix.exact["/"+strings.Join(segs, "/")] = true
		return
	case n > 1 && segs[0] != "**" && segs[n-1] == "**" && literal(segs[:n-1]):
		dir := "/" + strings.Join(segs[:n-1], "/")
		ix.exact[dir] = true
		ix.under = append(ix.under, dir+"/")
		return
	case n == 2 && segs[0] == "**" && literal(segs[1:]):
		ix.base[segs[1]] = true
		return
	}
	ix.globs = append(ix.globs, globOf(segs))
}

func (ix *index) data() map[string]any {
	return map[string]any{"exact": ix.exact, "base": ix.base, "under": ix.under, "globs": ix.globs}
}

// globMeta are the characters that make a segment a glob.
const globMeta = "*?[\\"

// globOf writes segments as an OPA glob with "/" as the delimiter. In
// veto's patterns "**" is any number of whole segments, none included; in
// a glob "**" is any run of characters, so a "**" segment becomes
// "{,/**}": nothing, or a slash and anything. "*" and "?" stay within a
// segment in both.
func globOf(segs []string) string {
	if len(segs) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, s := range segs {
		if s == "**" {
			b.WriteString("{,/**}")
			continue
		}
		b.WriteString("/")
		b.WriteString(s)
	}
	return b.String()
}

// anchor returns the fixed leading directory of an absolute pattern:
// "/home/u/.ssh" for "/home/u/.ssh/**". A search of a tree holding it
// reads what the pattern protects.
func anchor(segs []string) (string, bool) {
	var fixed []string
	for _, s := range segs {
		if strings.ContainsAny(s, globMeta) {
			break
		}
		fixed = append(fixed, s)
	}
	if len(fixed) == 0 {
		return "", false
	}
	return "/" + strings.Join(fixed, "/"), true
}

func strs(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// Env is where a call's paths are resolved.
type Env struct {
	Cwd  string // absolute
	Home string // absolute
}

// Input builds the policy's input for a call: every string argument of a
// path role, resolved lexically (see Resolve). workspace is the call's
// workspace, empty when unknown.
func (p *Policy) Input(tool string, args map[string]any, workspace string, env Env) (map[string]any, error) {
	paths := []any{}
	if d := p.tools[tool]; d != nil {
		for _, name := range slices.Sorted(maps.Keys(d.Params)) {
			if role := d.Params[name]; role != veto.RolePath && role != veto.RoleSourcePath && role != veto.RoleMoved {
				continue
			}
			var raws []string
			switch v := args[name].(type) {
			case string:
				raws = []string{v}
			case []any:
				for _, e := range v {
					if s, ok := e.(string); ok {
						raws = append(raws, s)
					}
				}
			}
			for _, raw := range raws {
				abs, err := Resolve(raw, env)
				if err != nil {
					return nil, fmt.Errorf("opabench: %s: %w", name, err)
				}
				forms := []any{abs}
				paths = append(paths, map[string]any{"param": name, "real": forms, "forms": forms})
			}
		}
	}
	in := map[string]any{"tool": tool, "paths": paths}
	if workspace != "" {
		in["workspace"] = workspace
	}
	return in, nil
}

// Resolve makes raw absolute and clean the way veto's toolpath does for a
// path with no symbolic link on its way: "~", "$HOME" and "${HOME}" at the
// start are the home directory, "file://" URLs name their path, a
// relative path is joined to the cwd, and "..", "." and repeated slashes
// are resolved lexically. "~user" is not supported. With no symbolic
// links, veto's three forms of the path (real, cleaned, lexical) are this
// one string.
func Resolve(raw string, env Env) (string, error) {
	if raw == "" || strings.IndexByte(raw, 0) >= 0 {
		return "", errors.New("empty path or NUL byte")
	}
	if rest, ok := strings.CutPrefix(raw, "file://"); ok {
		if !strings.HasPrefix(rest, "/") {
			return "", errors.New("file URL without a local absolute path")
		}
		raw = rest
	}
	switch {
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		raw = env.Home + raw[1:]
	case strings.HasPrefix(raw, "~"):
		return "", errors.New("~user is not supported")
	case raw == "$HOME" || strings.HasPrefix(raw, "$HOME/"):
		raw = env.Home + raw[len("$HOME"):]
	case raw == "${HOME}" || strings.HasPrefix(raw, "${HOME}/"):
		raw = env.Home + raw[len("${HOME}"):]
	case !strings.HasPrefix(raw, "/"):
		if !strings.HasPrefix(env.Cwd, "/") {
			return "", errors.New("relative path without an absolute cwd")
		}
		raw = env.Cwd + "/" + raw
	}
	if !strings.HasPrefix(raw, "/") {
		return "", errors.New("home directory unknown")
	}
	return path.Clean(raw), nil
}

// Decide evaluates the prepared query on input.
func (p *Policy) Decide(ctx context.Context, input map[string]any) (Decision, error) {
	rs, err := p.pq.Eval(ctx, rego.EvalInput(input))
	if err != nil {
		return Decision{}, err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return Decision{}, fmt.Errorf("opabench: %d results", len(rs))
	}
	m, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("opabench: decision is %T", rs[0].Expressions[0].Value)
	}
	d := Decision{}
	d.Allow, _ = m["allow"].(bool)
	d.Rule, _ = m["rule"].(string)
	d.Reason, _ = m["reason"].(string)
	if !d.Allow && (d.Rule == "" || d.Reason == "") {
		return Decision{}, fmt.Errorf("opabench: malformed decision %v", m)
	}
	return d, nil
}
