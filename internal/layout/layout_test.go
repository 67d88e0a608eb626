package layout_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/vetohq/veto"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs go list -json over patterns from the module's root, with
// extra flags (-deps, -test), and returns the packages of the module.
func list(t *testing.T, flags []string, patterns ...string) []pkg {
	t.Helper()
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	args := append(append([]string{"list", "-json=ImportPath,Imports,Deps"}, flags...), patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var ps []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath == mod || strings.HasPrefix(p.ImportPath, mod+"/") {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		t.Fatalf("go %s listed no package of %s", strings.Join(args, " "), mod)
	}
	return ps
}

// under reports whether path is dir or a package below it, dir relative
// to the module.
func under(path, dir string) bool {
	return path == mod+"/"+dir || strings.HasPrefix(path, mod+"/"+dir+"/")
}

// Only package state, the stores themselves (sqlite, postgres with its
// test helper, sqlstore), storetest and server/servertest (the tests'
// harnesses) import sqlite, postgres or sqlstore: every command opens its state through state. (Tests may
// import the stores.)
func TestOnlyTheStatePackageOpensTheStores(t *testing.T) {
	allowed := []string{"state", "sqlite", "postgres", "sqlstore", "storetest", "server/servertest"}
	// pending are packages that still import a store, each with why; one
	// that no longer does must leave this list.
	pending := map[string]string{}
	stores := []string{mod + "/sqlite", mod + "/postgres", mod + "/sqlstore"}
	for _, p := range list(t, nil, "./...") {
		if slices.ContainsFunc(allowed, func(d string) bool { return under(p.ImportPath, d) }) {
			continue
		}
		var bad []string
		for _, imp := range p.Imports {
			if slices.Contains(stores, imp) {
				bad = append(bad, imp)
			}
		}
		why, isPending := pending[p.ImportPath]
		switch {
		case len(bad) > 0 && !isPending:
			t.Errorf("%s imports %v: open the state through package state", p.ImportPath, bad)
		case len(bad) == 0 && isPending:
			t.Errorf("%s no longer imports a store: remove it from the pending list (%s)", p.ImportPath, why)
		}
	}
}

// adapters are the client adapter packages: those package adapters links.
func adapters(t *testing.T) []string {
	t.Helper()
	ps := list(t, nil, "./adapters")
	var out []string
	for _, imp := range ps[0].Imports {
		if strings.HasPrefix(imp, mod+"/") {
			out = append(out, imp)
		}
	}
	if len(out) < 5 {
		t.Fatalf("package adapters links %v: the client adapters did not list", out)
	}
	return out
}

// hook and server find the client adapters in agent's registry: neither
// links an adapter package, nor package adapters, so that the service
// does not link the hook program's clients by hand and adding a client
// touches neither.
func TestHookAndServerLinkNoClientAdapter(t *testing.T) {
	banned := append(adapters(t), mod+"/adapters")
	for _, p := range list(t, []string{"-deps"}, "./hook", "./server") {
		if p.ImportPath != mod+"/hook" && p.ImportPath != mod+"/server" {
			continue
		}
		for _, d := range p.Deps { // every package it links, its imports among them
			if slices.Contains(banned, d) {
				t.Errorf("%s links the client adapter %s: find it with agent.For", p.ImportPath, d)
			}
		}
	}
}

// The root's tests link nothing of veto's above the root: the stores and
// the rules (and what they build on) only, never a command, an adapter,
// the service or the hook program, so that a mutant of the root builds
// and runs its tests without linking all of veto.
func TestRootTestsLinkNothingAboveTheRoot(t *testing.T) {
	above := []string{"cli", "cmd", "hook", "server", "mcpgate", "agent", "adapters", "state", "replay", "client", "clients", "bench", "e2e"}
	adapterPkgs := adapters(t)
	var deps []string
	for _, p := range list(t, []string{"-deps", "-test"}, ".") {
		deps = append(deps, p.ImportPath)
	}
	if !slices.Contains(deps, mod+"/memstore") {
		t.Fatalf("the root's test dependencies %v lack memstore: the listing is not of the root's tests", deps)
	}
	for _, d := range deps {
		d = strings.Fields(d)[0] // "pkg [pkg.test]" is pkg built for the test
		if slices.ContainsFunc(above, func(a string) bool { return under(d, a) }) || slices.Contains(adapterPkgs, d) {
			t.Errorf("the root's tests link %s, which is above the root", d)
		}
	}
}
