package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rule"
	"github.com/vetohq/veto/toolpath"
)

// BuildOptions are what a gate needs besides its policy.
type BuildOptions struct {
	Store     veto.Store
	Logger    *slog.Logger
	Probe     veto.Probe        // nil: the live filesystem
	Home      string            // "" : $HOME
	Vars      map[string]string // the shell analyzer's variables; nil: HOME, TMPDIR, USER from the environment
	LiveTools func(ctx context.Context) ([]string, error)
	Now       func() time.Time
	// FS is what paths are resolved on; nil means the live filesystem.
	// Replay gives toolpath.Lexical.
	FS toolpath.FS
	// TempDirs, when not nil, replace the policy's temporary directories
	// (veto test decides in a scratch directory).
	TempDirs []string
	// Supervisor and Supervising are rule.Build's: how this process runs
	// a command under veto exec, and whether the gate decides for one.
	Supervisor  []string
	Supervising bool
	// Supervision, when set, is filled in as rule.Build's is.
	Supervision *rule.Supervision
}

// Gate builds the gate the policy describes: every registered family's
// rules in the families' order (the command rules, net.egress, the file
// rules, the sequence rules), less the built-in rules turned off, then the
// user rules.
func (p *Policy) Gate(o BuildOptions) (*veto.Gate, error) {
	b := rule.NewBuild(p.settings)
	b.Home, b.TempDirs, b.Vars, b.FS, b.Now = o.Home, o.TempDirs, o.Vars, o.FS, o.Now
	b.Supervisor, b.Supervising, b.Supervision = o.Supervisor, o.Supervising, o.Supervision
	if b.Vars == nil && o.Home != "" {
		b.Vars = map[string]string{"HOME": o.Home, "TMPDIR": "/tmp"}
	}
	if o.FS != nil {
		// Off the live filesystem, the user database is off limits too.
		b.LookupHome = func(string) (string, error) { return "", errors.New("policy: no user database here") }
	}
	if b.Home == "" {
		b.Home, _ = os.UserHomeDir()
	}
	byName := make(map[string]*veto.Descriptor, len(p.Tools))
	for i := range p.Tools {
		byName[p.Tools[i].Name] = &p.Tools[i]
	}
	b.Tool = func(n string) *veto.Descriptor { return byName[n] }
	if err := b.Run(); err != nil {
		return nil, err
	}
	var reg rule.Registry
	for _, r := range b.Rules {
		if _, off := p.Off[r.Info().ID]; !off {
			if err := reg.Register(r); err != nil {
				return nil, err
			}
		}
	}
	for _, u := range p.Rules {
		if err := reg.Register(u.Rule); err != nil {
			return nil, err
		}
	}
	monitor := p.monitored(reg.Rules())
	pr := o.Probe
	if pr == nil {
		pr = probe.Live{}
	}
	offer := p.Offer
	return veto.NewGate(veto.Config{
		Rules:       reg.Rules(),
		Resolvers:   b.Resolvers,
		Offer:       &offer,
		Tools:       p.Tools,
		Patchers:    b.Patchers,
		Probe:       pr,
		Learners:    b.Learners,
		Store:       o.Store,
		Logger:      o.Logger,
		PolicyTools: p.ToolNames(),
		LiveTools:   o.LiveTools,
		PolicyRev:   p.Revision(),
		Now:         o.Now,
		Monitor:     monitor,
	})
}

// monitored is the set of rules in monitor mode among rules: those named,
// or, with the whole policy in monitor mode, every one but veto.control.
func (p *Policy) monitored(rules []veto.Rule) map[string]bool {
	if p.MonitorAll == "" && len(p.Monitor) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, r := range rules {
		id := r.Info().ID
		if _, named := p.Monitor[id]; (named || p.MonitorAll != "") && id != "veto.control" {
			out[id] = true
		}
	}
	return out
}

// ToolNames are the tools the policy files name: the ones they describe
// and the literal names in offer lists. The floor checks that the runtime
// offers each.
func (p *Policy) ToolNames() []string {
	var out []string
	add := func(n string) {
		if n != "" && !strings.ContainsAny(n, "*?[") && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, l := range p.Layers {
		for name := range l.File.Tools {
			add(name)
		}
		if l.File.Offer != nil {
			for _, n := range l.File.Offer.Unavailable {
				add(n)
			}
			for _, globs := range l.File.Offer.Actors {
				for _, g := range globs {
					add(g)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Revision identifies the policy: a hash of every file's place and bytes.
func (p *Policy) Revision() string {
	h := sha256.New()
	for _, l := range p.Layers {
		h.Write([]byte(l.Kind + "\x00" + l.Path + "\x00"))
		h.Write(l.raw)
		h.Write([]byte{0})
	}
	return "p-" + hex.EncodeToString(h.Sum(nil))[:12]
}
