// Package sequence holds the rules over a run's history: decisions that
// depend on what the run already executed. Each declares that it needs a
// complete history, so the gate denies history_incomplete when the record
// cannot prove what ran.
package sequence

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/glob"
)

// Config configures the sequence rules. A zero field leaves its rule out.
type Config struct {
	// Private are file patterns (as files.protected takes them) for
	// private material: once the run has read one, no call may reach the
	// network (sequence.no_egress_after_private_read).
	Private []string
	Home    string // for "~/" patterns
	// MaxCalls bounds calls per run by tool name or glob ("mcp__github__*"):
	// every call the gate let through counts, whatever its outcome
	// (sequence.max_calls).
	MaxCalls map[string]int
	// MaxFailedWrites bounds the failed writes to one target per run: a
	// failed write may still have touched it (sequence.max_failed_writes).
	MaxFailedWrites int
	// Tool returns the descriptor of a tool in the history; nil for none.
	Tool func(name string) *veto.Descriptor
	// ShellHosts returns the hosts a call's command reaches (shell.egress's
	// reading); nil when commands are not judged.
	ShellHosts func(in *veto.Input) []string
	// Reads returns the canonical paths the call itself reads (files.Set's
	// Reads); nil when only the history counts.
	Reads func(ctx context.Context, in *veto.Input) ([]string, error)
}

// Rules compiles cfg into the rules it turns on.
func Rules(cfg Config) ([]veto.Rule, error) {
	if cfg.Tool == nil {
		cfg.Tool = func(string) *veto.Descriptor { return nil }
	}
	var out []veto.Rule
	if len(cfg.Private) > 0 {
		m, err := glob.Compile(cfg.Private, glob.Options{Home: cfg.Home})
		if err != nil {
			return nil, fmt.Errorf("sequence private patterns: %w", err)
		}
		out = append(out, &privateEgress{cfg: cfg, m: &m})
	}
	if len(cfg.MaxCalls) > 0 {
		var lims []limit
		for g, n := range cfg.MaxCalls {
			if glob.CheckName(g) != nil {
				return nil, fmt.Errorf("sequence max_calls: malformed tool glob %q", g)
			}
			if n < 0 {
				return nil, fmt.Errorf("sequence max_calls: %q: a limit cannot be negative", g)
			}
			lims = append(lims, limit{g, n})
		}
		slices.SortFunc(lims, func(a, b limit) int { return strings.Compare(a.glob, b.glob) })
		out = append(out, &maxCalls{lims: lims})
	}
	if cfg.MaxFailedWrites > 0 {
		out = append(out, &maxFailedWrites{cfg: cfg})
	}
	return out, nil
}

// Taint returns the observations that made the run private: the first
// read (or call that may have read: failed, pending, cancelled) of each
// file matching cfg.Private, by each tool. It is what veto explain shows
// as the run's taint.
func Taint(cfg Config, h *veto.History) ([]veto.Observation, error) {
	m, err := glob.Compile(cfg.Private, glob.Options{Home: cfg.Home})
	if err != nil {
		return nil, err
	}
	if cfg.Tool == nil {
		cfg.Tool = func(string) *veto.Descriptor { return nil }
	}
	return taint(context.Background(), cfg, &m, veto.HistoryTally(h), 0)
}

// taint reads the run's tally of file touches, never the whole history: the
// first touch of each file by each tool the gate let through.
func taint(ctx context.Context, cfg Config, m *glob.Set, t veto.Tally, max int) ([]veto.Observation, error) {
	touched, err := t.Files(ctx)
	if err != nil {
		return nil, err
	}
	var out []veto.Observation
	for _, o := range touched {
		if d := cfg.Tool(o.Tool); d != nil && !d.Has(veto.CapReads) && !d.Has(veto.CapSearchesTree) {
			continue // the tool does not read what it targets
		}
		if _, ok := m.Match(o.Target.ID, ""); ok {
			out = append(out, o)
			if max > 0 && len(out) >= max {
				break
			}
		}
	}
	return out, nil
}

// tallyOf is the input's tally, else its history added up.
func tallyOf(in *veto.Input) veto.Tally {
	if in.Tally != nil {
		return in.Tally
	}
	if in.History == nil {
		return veto.HistoryTally(&veto.History{})
	}
	return veto.HistoryTally(in.History)
}

