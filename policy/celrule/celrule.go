// Package celrule compiles veto's user rules, written in CEL, once, and
// evaluates them per call with a cost budget, failing closed: an
// evaluation error or an exhausted budget is an error, which the gate
// turns into rule_failed. It is the only package that links cel-go.
package celrule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"runtime"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/glob"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/toolpath"
)

// DefaultBudget is the cost a rule may spend on one call.
const DefaultBudget = 100_000

// Compiler compiles user rules in one CEL environment, built once.
type Compiler struct {
	env    *cel.Env
	budget uint64
	fs     toolpath.FS
}

var _ policy.Compiler = (*Compiler)(nil)

// Option changes a Compiler.
type Option func(*options)

type options struct {
	budget uint64
	extra  []cel.EnvOption
	fs     toolpath.FS
	fold   bool
}

// FoldCase sets whether path.under compares without case, as the file
// rules do on filesystems that ignore it. The default follows the
// operating system, as files.Config's does (macOS and Windows fold).
func FoldCase(fold bool) Option { return func(o *options) { o.fold = fold } }

// FS sets the filesystem the workspace variable is found on; the default
// is the live one. Replay gives toolpath.Lexical.
func FS(fs toolpath.FS) Option { return func(o *options) { o.fs = fs } }

// Budget sets the cost a rule may spend on one call.
func Budget(n uint64) Option { return func(o *options) { o.budget = n } }

// Functions adds CEL functions, for programs that embed veto.
func Functions(fns ...cel.EnvOption) Option {
	return func(o *options) { o.extra = append(o.extra, fns...) }
}

// New builds the environment: the variables a rule sees and veto's helper
// functions.
//
// Variables: tool (string), args (map), actor (map: kind, id, agent), run
// (map: ref, prior_turns, prior_calls, retries, fresh), target (map: kind,
// id, known), history (list of maps: call_id, tool, outcome, target_kind,
// target_id), history_complete (bool), knowledge (map: files, a list of
// paths the run has read or written), workspace and cwd (strings).
//
// Functions: CEL's standard ones and its strings extension (lowerAscii,
// split, replace, …), and veto's helpers, each the Go code the built-in
// rules use: path.under(p, root) (both cleaned, then toolpath.Within,
// without case where the file rules fold it: see FoldCase),
// glob(pattern, s) (glob.Path: path.Match per segment, ** for any
// number of segments, as the file patterns match), host(url) (egress.Parse: the host a client would connect
// to, as the egress rule reads it; an error when egress cannot read one,
// so a rule that depends on it denies rule_failed).
func New(opts ...Option) (*Compiler, error) {
	o := options{budget: DefaultBudget, fold: runtime.GOOS == "darwin" || runtime.GOOS == "windows"}
	for _, f := range opts {
		f(&o)
	}
	mapStrDyn := cel.MapType(cel.StringType, cel.DynType)
	envOpts := []cel.EnvOption{
		cel.Variable("tool", cel.StringType),
		cel.Variable("args", mapStrDyn),
		cel.Variable("actor", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("run", mapStrDyn),
		cel.Variable("target", mapStrDyn),
		cel.Variable("history", cel.ListType(mapStrDyn)),
		cel.Variable("history_complete", cel.BoolType),
		cel.Variable("knowledge", mapStrDyn),
		cel.Variable("workspace", cel.StringType),
		cel.Variable("cwd", cel.StringType),
		cel.Function("path.under", cel.Overload("path_under_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				return types.Bool(under(a.(types.String).Value().(string), b.(types.String).Value().(string), o.fold))
			}))),
		cel.Function("glob", cel.Overload("glob_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				return types.Bool(glob.Path(a.(types.String).Value().(string), b.(types.String).Value().(string)))
			}))),
		cel.Function("host", cel.Overload("host_string", []*cel.Type{cel.StringType}, cel.StringType,
			cel.UnaryBinding(func(a ref.Val) ref.Val {
				h, err := hostOf(a.(types.String).Value().(string))
				if err != nil {
					return types.NewErr("%s", err)
				}
				return types.String(h)
			}))),
	}
	envOpts = append(envOpts, ext.Strings())
	env, err := cel.NewEnv(append(envOpts, o.extra...)...)
	if err != nil {
		return nil, err
	}
	return &Compiler{env: env, budget: o.budget, fs: o.fs}, nil
}

