package opabench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/tools"
)

var ctx = context.Background()

// pureRules are the file rules that are a function of the resolved paths
// and the tool alone: the ones the Rego policy holds.
var pureRules = []string{"file.write_roots", "file.protected", "file.persistence", "file.credential"}

// world is a real directory tree, as rules/files' tests build it: a fake
// home, a git workspace, a temporary root and a place outside every root.
//
//	home/.ssh/{id_rsa,id_rsa.pub,config}  home/.aws/credentials  home/.bashrc  home/.gitconfig
//	ws/.git/{config,HEAD,hooks/pre-commit}  ws/src/main.go  ws/README.md  ws/.env  ws/.env.example
//	ws/certs/server.pem  tmp/  outside/notes.txt
//
// The same world is seen three ways: veto's whole gate (with the in-memory
// store), veto's pure file rules alone, and the Rego policy.
type world struct {
	root, home, ws, tmp, outside string

	gate       *veto.Gate
	rules      []veto.Rule // the pure file rules, in veto's order
	policy     *Policy     // patterns indexed by shape
	globPolicy *Policy     // every pattern a glob
	run        veto.Run
	n          atomic.Int64
}

// newWorld builds a world. With homeRoot the home directory is an extra
// write root, as files.Config.ExtraRoots = ["~"] makes it; without, the
// write roots are the workspace and tmp.
func newWorld(t testing.TB, homeRoot bool) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{root: root, home: root + "/home", ws: root + "/ws", tmp: root + "/tmp", outside: root + "/outside"}
	for _, d := range []string{"home/.ssh", "home/.aws", "ws/.git/hooks", "ws/src", "ws/certs", "tmp", "outside"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for f, body := range map[string]string{
		"home/.ssh/id_rsa": "KEY", "home/.ssh/id_rsa.pub": "PUB", "home/.ssh/config": "Host x",
		"home/.aws/credentials": "[default]", "home/.bashrc": "# rc", "home/.gitconfig": "[user]\n\tname = a\n",
		"ws/.git/config": "[core]\n\tbare = false\n", "ws/.git/HEAD": "ref: refs/heads/main\n",
		"ws/.git/hooks/pre-commit": "#!/bin/sh\n", "ws/src/main.go": "package main\n", "ws/README.md": "# readme\n",
		"ws/.env": "TOKEN=x\n", "ws/.env.example": "TOKEN=\n", "ws/certs/server.pem": "PEM", "outside/notes.txt": "notes",
	} {
		must(t, os.WriteFile(filepath.Join(root, f), []byte(body), 0o644))
	}

	cfg := files.Config{Home: w.home, TempDirs: []string{w.tmp}}
	roots := []string{w.tmp}
	if homeRoot {
		cfg.ExtraRoots = []string{"~"}
		roots = append(roots, w.home)
	}
	set, err := files.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Rules() {
		if slices.Contains(pureRules, r.Info().ID) {
			w.rules = append(w.rules, r)
		}
	}
	if len(w.rules) != len(pureRules) {
		t.Fatalf("found %d of the pure file rules", len(w.rules))
	}
	descs := tools.Defaults()
	w.gate, err = veto.NewGate(veto.Config{
		Tools:     descs,
		Rules:     set.Rules(),
		Resolvers: []veto.Resolver{set.Resolver()},
		Learners:  []veto.Learner{set.Learner()},
		Probe:     probe.Live{},
		Store:     memstore.New(),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.run = veto.Run{Ref: "opa-run", Fresh: true}

	w.policy, err = New(ctx, Config{Home: w.home, Roots: roots, Tools: descs})
	if err != nil {
		t.Fatal(err)
	}
	w.globPolicy, err = New(ctx, Config{Home: w.home, Roots: roots, Tools: descs, GlobsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expand replaces $WS, $HOME, $TMP and $OUT in s.
func (w *world) expand(s string) string {
	return strings.NewReplacer("$WS", w.ws, "$HOME", w.home, "$TMP", w.tmp, "$OUT", w.outside).Replace(s)
}

// args are the arguments of a call of tool on one path.
func args(tool, p string) map[string]any {
	switch tool {
	case "Write":
		return map[string]any{"file_path": p, "content": "x\n"}
	case "Edit":
		return map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}
	case "Grep", "Glob":
		return map[string]any{"pattern": "x", "path": p}
	}
	return map[string]any{"file_path": p}
}

// call is a call of tool from the workspace, or from nowhere (no cwd)
// with noCwd.
func (w *world) call(tool string, a map[string]any, noCwd bool) *veto.Call {
	c := &veto.Call{ID: "c" + strconv.FormatInt(w.n.Add(1), 10), Tool: tool, Args: a, Run: w.run, Cwd: w.ws}
	if noCwd {
		c.Cwd = ""
	}
	return c
}

// verdict is a decision as "allow" or "rule/reason".
func verdict(allow bool, rule, reason string) string {
	if allow {
		return "allow"
	}
	return rule + "/" + reason
}

// native decides through veto's whole gate: bounds, offerability, the
// target, every file rule (the state-dependent ones included), and the
// record in the in-memory store.
func (w *world) native(tool string, a map[string]any, noCwd bool) string {
	v := w.gate.Decide(ctx, w.call(tool, a, noCwd))
	return verdict(v.Allowed, v.Rule, v.Reason)
}

// rulesOnly runs veto's pure file rules on the call, in order, with no
// store and no record: the same checks the Rego policy makes.
func (w *world) rulesOnly(tool string, a map[string]any, noCwd bool) (string, error) {
	c := w.call(tool, a, noCwd)
	in := &veto.Input{Call: c, Descriptor: w.gate.Descriptor(tool), Knowledge: veto.NoKnowledge, Probe: probe.Live{}}
	for _, r := range w.rules {
		d, err := r.Check(ctx, in)
		if err != nil {
			return "", err
		}
		if d.Denied() {
			return verdict(false, r.Info().ID, d.Reason()), nil
		}
	}
	return "allow", nil
}

// rego resolves the call's paths and asks p's prepared query. A call
// with no cwd has no workspace.
func (w *world) rego(p *Policy, tool string, a map[string]any, noCwd bool) (string, error) {
	ws := w.ws
	if noCwd {
		ws = ""
	}
	in, err := p.Input(tool, a, ws, Env{Cwd: ws, Home: w.home})
	if err != nil {
		return "", err
	}
	d, err := p.Decide(ctx, in)
	if err != nil {
		return "", err
	}
	return verdict(d.Allow, d.Rule, d.Reason), nil
}
