package opabench

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/vetohq/veto/rules/files"
)

const (
	allow   = "allow"
	roots   = "file.write_roots/outside_write_roots"
	protect = "file.protected/protected_path"
	persist = "file.persistence/persistence_target"
	cred    = "file.credential/credential_path"
	search  = "file.credential/credential_search"
	noWS    = "file.write_roots/workspace_unknown"
)

// agreeCase is one call and what veto decides on it in the two worlds:
// def with the workspace and tmp as the write roots, home with the home
// directory an extra root. Writes name new files and edits existing
// ones, so that the state-dependent rules (read before write, reference
// exists) have nothing to say and the whole gate's verdict is the pure
// rules' verdict.
type agreeCase struct {
	tool, path string
	def, home  string
}

var agreeCases = []agreeCase{
	// Reads: only the credential rule looks at them.
	{"Read", "$WS/src/main.go", allow, allow},
	{"Read", "src/main.go", allow, allow},
	{"Read", "$OUT/notes.txt", allow, allow},
	{"Read", "~/.ssh/id_rsa", cred, cred},
	{"Read", "~/.ssh/id_rsa.pub", allow, allow},
	{"Read", "~/.ssh", cred, cred},
	{"Read", "$HOME/.aws/credentials", cred, cred},
	{"Read", "$WS/.env", cred, cred},
	{"Read", ".env.example", allow, allow},
	{"Read", "$WS/certs/server.pem", cred, cred},
	{"Read", "$WS/sub/../deploy/id_ed25519", cred, cred},
	{"Read", "/etc/shadow", cred, cred},
	{"Read", "/proc/1/environ", cred, cred},
	{"Read", "~/.bashrc", allow, allow},
	{"Read", "$WS/.git/config", allow, allow},
	{"Read", "file://$WS/README.md", allow, allow},

	// Writes of new files.
	{"Write", "$WS/src/new.go", allow, allow},
	{"Write", "src/rel.go", allow, allow},
	{"Write", "$TMP/scratch.txt", allow, allow},
	{"Write", "$OUT/x.txt", roots, roots},
	{"Write", "../outside/y.txt", roots, roots},
	{"Write", "$WS/../ws-sibling/z.txt", roots, roots},
	{"Write", "/etc/motd", roots, roots},
	{"Write", "~/notes.md", roots, allow},
	{"Write", "$WS/.git/hooks/post-merge", protect, protect},
	{"Write", "$WS/vendor/lib/.git/config", protect, protect},
	{"Write", "$TMP/repo/.git/hooks/pre-push", protect, protect},
	{"Write", "$WS/.claude/settings.local.json", protect, protect},
	{"Write", "$WS/.claude/agents/a.md", allow, allow},
	{"Write", "$WS/.github/workflows/ci.yml", allow, allow},
	{"Write", "$TMP/.veto/state.db", protect, protect},
	{"Write", "~/.ssh/authorized_keys", roots, persist},
	{"Write", "~/.config/systemd/user/x.service", roots, persist},
	{"Write", "~/.config/fish/config.fish", roots, persist},
	{"Write", "$WS/.env.local", cred, cred},
	{"Write", "$WS/sub/.env.sample", allow, allow},
	{"Write", "$WS/deploy/id_ed25519", cred, cred},
	{"Write", "$WS/tls.key", cred, cred},
	{"Write", "~/.aws/config", roots, cred},
	{"Write", "$OUT/.env", roots, roots},

	// Writes of existing files a pure rule denies before read-before-write.
	{"Write", "$WS/.git/config", protect, protect},
	{"Write", "$WS/.git/hooks/pre-commit", protect, protect},
	{"Write", "~/.bashrc", roots, persist},
	{"Write", "~/.ssh/id_rsa", roots, cred},
	{"Write", "$WS/.env", cred, cred},

	// Edits of existing files.
	{"Edit", "$WS/src/main.go", allow, allow},
	{"Edit", "$WS/README.md", allow, allow},
	{"Edit", "$WS/.git/HEAD", protect, protect},
	{"Edit", "$WS/.env", cred, cred},
	{"Edit", "~/.bashrc", roots, persist},
	{"Edit", "~/.ssh/config", roots, persist},
	{"Edit", "~/.gitconfig", roots, persist},
	{"Edit", "~/.aws/credentials", roots, cred},
	{"Edit", "$OUT/notes.txt", roots, roots},

	// Tree searches.
	{"Grep", "$WS", allow, allow},
	{"Grep", "~", search, search},
	{"Grep", "/", search, search},
	{"Grep", "~/.aws", cred, cred},
	{"Glob", "$WS/src", allow, allow},
}

// noCwdCases are calls with no working directory: veto cannot place the
// workspace, and the other write roots still count.
var noCwdCases = []agreeCase{
	{"Write", "$WS/src/x.go", noWS, noWS},
	{"Write", "$TMP/x.txt", allow, allow},
	{"Write", "~/x.txt", noWS, allow},
	{"Read", "$WS/.env", cred, cred},
}