// Compile type-checks the rule's deny expression, which must be a bool,
// and returns the rule.
func (c *Compiler) Compile(r policy.RuleSpec) (veto.Rule, error) {
	key := r.ExprKey()
	ast, iss := c.env.Compile(r.Expr())
	if iss != nil && iss.Err() != nil {
		errs := iss.Errors()
		if len(errs) > 0 {
			e := errs[0]
			msg := e.Message
			if strings.Contains(msg, "mismatched input '<EOF>'") {
				msg = "the expression ends too early: an operand or a closing bracket is missing"
			} else if strings.HasPrefix(msg, "Syntax error: ") {
				msg = "syntax error: " + strings.TrimPrefix(msg, "Syntax error: ")
			}
			return nil, &policy.CompileError{Line: e.Location.Line(), Col: e.Location.Column() + 1, Msg: key + ": " + msg}
		}
		return nil, &policy.CompileError{Line: 1, Col: 1, Msg: key + ": " + iss.Err().Error()}
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, &policy.CompileError{Line: 1, Col: 1, Msg: fmt.Sprintf("%s must be true or false, and this expression is %s", key, ast.OutputType())}
	}
	prg, err := c.env.Program(ast, cel.CostLimit(c.budget), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, &policy.CompileError{Line: 1, Col: 1, Msg: key + ": " + err.Error()}
	}
	info := veto.RuleInfo{ID: r.ID, Risk: veto.RiskMapping{Default: veto.RiskMedium}}
	if r.Risk != "" {
		info.Risk.Default, _ = veto.ParseRisk(r.Risk)
	}
	for _, n := range r.Needs {
		switch n {
		case "complete_history":
			info.Needs.CompleteHistory = true
		case "known_target":
			info.Needs.KnownTarget = true
		}
	}
	rule := &Rule{info: info, prg: prg, reason: r.Reason, message: r.Message, expr: r.Expr(), ask: key == "ask", fs: c.fs}
	if r.Match != nil {
		rule.tool, rule.actor = r.Match.Tool, r.Match.Actor
	}
	return rule, nil
}

// Rule is a compiled user rule.
type Rule struct {
	info                  veto.RuleInfo
	prg                   cel.Program
	reason, message, expr string
	ask                   bool // a question for a person, not a denial
	tool, actor           string
	fs                    toolpath.FS
}

// Info implements veto.Rule.
func (r *Rule) Info() veto.RuleInfo { return r.info }

// ErrNotBool is the error of an expression that did not yield true or
// false at run time.
var ErrNotBool = errors.New("celrule: the deny expression did not yield true or false")

// AppliesTo implements veto.Scoped: the rule's match.
func (r *Rule) AppliesTo(c *veto.Call) bool {
	if r.tool != "" && !glob.Name(r.tool, c.Tool) {
		return false
	}
	return r.actor == "" || glob.Name(r.actor, c.Actor.Kind+":"+c.Actor.ID)
}

// Check implements veto.Rule: a true deny expression denies.
func (r *Rule) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	if !r.AppliesTo(in.Call) {
		return veto.Allow(), nil
	}
	act := in.Memo(activationKey{}, func() any { return &activation{ctx: ctx, in: in, vals: map[string]any{}, fs: r.fs} }).(*activation)
	out, _, err := r.prg.ContextEval(ctx, act)
	if act.err != nil {
		return veto.Decision{}, act.err
	}
	if err != nil {
		return veto.Decision{}, fmt.Errorf("celrule %s: %w", r.info.ID, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return veto.Decision{}, ErrNotBool
	}
	if b {
		msg := r.message
		if msg == "" {
			msg = "Rule " + r.info.ID + " refused this call."
		}
		if r.ask {
			if r.message == "" {
				msg = "Rule " + r.info.ID + " asks for a person's approval of this call."
			}
			return veto.Ask(r.reason, msg), nil
		}
		return veto.Deny(r.reason, msg), nil
	}
	return veto.Allow(), nil
}