type privateEgress struct {
	cfg Config
	m   *glob.Set
}

func (r *privateEgress) Info() veto.RuleInfo { return NoEgressAfterPrivate.RuleInfo() }

// egressCall reports whether the call reaches the network.
func (r *privateEgress) egressCall(in *veto.Input) bool {
	if in.Descriptor.Has(veto.CapNetwork) {
		return true
	}
	if dests, ok := egress.Destinations(in); !ok || len(dests) > 0 {
		return true
	}
	return r.cfg.ShellHosts != nil && len(r.cfg.ShellHosts(in)) > 0
}

func (r *privateEgress) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	if !r.egressCall(in) {
		return veto.Allow(), nil
	}
	// The call itself may read what it sends: cat secrets/key | curl -d @- …
	if r.cfg.Reads != nil {
		reads, err := r.cfg.Reads(ctx, in)
		if err != nil {
			return veto.Decision{}, err
		}
		for _, p := range reads {
			if _, ok := r.m.Match(p, ""); ok {
				return readWithEgress.Deny(), nil
			}
		}
	}
	t, err := taint(ctx, r.cfg, r.m, tallyOf(in), 1)
	if err != nil {
		return veto.Decision{}, err
	}
	if len(t) == 0 {
		return veto.Allow(), nil
	}
	return readBeforeEgress.Deny(t[0].CallID, t[0].Seq, t[0].Outcome), nil
}

// Taint implements veto.Tainter: the observations that taint the run, as
// data for the page's timeline.
func (r *privateEgress) Taint(ctx context.Context, in *veto.Input) ([]veto.Observation, error) {
	return taint(ctx, r.cfg, r.m, tallyOf(in), 0)
}

// Known implements veto.Knower: the run's taint, for veto explain.
func (r *privateEgress) Known(ctx context.Context, in *veto.Input) []string {
	t, err := r.Taint(ctx, in)
	if err != nil {
		return []string{"the run's taint could not be read"}
	}
	if len(t) == 0 {
		return []string{"the run has read no private material"}
	}
	out := make([]string, 0, len(t))
	for _, o := range t {
		out = append(out, fmt.Sprintf("private since call %s (event #%d, %s, %s)", o.CallID, o.Seq, o.Tool, o.Outcome))
	}
	return out
}

type limit struct {
	glob string
	n    int
}

type maxCalls struct{ lims []limit }

func (r *maxCalls) Info() veto.RuleInfo { return MaxCalls.RuleInfo() }

func (r *maxCalls) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	var counts map[string]int
	for _, l := range r.lims {
		if !glob.Name(l.glob, in.Call.Tool) {
			continue
		}
		if counts == nil {
			c, err := tallyOf(in).Calls(ctx)
			if err != nil {
				return veto.Decision{}, err
			}
			counts = c
		}
		n := 0
		for tool, c := range counts {
			if glob.Name(l.glob, tool) {
				n += c
			}
		}
		if n >= l.n {
			return tooManyCalls.Deny(n, l.glob), nil
		}
	}
	return veto.Allow(), nil
}

type maxFailedWrites struct{ cfg Config }

func (r *maxFailedWrites) Info() veto.RuleInfo { return MaxFailedWrites.RuleInfo() }

func (r *maxFailedWrites) Check(ctx context.Context, in *veto.Input) (veto.Decision, error) {
	if !in.Target.Known() || !(in.Descriptor.Has(veto.CapWrites)) {
		return veto.Allow(), nil
	}
	failed, err := tallyOf(in).Failed(ctx, in.Target)
	if err != nil {
		return veto.Decision{}, err
	}
	n := 0
	for tool, c := range failed {
		if d := r.cfg.Tool(tool); d != nil && !d.Has(veto.CapWrites) {
			continue
		}
		n += c
	}
	if n >= r.cfg.MaxFailedWrites {
		return tooManyFailed.Deny(n), nil
	}
	return veto.Allow(), nil
}

// AppliesTo scopes max_calls to the tools its globs name, so an
// incomplete history denies only those.
func (r *maxCalls) AppliesTo(c *veto.Call) bool {
	for _, l := range r.lims {
		if glob.Name(l.glob, c.Tool) {
			return true
		}
	}
	return false
}