// TestRegoAgreesWithVeto decides every case three ways, in both worlds:
// veto's whole gate, veto's pure file rules alone, and the Rego policy.
// All three must give the expected verdict: the same allow or deny, the
// same rule and the same reason code.
func TestRegoAgreesWithVeto(t *testing.T) {
	n := 0
	for _, homeRoot := range []bool{false, true} {
		w := newWorld(t, homeRoot)
		for _, table := range []struct {
			cases []agreeCase
			noCwd bool
		}{{agreeCases, false}, {noCwdCases, true}} {
			for _, tc := range table.cases {
				want := tc.def
				if homeRoot {
					want = tc.home
				}
				name := fmt.Sprintf("home-root=%v/%s %s", homeRoot, tc.tool, strings.ReplaceAll(tc.path, "/", "∕"))
				if table.noCwd {
					name += " no-cwd"
				}
				t.Run(name, func(t *testing.T) {
					a := args(tc.tool, w.expand(tc.path))
					native := w.native(tc.tool, a, table.noCwd)
					rules, err := w.rulesOnly(tc.tool, a, table.noCwd)
					if err != nil {
						t.Fatal(err)
					}
					rego, err := w.rego(w.policy, tc.tool, a, table.noCwd)
					if err != nil {
						t.Fatal(err)
					}
					globs, err := w.rego(w.globPolicy, tc.tool, a, table.noCwd)
					if err != nil {
						t.Fatal(err)
					}
					if native != want || rules != want || rego != want || globs != want {
						t.Fatalf("gate %s, pure rules %s, rego %s, rego (globs only) %s; want %s", native, rules, rego, globs, want)
					}
				})
				n++
			}
		}
	}
	t.Logf("%d cases (%d calls in each of 2 worlds), each decided 4 ways", n, n/2)
}

// TestStateRulesStayNative shows where the policy ends: a write over an
// existing file the run never read, and an edit of a missing file, are
// denied by veto's state-dependent rules, which the Rego policy does not
// hold. The pure rules and the policy allow both.
func TestStateRulesStayNative(t *testing.T) {
	w := newWorld(t, false)
	for _, tc := range []struct{ tool, path, gate string }{
		{"Write", "$WS/README.md", "file.read_before_write/overwrite_unread"},
		{"Edit", "$WS/missing.go", "file.reference_exists/reference_missing"},
	} {
		a := args(tc.tool, w.expand(tc.path))
		if got := w.native(tc.tool, a, false); got != tc.gate {
			t.Errorf("%s %s: gate %s, want %s", tc.tool, tc.path, got, tc.gate)
		}
		if got, err := w.rulesOnly(tc.tool, a, false); err != nil || got != allow {
			t.Errorf("%s %s: pure rules %s %v, want allow", tc.tool, tc.path, got, err)
		}
		for _, p := range []*Policy{w.policy, w.globPolicy} {
			if got, err := w.rego(p, tc.tool, a, false); err != nil || got != allow {
				t.Errorf("%s %s: rego %s %v, want allow", tc.tool, tc.path, got, err)
			}
		}
	}
	// core.hooksPath is read from the git config on disk (and cached for
	// a second, so a fresh world): native only.
	w = newWorld(t, false)
	must(t, os.WriteFile(w.ws+"/.git/config", []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
	a := args("Write", w.ws+"/.githooks/pre-commit")
	if got, err := w.rulesOnly("Write", a, false); err != nil || got != persist {
		t.Errorf("hooksPath: pure rules %s %v, want %s", got, err, persist)
	}
	if got, err := w.rego(w.policy, "Write", a, false); err != nil || got != allow {
		t.Errorf("hooksPath: rego %s, want allow (not modelled)", got)
	}
}

// TestPatternsMatchLikeVeto compares the policy's translation of each
// default list, indexed and as globs only, with veto's own matcher
// (files.CompileMatcher) over a grid of paths.
func TestPatternsMatchLikeVeto(t *testing.T) {
	for _, globsOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("globs-only=%v", globsOnly), func(t *testing.T) { patternsMatchLikeVeto(t, globsOnly) })
	}
}

func patternsMatchLikeVeto(t *testing.T, globsOnly bool) {
	const home = "/home/u"
	data, err := Data(Config{Home: home, GlobsOnly: globsOnly})
	if err != nil {
		t.Fatal(err)
	}
	pq, err := prepare(ctx, "data.veto.policy.files.matches(data.veto.files[input.list], input.path)", data)
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"/", home, home + "/.ssh", home + "/.ssh/sub", home + "/.config", home + "/.config/fish",
		home + "/.config/git", home + "/.aws", home + "/Library/LaunchAgents", "/etc", "/etc/cron.d", "/etc/ssh",
		"/etc/profile.d", "/proc/1", "/proc", "/var/spool/cron", "/Library/LaunchDaemons", "/ws", "/ws/.git",
		"/ws/.git/hooks", "/ws/sub/.claude", "/ws/.github/hooks", "/ws/.codex", "/ws/.veto/x"}
	names := []string{"", ".bashrc", ".profile", "id_rsa", "id_rsa.pub", "id_ed25519_sk", "config", ".env", ".env.example",
		".env.local", ".envrc", "x.pem", "x.pem.bak", "environ", "shadow", "authorized_keys", "settings.json",
		"settings.local.json", "settings", "hooks.json", ".git", "hooks", "pre-commit", "cron.daily", "crontab",
		"x.plist", ".ssh", ".aws", "credentials", ".gitconfig", "git", "anacrontab", "hosts.yml"}
	n := 0
	for _, list := range []struct {
		name string
		src  []string
	}{{"protected", files.DefaultProtected}, {"persistence", files.DefaultPersistence}, {"credentials", files.DefaultCredentials}} {
		m, err := files.CompileMatcher(list.src, home)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			for _, name := range names {
				p := strings.TrimSuffix(d, "/") + "/" + name
				if name == "" {
					p = d
				}
				_, want := m.Match(p)
				rs, err := pq.Eval(ctx, rego.EvalInput(map[string]any{"list": list.name, "path": map[string]any{"forms": []any{p}}}))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(rs) > 0; got != want {
					t.Errorf("%s %s: rego %v, veto %v", list.name, p, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d path × list pairs", n)
}