type activationKey struct{}

// activation is what every CEL rule of one decision sees: each variable
// is built the first time a rule reads it, once for all of them.
type activation struct {
	ctx  context.Context
	in   *veto.Input
	vals map[string]any
	err  error
	fs   toolpath.FS
}

func (a *activation) Parent() interpreter.Activation { return nil }

func (a *activation) ResolveName(name string) (any, bool) {
	if v, ok := a.vals[name]; ok {
		return v, true
	}
	c := a.in.Call
	var v any
	switch name {
	case "tool":
		v = c.Tool
	case "args":
		args := celValue(c.Args)
		if args == nil {
			args = map[string]any{}
		}
		v = args
	case "actor":
		v = map[string]string{"kind": c.Actor.Kind, "id": c.Actor.ID, "agent": c.Actor.Agent}
	case "run":
		v = map[string]any{"ref": c.Run.Ref, "prior_turns": int64(c.Run.PriorTurns), "prior_calls": int64(c.Run.PriorCalls),
			"retries": int64(c.Run.Retries), "fresh": c.Run.Fresh}
	case "target":
		v = map[string]any{"kind": a.in.Target.Kind, "id": a.in.Target.ID, "known": a.in.Target.Known()}
	case "history":
		h := make([]map[string]any, 0, a.in.History.Len())
		for _, o := range a.in.History.All() {
			h = append(h, map[string]any{"call_id": o.CallID, "tool": o.Tool, "outcome": string(o.Outcome),
				"target_kind": o.Target.Kind, "target_id": o.Target.ID})
		}
		v = h
	case "history_complete":
		v = a.in.History.Complete()
	case "knowledge":
		files := []string{}
		if l := a.in.Knowledge; l != nil {
			var err error
			if files, err = l.Files(a.ctx); err != nil {
				a.err = err
				return nil, false
			}
		}
		v = map[string]any{"files": files}
	case "workspace":
		v = workspaceOf(c, a.fs)
	case "cwd":
		v = c.Cwd
	default:
		return nil, false
	}
	a.vals[name] = v
	return v, true
}

// celValue converts decoded JSON to what CEL compares: json.Number to an
// int or a float.
func celValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case int:
		return int64(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = celValue(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = celValue(e)
		}
		return s
	}
	return v
}

// under is path.under: p is root or below it, both cleaned first, as
// toolpath.Within judges a canonical path (without case when fold).
func under(p, root string, fold bool) bool {
	return toolpath.Within(path.Clean(p), path.Clean(root), fold)
}

// ErrNoHost is host()'s error for a string in which egress reads no host:
// the rule that asked denies rule_failed, so no spelling the egress rule
// refuses can reach a user rule as a harmless host.
var ErrNoHost = errors.New("host(): no host veto can read")

// hostOf is host(): the host egress.Parse reads, as the egress rule
// judges it (IDNA mapped, case folded, percent-decoded, the address of
// any IPv4 spelling, no port, IPv6 without brackets).
func hostOf(s string) (string, error) {
	h, err := egress.Parse(s)
	if err != nil || !h.Addr.IsValid() && h.Name == "" {
		return "", ErrNoHost
	}
	if h.Addr.IsValid() {
		return h.Addr.String(), nil
	}
	return h.Name, nil
}

// workspaceOf is the call's workspace as the file rules see it: the
// directory the client reports, else the git top level of the cwd, else
// the cwd; "" when there is no cwd.
func workspaceOf(c *veto.Call, fs toolpath.FS) string {
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Workspace
	}
	if cwd == "" {
		return ""
	}
	env := toolpath.LiveEnv(cwd)
	if fs != nil {
		env.FS = fs
	}
	ws, err := toolpath.Workspace(c.Workspace, env)
	if err != nil {
		return ""
	}
	return ws
}
