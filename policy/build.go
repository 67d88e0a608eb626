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
	"github.com/vetohq/veto/egress"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rules/command"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/rules/network"
	"github.com/vetohq/veto/rules/sequence"
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
}

// Gate builds the gate the policy describes: the command rules, the file
// rules and the user rules, in that order, less the built-in rules turned
// off.
func (p *Policy) Gate(o BuildOptions) (*veto.Gate, error) {
	vars := o.Vars
	if vars == nil && o.Home != "" {
		vars = map[string]string{"HOME": o.Home, "TMPDIR": "/tmp"}
	}
	allow, err := egress.ParseList(p.EgressAllow)
	if err != nil {
		return nil, err
	}
	netCfg := network.Config{Mode: p.EgressMode, Allow: allow}
	cmds, err := command.New(command.Config{Vars: vars, Interpreters: p.Interpreters, MaxDepth: p.MaxDepth, DefaultTimeout: p.DefaultTimeout, Egress: netCfg})
	if err != nil {
		return nil, err
	}
	var lookupHome func(string) (string, error)
	if o.FS != nil {
		// Off the live filesystem, the user database is off limits too.
		lookupHome = func(string) (string, error) { return "", errors.New("policy: no user database here") }
	}
	fileSet, err := files.New(files.Config{
		LookupHome:  lookupHome,
		Home:        o.Home,
		TempDirs:    p.TempDirs,
		ExtraRoots:  p.ExtraRoots,
		Protected:   append(slices.Clone(files.DefaultProtected), p.Protected...),
		Persistence: append(slices.Clone(files.DefaultPersistence), p.Persistence...),
		Credentials: append(slices.Clone(files.DefaultCredentials), p.Credentials...),
		Manifest:    p.Manifest,
		WriteScopes: p.WriteScopes,
		Extractors:  []veto.PathExtractor{cmds.Paths()},
		Now:         o.Now,
		FS:          o.FS,
	})
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*veto.Descriptor, len(p.Tools))
	for i := range p.Tools {
		byName[p.Tools[i].Name] = &p.Tools[i]
	}
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	seq, err := sequence.Rules(sequence.Config{Private: p.Private, Home: home, MaxCalls: p.MaxCalls,
		MaxFailedWrites: p.MaxFailedWrites, Tool: func(n string) *veto.Descriptor { return byName[n] }, ShellHosts: cmds.Hosts,
		Reads: fileSet.Reads})
	if err != nil {
		return nil, err
	}
	var rules []veto.Rule
	for _, r := range slices.Concat(cmds.Rules(), []veto.Rule{network.Rule(netCfg)}, fileSet.Rules(), seq) {
		if _, off := p.Off[r.Info().ID]; !off {
			rules = append(rules, r)
		}
	}
	for _, u := range p.Rules {
		rules = append(rules, u.Rule)
	}
	var patchers []veto.Patcher
	if pt := cmds.Patcher(); pt != nil {
		patchers = append(patchers, pt)
	}
	pr := o.Probe
	if pr == nil {
		pr = probe.Live{}
	}
	offer := p.Offer
	return veto.NewGate(veto.Config{
		Rules:       rules,
		Resolvers:   []veto.Resolver{fileSet.Resolver()},
		Offer:       &offer,
		Tools:       p.Tools,
		Patchers:    patchers,
		Probe:       pr,
		Learners:    []veto.Learner{fileSet.Learner()},
		Store:       o.Store,
		Logger:      o.Logger,
		PolicyTools: p.ToolNames(),
		LiveTools:   o.LiveTools,
		PolicyRev:   p.Revision(),
		Now:         o.Now,
	})
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
