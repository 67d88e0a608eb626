package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/probe"
	"github.com/vetohq/veto/rules/files"
	"github.com/vetohq/veto/tools"
)

var ctx = context.Background()

// world is a real directory tree with a fake home, a git workspace, a
// temporary root and a place outside every root:
//
//	home/.ssh/{id_rsa,id_rsa.pub,config}  home/.aws/credentials  home/.bashrc  home/.gitconfig
//	ws/.git/{config,HEAD,hooks/}  ws/src/main.go  ws/README.md  ws/.env  ws/.env.example
//	ws/out -> outside            ws/inlink -> src
//	tmp/                          outside/notes.txt
type world struct {
	root, home, ws, tmp, outside string
	gate                         *veto.Gate
	store                        *memstore.Store
	run                          veto.Run
	n                            atomic.Int64
	probe                        veto.Probe // probe.Live{} unless a test sets another before renew
	// renew replaces the store and the gate with new ones, as a new
	// process would have.
	renew func()
}

func newWorld(t testing.TB, mutate func(*files.Config)) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{root: root, home: root + "/home", ws: root + "/ws", tmp: root + "/tmp", outside: root + "/outside"}
	for _, d := range []string{"home/.ssh", "home/.aws", "ws/.git/hooks", "ws/src", "tmp", "outside"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for f, body := range map[string]string{
		"home/.ssh/id_rsa": "KEY", "home/.ssh/id_rsa.pub": "PUB", "home/.ssh/config": "Host x",
		"home/.aws/credentials": "[default]", "home/.bashrc": "# rc", "home/.gitconfig": "[user]\n\tname = a\n",
		"ws/.git/config": "[core]\n\tbare = false\n", "ws/.git/HEAD": "ref: refs/heads/main\n",
		"ws/src/main.go": "package main\n", "ws/README.md": "# readme\n", "ws/.env": "TOKEN=x\n", "ws/.env.example": "TOKEN=\n",
		"outside/notes.txt": "notes",
	} {
		must(t, os.WriteFile(filepath.Join(root, f), []byte(body), 0o644))
	}
	must(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
	must(t, os.Symlink("src", filepath.Join(w.ws, "inlink")))

	cfg := files.Config{Home: w.home, TempDirs: []string{w.tmp}}
	if mutate != nil {
		mutate(&cfg)
	}
	set, err := files.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	descs := tools.Defaults()
	w.renew = func() {
		w.store = memstore.New()
		w.gate, err = veto.NewGate(veto.Config{
			Tools:     descs,
			Rules:     set.Rules(),
			Resolvers: []veto.Resolver{set.Resolver()},
			Learners:  []veto.Learner{set.Learner()},
			Probe:     w.probe,
			Store:     w.store,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	w.probe = probe.Live{}
	w.renew()
	w.run = veto.Run{Ref: "files-run", Fresh: true}
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expand replaces $WS, $HOME, $TMP, $OUT and $ROOT in s.
func (w *world) expand(s string) string {
	return strings.NewReplacer("$WS", w.ws, "$HOME", w.home, "$TMP", w.tmp, "$OUT", w.outside, "$ROOT", w.root).Replace(s)
}

func (w *world) expandAll(v any) any {
	switch v := v.(type) {
	case string:
		return w.expand(v)
	case map[string]any:
		m := map[string]any{}
		for k, e := range v {
			m[k] = w.expandAll(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = w.expandAll(e)
		}
		return s
	}
	return v
}

func (w *world) call(tool string, args map[string]any) *veto.Call {
	return &veto.Call{ID: fmt.Sprintf("c%d", w.n.Add(1)), Tool: tool, Args: w.expandAll(args).(map[string]any), Run: w.run, Cwd: w.ws}
}

func (w *world) decide(tool string, args map[string]any) veto.Verdict {
	return w.gate.Decide(ctx, w.call(tool, args))
}

// read decides a Read and reports it back as the runtime would.
func (w *world) read(t testing.TB, file string, outcome veto.Outcome) veto.Verdict {
	t.Helper()
	c := w.call("Read", map[string]any{"file_path": file})
	v := w.gate.Decide(ctx, c)
	if v.Allowed && outcome != "" {
		must(t, w.gate.ObserveCall(ctx, c, outcome))
	}
	return v
}

type want struct{ rule, reason string } // zero: allow

func check(t *testing.T, v veto.Verdict, wt want) {
	t.Helper()
	if wt.rule == "" {
		if !v.Allowed {
			t.Fatalf("denied by %s/%s (%s); want allow", v.Rule, v.Reason, v.Message)
		}
		return
	}
	if v.Allowed || v.Rule != wt.rule || v.Reason != wt.reason {
		t.Fatalf("allowed=%v rule %s reason %s (%s); want %s/%s", v.Allowed, v.Rule, v.Reason, v.Message, wt.rule, wt.reason)
	}
}

var (
	allow       = want{}
	roots       = want{"file.write_roots", "outside_write_roots"}
	protectedW  = want{"file.protected", "protected_path"}
	persistW    = want{"file.persistence", "persistence_target"}
	credW       = want{"file.credential", "credential_path"}
	searchW     = want{"file.credential", "credential_search"}
	unreadW     = want{"file.read_before_write", "overwrite_unread"}
	staleW      = want{"file.stale", "changed_since_read"}
	missingW    = want{"file.reference_exists", "reference_missing"}
	unresolvedW = want{"file.write_roots", "path_unresolvable"}
)

type fileCase struct {
	name string
	tool string
	args map[string]any
	want want
}

func run(t *testing.T, w *world, cases []fileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, w.decide(tc.tool, tc.args), tc.want) })
	}
}

func TestWriteRoots(t *testing.T) {
	w := newWorld(t, nil)
	run(t, w, []fileCase{
		{"new-file-in-workspace", "Write", map[string]any{"file_path": "$WS/src/new.go", "content": "x"}, allow},
		{"relative-in-workspace", "Write", map[string]any{"file_path": "src/other.go", "content": "x"}, allow},
		{"file-url-in-workspace", "Write", map[string]any{"file_path": "file://$WS/src/url.go", "content": "x"}, allow},
		{"temp-root", "Write", map[string]any{"file_path": "$TMP/scratch.txt", "content": "x"}, allow},
		{"outside", "Write", map[string]any{"file_path": "$OUT/x.txt", "content": "x"}, roots},
		{"dotdot-outside", "Write", map[string]any{"file_path": "../outside/y.txt", "content": "x"}, roots},
		{"through-symlink-leaving", "Write", map[string]any{"file_path": "$WS/out/z.txt", "content": "x"}, roots},
		{"symlink-dotdot-kernel-reading", "Write", map[string]any{"file_path": "$WS/out/../ws/src/k.go", "content": "x"}, allow},
		{"symlink-dotdot-cleaned-reading", "Write", map[string]any{"file_path": "$WS/out/../outside/k.go", "content": "x"}, roots},
		{"through-symlink-inside", "Write", map[string]any{"file_path": "$WS/inlink/via.go", "content": "x"}, allow},
		{"home-tilde", "Write", map[string]any{"file_path": "~/notes.md", "content": "x"}, roots},
		{"home-variable", "Write", map[string]any{"file_path": "$HOME/notes.md", "content": "x"}, roots},
		{"root-dir", "Write", map[string]any{"file_path": "/etc/motd", "content": "x"}, roots},
		{"unknown-user", "mcp__filesystem__move_file", map[string]any{"source": "~nosuchuser/x", "destination": "$WS/x"}, unresolvedW},
		{"mcp-create-directory", "mcp__filesystem__create_directory", map[string]any{"path": "$WS/newdir"}, allow},
		{"mcp-move-destination-outside", "mcp__filesystem__move_file", map[string]any{"source": "$WS/src/main.go", "destination": "$OUT/main.go"}, roots},
		{"mcp-move-source-outside", "mcp__filesystem__move_file", map[string]any{"source": "$OUT/notes.txt", "destination": "$WS/notes.txt"}, roots},
		{"reads-outside-are-fine", "Read", map[string]any{"file_path": "$OUT/notes.txt"}, allow},
	})
	t.Run("extra-root", func(t *testing.T) {
		w := newWorld(t, func(c *files.Config) { c.ExtraRoots = []string{"~"} })
		check(t, w.decide("Write", map[string]any{"file_path": "~/notes.md", "content": "x"}), allow)
	})
	t.Run("no-working-directory", func(t *testing.T) {
		c := w.call("Write", map[string]any{"file_path": "/etc/motd", "content": "x"})
		c.Cwd = ""
		check(t, w.gate.Decide(ctx, c), want{"file.write_roots", "workspace_unknown"})
	})
}

func TestProtectedInsideRoots(t *testing.T) {
	w := newWorld(t, nil)
	var cases []fileCase
	for _, p := range []string{".git/config", ".git/HEAD", ".git/hooks/pre-commit", ".git/objects/ab/cdef", ".git/refs/heads/main",
		".veto/state.db", ".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json",
		".cursor/hooks.json", ".codex/config.toml", ".github/hooks/pre-push", "vendor/lib/.git/config"} {
		cases = append(cases, fileCase{p, "Write", map[string]any{"file_path": "$WS/" + p, "content": "x"}, protectedW})
	}
	cases = append(cases,
		fileCase{"claude-other-file", "Write", map[string]any{"file_path": "$WS/.claude/agents/a.md", "content": "x"}, allow},
		fileCase{"github-workflow", "Write", map[string]any{"file_path": "$WS/.github/workflows/ci.yml", "content": "x"}, allow},
		fileCase{"edit-git-config", "Edit", map[string]any{"file_path": "$WS/.git/config", "old_string": "a", "new_string": "b"}, protectedW},
		fileCase{"in-temp-root", "Write", map[string]any{"file_path": "$TMP/repo/.git/config", "content": "x"}, protectedW},
	)
	run(t, w, cases)
}

func TestPersistenceTargets(t *testing.T) {
	w := newWorld(t, func(c *files.Config) { c.ExtraRoots = []string{"~", "/etc", "/var/spool", "/Library"} })
	var cases []fileCase
	for _, p := range []string{"~/.bashrc", "~/.bash_profile", "~/.profile", "~/.zshrc", "~/.zshenv", "~/.config/fish/config.fish",
		"~/.ssh/authorized_keys", "~/.ssh/config", "~/.ssh/rc", "/etc/crontab", "/etc/cron.d/job", "/etc/cron.daily/job",
		"/var/spool/cron/crontabs/root", "~/.config/systemd/user/x.service", "/etc/systemd/system/x.service",
		"~/Library/LaunchAgents/x.plist", "/Library/LaunchDaemons/x.plist", "~/.config/autostart/x.desktop",
		"/etc/xdg/autostart/x.desktop", "~/.gitconfig", "~/.config/git/config",
		"/etc/profile.d/x.sh", "/etc/environment"} {
		cases = append(cases, fileCase{p, "Write", map[string]any{"file_path": p, "content": "x"}, persistW})
	}
	cases = append(cases, fileCase{"plain-home-file", "Write", map[string]any{"file_path": "~/notes.md", "content": "x"}, allow})
	run(t, w, cases)

	t.Run("core-hooksPath", func(t *testing.T) {
		var clock atomic.Int64
		clock.Store(time.Now().UnixNano())
		w := newWorld(t, func(c *files.Config) { c.Now = func() time.Time { return time.Unix(0, clock.Load()) } })
		must(t, os.WriteFile(w.ws+"/.git/config", []byte("[core]\n\tbare = false\n\thooksPath = .githooks\n"), 0o644))
		check(t, w.decide("Write", map[string]any{"file_path": "$WS/.githooks/pre-commit", "content": "x"}), persistW)
		check(t, w.decide("Write", map[string]any{"file_path": "$WS/githooks-not/pre-commit", "content": "x"}), allow)
		// The user's git config counts too, and a change to it is seen once
		// the cached answer is a second old.
		must(t, os.WriteFile(w.home+"/.gitconfig", []byte("[core]\n  hooksPath = \""+w.ws+"/.myhooks\"\n"), 0o644))
		clock.Add(int64(2 * time.Second))
		check(t, w.decide("Write", map[string]any{"file_path": "$WS/.myhooks/x", "content": "x"}), persistW)
	})
}

// TestAutoRunTasks: an editor task file may be written, but not with a
// task that runs when the folder is opened, nor with content veto cannot
// see; files.task_files adds files to the defaults.
func TestAutoRunTasks(t *testing.T) {
	w := newWorld(t, func(c *files.Config) {
		c.TaskFiles = append(append([]string{}, files.DefaultTaskFiles...), "tools/*.tasks.json")
	})
	must(t, os.MkdirAll(w.ws+"/.vscode", 0o755))
	must(t, os.WriteFile(w.ws+"/.vscode/tasks.json", []byte(`{"version": "2.0.0", "tasks": []}`), 0o644))
	w.read(t, "$WS/.vscode/tasks.json", veto.Succeeded)
	onOpen := want{"file.auto_run_task", "task_runs_on_open"}
	unseen := want{"file.auto_run_task", "task_content_unknown"}
	const build = `{"version": "2.0.0", "tasks": [{"label": "build", "type": "shell", "command": "make"}]}`
	const auto = `{"version": "2.0.0", "tasks": [{"label": "build", "type": "shell", "command": "make",
	  // runs as soon as the folder opens
	  "runOptions": {"runOn": "folderOpen"},}]}`
	run(t, w, []fileCase{
		{"plain-task", "Write", map[string]any{"file_path": "$WS/.vscode/tasks.json", "content": build}, allow},
		{"runs-on-open", "Write", map[string]any{"file_path": "$WS/.vscode/tasks.json", "content": auto}, onOpen},
		{"nested-folder", "Write", map[string]any{"file_path": "$WS/src/.vscode/tasks.json", "content": auto}, onOpen},
		{"escaped", "Write", map[string]any{"file_path": "$WS/.vscode/tasks.json",
			"content": `{"tasks": [{"runOptions": {"runOn": "\u0066older\u004Fpen"}}]}`}, onOpen},
		{"other-case", "Write", map[string]any{"file_path": "$WS/.vscode/tasks.json", "content": `{"runOn": "FOLDEROPEN"}`}, onOpen},
		{"workspace-file", "Write", map[string]any{"file_path": "$WS/app.code-workspace", "content": auto}, onOpen},
		{"workspace-file-in-vscode", "Write", map[string]any{"file_path": "$WS/.vscode/app.code-workspace",
			"content": `{"folders": [], "tasks": {"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}}`}, onOpen},
		{"setting-adds-a-file", "Write", map[string]any{"file_path": "$WS/tools/ci.tasks.json", "content": auto}, onOpen},
		{"other-json", "Write", map[string]any{"file_path": "$WS/.vscode/settings.json", "content": auto}, allow},
		{"edit-adds-it", "Edit", map[string]any{"file_path": "$WS/.vscode/tasks.json", "old_string": `"tasks": []`,
			"new_string": `"tasks": [{"label": "x", "runOptions": {"runOn": "folderOpen"}}]`}, onOpen},
		{"edit-plain", "Edit", map[string]any{"file_path": "$WS/.vscode/tasks.json", "old_string": `"tasks": []`,
			"new_string": `"tasks": [{"label": "x"}]`}, allow},
		{"multiedit", "MultiEdit", map[string]any{"file_path": "$WS/.vscode/tasks.json", "edits": []any{
			map[string]any{"old_string": "[]", "new_string": `[{"runOptions": {"runOn": "folderOpen"}}]`}}}, onOpen},
		{"mcp-write", "mcp__filesystem__write_file", map[string]any{"path": "$WS/.vscode/tasks.json", "content": auto}, onOpen},
		// The content in another letter case is the content (issue 27).
		{"content-key-other-case", "Write", map[string]any{"File_Path": "$WS/.vscode/tasks.json", "content": build, "Content": auto}, onOpen},
		{"move-into-place", "mcp__filesystem__move_file", map[string]any{"source": "$WS/README.md",
			"destination": "$WS/.vscode/tasks.json"}, unseen},
		{"undescribed-tool", "mcp__x__put", map[string]any{"where": "$WS/.vscode/tasks.json", "body": build}, unseen},
		{"not-text", "Write", map[string]any{"file_path": "$WS/.vscode/tasks.json", "content": 7.0}, unseen},
	})

	// A command that writes a task file: veto cannot see what it writes.
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	must(t, err)
	g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: w.home, TempDirs: []string{w.tmp}})
	must(t, err)
	for _, tc := range []struct {
		cmd  string
		want want
	}{
		{`printf '%s' "$X" > .vscode/tasks.json`, unseen},
		{`cp /dev/null .vscode/tasks.json`, unseen},
		{`cat .vscode/tasks.json`, allow},
	} {
		v := g.Decide(ctx, &veto.Call{ID: "bash-" + tc.cmd, Tool: "Bash", Args: map[string]any{"command": tc.cmd},
			Run: veto.Run{Ref: "tasks", Fresh: true}, Cwd: w.ws})
		t.Run(tc.cmd, func(t *testing.T) { check(t, v, tc.want) })
	}
	// The denial tells the agent what to do instead.
	v := w.decide("Write", map[string]any{"file_path": "$WS/.vscode/tasks.json", "content": auto})
	if !strings.Contains(v.Advice.Instead, "without runOptions.runOn") || strings.Contains(v.Message, "folderOpen\"") {
		t.Errorf("advice %+v, message %q", v.Advice, v.Message)
	}
}

func TestCredentialsReadAndWrite(t *testing.T) {
	w := newWorld(t, func(c *files.Config) { c.ExtraRoots = []string{"~"} })
	var cases []fileCase
	for _, p := range []string{"~/.ssh/id_rsa", "~/.ssh/known_hosts", "~/.ssh", "$WS/.env", "$WS/.env.local", "$WS/sub/.env.production",
		"$WS/certs/server.pem", "$WS/tls.key", "$WS/store.p12", "$WS/cert.pfx", "$WS/deploy/id_ed25519", "$OUT/id_rsa",
		"~/.aws/credentials", "~/.aws", "~/.azure/accessTokens.json", "~/.config/gcloud/credentials.db", "~/.kube/config",
		"~/.docker/config.json", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.git-credentials", "~/.config/gh/hosts.yml",
		"~/.gnupg/private-keys-v1.d/x.key", "~/.password-store/site.gpg", "/etc/shadow", "/proc/self/environ", "/proc/1/environ",
		// only public keys in ~/.ssh are exempt, not any name ending in .pub
		"$WS/.env.pub", "~/.aws/credentials.pub", "~/.gnupg/private-keys-v1.d/k.key.pub", "~/.password-store/site.pub"} {
		cases = append(cases, fileCase{"read " + p, "Read", map[string]any{"file_path": p}, credW})
	}
	for _, p := range []string{"~/.ssh/id_rsa.pub", "$WS/.env.example", "$WS/.env.sample", "$WS/.env.template", "$WS/.env.dist",
		"$WS/keys/deploy.pub", "$WS/src/main.go", "/etc/hostname", "$WS/environment.go"} {
		cases = append(cases, fileCase{"read " + p, "Read", map[string]any{"file_path": p}, allow})
	}
	cases = append(cases,
		fileCase{"write .env", "Write", map[string]any{"file_path": "$WS/.env.new", "content": "x"}, credW},
		fileCase{"write key in home", "Write", map[string]any{"file_path": "~/.aws/config", "content": "x"}, credW},
		fileCase{"grep in aws", "Grep", map[string]any{"pattern": "secret", "path": "~/.aws"}, credW},
		fileCase{"ls ssh", "LS", map[string]any{"path": "~/.ssh"}, credW},
		fileCase{"glob in ssh", "Glob", map[string]any{"pattern": "*", "path": "~/.ssh/"}, credW},
		fileCase{"grep over home", "Grep", map[string]any{"pattern": "AKIA", "path": "~"}, searchW},
		fileCase{"grep over root", "Grep", map[string]any{"pattern": "AKIA", "path": "/"}, searchW},
		fileCase{"grep in workspace", "Grep", map[string]any{"pattern": "TODO", "path": "$WS"}, allow},
		fileCase{"ls home", "LS", map[string]any{"path": "~"}, allow},
		fileCase{"mcp read multiple", "mcp__filesystem__read_multiple_files", map[string]any{"paths": []any{"$WS/src/main.go", "~/.ssh/id_rsa"}}, credW},
		fileCase{"mcp search home", "mcp__filesystem__search_files", map[string]any{"path": "~", "pattern": "x"}, searchW},
		fileCase{"mcp fetch file url", "mcp__fetch__fetch", map[string]any{"url": "file://$HOME/.ssh/id_rsa"}, credW},
		fileCase{"git add credential", "mcp__git__git_add", map[string]any{"repo_path": "$WS", "files": []any{".env"}}, credW},
	)
	run(t, w, cases)
}

func TestUndescribedToolsAreSniffed(t *testing.T) {
	w := newWorld(t, nil)
	sniffed := want{"file.write_roots", "undescribed_outside_roots"}
	run(t, w, []fileCase{
		{"absolute-outside", "mcp__other__do", map[string]any{"target": "$OUT/x"}, sniffed},
		{"nested-credential", "mcp__other__do", map[string]any{"opts": map[string]any{"files": []any{"src/a.go", ".env"}}}, credW},
		{"bare-key-name", "mcp__other__do", map[string]any{"name": "id_rsa"}, credW},
		{"inside-workspace", "mcp__other__do", map[string]any{"target": "src/a.go", "note": "see docs/x.md"}, allow},
		{"prose-and-urls", "mcp__other__do", map[string]any{"text": "move /etc/passwd later", "url": "https://example.com/a/b"}, allow},
		{"protected", "mcp__other__do", map[string]any{"p": "$WS/.git/config"}, protectedW},
		{"numbers-and-bools", "mcp__other__do", map[string]any{"n": 5, "b": true}, allow},
		{"unresolvable", "mcp__other__do", map[string]any{"who": "~nosuchuser/x"}, unresolvedW},
	})
	// The denial names the tool, says how to describe it, and quotes no
	// argument.
	const canary = "CANARY-sniff-5e1"
	v := w.decide("mcp__other__do", map[string]any{"target": "$OUT/" + canary})
	if !strings.Contains(v.Message, "mcp__other__do") || strings.Contains(v.Message, canary) ||
		!strings.HasPrefix(v.Advice.Policy, "tools.TOOL.params in veto.yaml") || strings.Contains(v.Advice.Policy, canary) {
		t.Errorf("sniffed denial: message %q, advice %+v", v.Message, v.Advice)
	}
	v = w.decide("mcp__other__do", map[string]any{"p": "$WS/.git/" + canary})
	if !strings.Contains(v.Message, "tools.mcp__other__do.params in veto.yaml") || strings.Contains(v.Message, canary) {
		t.Errorf("sniffed protected denial: message %q", v.Message)
	}
	// A described tool's denial keeps the ordinary reason and advice.
	v = w.decide("Write", map[string]any{"file_path": "$OUT/x", "content": "x"})
	if v.Reason != "outside_write_roots" || v.Advice.Policy != "files.extra_roots in the user's veto.yaml" {
		t.Errorf("described denial: %s, advice %+v", v.Reason, v.Advice)
	}
}

// The MCP servers veto describes: their identifiers, remote paths,
// selectors and text are no files, and the parameters that are local
// paths keep their roles.
func TestMCPServerDescriptors(t *testing.T) {
	w := newWorld(t, nil)
	sniffed := want{"file.write_roots", "undescribed_outside_roots"}
	run(t, w, []fileCase{
		{"context7 library id", "mcp__context7__get-library-docs", map[string]any{"context7CompatibleLibraryID": "/vercel/next.js", "topic": "routing"}, allow},
		{"context7 resolve", "mcp__context7__resolve-library-id", map[string]any{"libraryName": "next.js"}, allow},
		{"context7 plugin query-docs", "mcp__plugin_context7_context7__query-docs", map[string]any{"libraryId": "/vercel/next.js", "query": "x"}, allow},
		{"github remote path", "mcp__github__get_file_contents", map[string]any{"owner": "o", "repo": "r", "path": "/docs/setup.md"}, allow},
		{"github remote hook path", "mcp__github__create_or_update_file", map[string]any{"owner": "o", "repo": "r",
			"path": ".git/hooks/pre-commit", "content": "x", "message": "m", "branch": "b"}, allow},
		{"github push files", "mcp__github__push_files", map[string]any{"owner": "o", "repo": "r", "branch": "b", "message": "m",
			"files": []any{map[string]any{"path": "/etc/passwd", "content": "x"}, map[string]any{"path": ".env", "content": "x"}}}, allow},
		{"github search code", "mcp__github__search_code", map[string]any{"query": "path:/src/ foo"}, allow},
		{"github plugin", "mcp__plugin_github_github__issue_read", map[string]any{"owner": "o", "repo": "r", "issue_number": 1.0}, allow},
		{"playwright upload credential", "mcp__playwright__browser_file_upload", map[string]any{"paths": []any{"$WS/src/main.go", "~/.ssh/id_rsa"}}, credW},
		{"playwright upload", "mcp__playwright__browser_file_upload", map[string]any{"paths": []any{"$WS/src/main.go", "$OUT/notes.txt"}}, allow},
		{"playwright screenshot into git hooks", "mcp__playwright__browser_take_screenshot", map[string]any{"filename": "$WS/.git/hooks/pre-commit"}, protectedW},
		{"playwright screenshot outside", "mcp__playwright__browser_take_screenshot", map[string]any{"filename": "$OUT/shot.png"}, roots},
		{"playwright screenshot", "mcp__playwright__browser_take_screenshot", map[string]any{"filename": "shot.png", "fullPage": true}, allow},
		{"playwright pdf over a start-up file", "mcp__plugin_playwright_playwright__browser_pdf_save", map[string]any{"filename": "~/.bashrc"}, roots},
		{"playwright snapshot without a file", "mcp__playwright__browser_snapshot", map[string]any{}, allow},
		{"playwright navigate file url", "mcp__playwright__browser_navigate", map[string]any{"url": "file://$HOME/.ssh/id_rsa"}, credW},
		{"playwright navigate", "mcp__playwright__browser_navigate", map[string]any{"url": "https://example.com/a/b"}, allow},
		{"playwright click", "mcp__playwright__browser_click", map[string]any{"element": "Docs link", "ref": "e12/x"}, allow},
		{"puppeteer selector", "mcp__puppeteer__puppeteer_click", map[string]any{"selector": "a[href='/etc/passwd']"}, allow},
		{"puppeteer screenshot name", "mcp__puppeteer__puppeteer_screenshot", map[string]any{"name": "/home/page"}, allow},
		{"puppeteer navigate stays sniffed", "mcp__puppeteer__puppeteer_navigate", map[string]any{"url": "https://example.com",
			"launchOptions": map[string]any{"userDataDir": "$OUT/profile"}}, sniffed},
		{"slack slash text", "mcp__slack__slack_post_message", map[string]any{"channel_id": "C1", "text": "/deploy"}, allow},
		{"memory entity", "mcp__memory__create_entities", map[string]any{"entities": []any{map[string]any{"name": "src/main.go",
			"entityType": "file", "observations": []any{"/etc/passwd"}}}}, allow},
		{"sequential thinking", "mcp__sequential-thinking__sequentialthinking", map[string]any{"thought": "/etc/hosts",
			"nextThoughtNeeded": true, "thoughtNumber": 1.0, "totalThoughts": 2.0}, allow},
		{"brave", "mcp__brave-search__brave_web_search", map[string]any{"query": "/r/golang"}, allow},
	})
}

// Removing or moving away the home directory, the workspace, a write root
// or a directory above one is refused wherever the roots are: here the
// temporary root holds the home directory and the workspace, as when HOME
// lies under /tmp on a CI runner or in a container.
func TestRootRemovalWithHomeInsideARoot(t *testing.T) {
	w := newWorld(t, nil)
	must(t, os.WriteFile(w.home+"/notes.txt", []byte("n"), 0o644))
	must(t, os.MkdirAll(w.home+"/build", 0o755))
	p, err := policy.Merge([]*policy.Layer{{Kind: policy.KindBuiltin, Path: "builtin"}}, nil)
	must(t, err)
	decide := func(t *testing.T, root string, home ...string) func(tool string, args map[string]any) veto.Verdict {
		h := w.home
		if len(home) > 0 {
			h = home[0]
		}
		g, err := p.Gate(policy.BuildOptions{Store: memstore.New(), Home: h, TempDirs: []string{root},
			Vars: map[string]string{"HOME": h, "TMPDIR": root}})
		must(t, err)
		return func(tool string, args map[string]any) veto.Verdict {
			c := w.call(tool, args)
			c.Run = veto.Run{Ref: "roots-" + c.ID, Fresh: true}
			return g.Decide(ctx, c)
		}
	}
	removal := want{"file.write_roots", "root_removal"}
	bash := func(cmd string) map[string]any { return map[string]any{"command": w.expand(cmd)} }
	cases := []struct {
		name string
		tool string
		args map[string]any
		want want
	}{
		{"rm home", "Bash", bash("rm -rf ~"), removal},
		{"rm home without -f", "Bash", bash("rm -r ~"), removal},
		{"rm -R home", "Bash", bash("rm -R ~/"), removal},
		{"rm home variable", "Bash", bash(`rm -rf "$HOME"`), removal},
		{"rm home slash", "Bash", bash("rm -rf ~/"), removal},
		{"rm home in bash -c", "Bash", bash(`bash -c "rm -rf ~/"`), removal},
		{"rm home relative", "Bash", bash("rm -rf ../home"), removal},
		{"rm above home", "Bash", bash("rm -rf $ROOT"), removal},
		{"rm workspace", "Bash", bash("rm -rf ."), removal},
		{"mv home", "Bash", bash("mv ~ $TMP/old-home"), removal},
		{"mv home variable", "Bash", bash(`mv "$HOME" $TMP/h`), removal},
		{"mv workspace", "Bash", bash("mv $WS $TMP/ws-old"), removal},
		{"mv the temporary root", "Bash", bash("mv $ROOT /var/tmp/r"), removal},
		{"mcp move home", "mcp__filesystem__move_file", map[string]any{"source": "~", "destination": "$TMP/h"}, removal},
		{"mcp move above workspace", "mcp__filesystem__move_file", map[string]any{"source": "$WS/..", "destination": "$TMP/h"}, removal},
		// What lies below them goes as before.
		{"rm below home", "Bash", bash("rm -rf ~/build"), allow},
		{"rm below home relative", "Bash", bash("rm -rf ../home/build ../tmp/cache"), allow},
		{"mv below home", "Bash", bash("mv ~/notes.txt ~/notes.old"), allow},
		{"mv into home", "Bash", bash("mv src/main.go ~"), allow},
		{"mv out of workspace", "Bash", bash("mv src $TMP/src-old"), allow},
		{"mcp move below home", "mcp__filesystem__move_file", map[string]any{"source": "~/notes.txt", "destination": "$TMP/notes.txt"}, allow},
		{"touch home", "Bash", bash("touch ~"), allow},
	}
	inRoot := decide(t, w.root)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, inRoot(tc.tool, tc.args), tc.want) })
	}
	// A directory above the home directory alone, inside the temporary
	// root: home at $TMP/ci/home.
	must(t, os.MkdirAll(w.tmp+"/ci/home/src", 0o755))
	nested := decide(t, w.tmp, w.tmp+"/ci/home")
	for _, tc := range []struct {
		cmd  string
		want want
	}{{"rm -rf $TMP/ci", removal}, {"rm -rf ~", removal}, {"mv $TMP/ci $TMP/old", removal}, {"rm -rf $TMP/ci/home/src", allow}} {
		t.Run("nested/"+tc.cmd, func(t *testing.T) { check(t, nested("Bash", bash(tc.cmd)), tc.want) })
	}
	// With the home directory outside every root, removing it is
	// outside the roots, as any write there.
	apart := decide(t, w.tmp)
	for _, tc := range []struct {
		cmd  string
		want want
	}{{"rm -rf ~", roots}, {"mv ~ $TMP/h", roots}, {"rm -rf $TMP", removal}, {"mv $TMP $WS/t", removal}, {"rm -rf $TMP/x", allow}} {
		t.Run("apart/"+tc.cmd, func(t *testing.T) { check(t, apart("Bash", bash(tc.cmd)), tc.want) })
	}
}

func TestReadBeforeWriteAndStale(t *testing.T) {
	w := newWorld(t, nil)
	readme := "$WS/README.md"
	write := map[string]any{"file_path": readme, "content": "# new\n"}
	edit := map[string]any{"file_path": readme, "old_string": "readme", "new_string": "README"}

	check(t, w.decide("Write", write), unreadW)
	check(t, w.decide("mcp__filesystem__write_file", map[string]any{"path": readme, "content": "x"}), unreadW)
	check(t, w.decide("Edit", edit), allow) // an edit names its old text
	check(t, w.decide("Write", map[string]any{"file_path": "$WS/src", "content": "x"}), allow)

	check(t, w.read(t, readme, veto.Succeeded), allow)
	check(t, w.decide("Write", write), allow)
	check(t, w.decide("Edit", edit), allow)

	// The file changes behind the run's back.
	must(t, os.WriteFile(w.ws+"/README.md", []byte("# changed by someone\n"), 0o644))
	check(t, w.decide("Edit", edit), staleW)
	check(t, w.decide("Write", write), staleW)
	// The stale verdict was decided on a recorded probe, ahead of the decision.
	evs, _ := w.store.Events(ctx, w.run.Ref, 0)
	last, probeEv := evs[len(evs)-1], evs[len(evs)-2]
	if probeEv.Kind != veto.EventProbe || probeEv.CallID != last.CallID || probeEv.Fact == nil || probeEv.Fact.Path != w.ws+"/README.md" || !probeEv.Fact.Exists {
		t.Fatalf("event before the stale decision: %+v", probeEv)
	}
	// Reading it again makes it known again.
	check(t, w.read(t, readme, veto.Succeeded), allow)
	check(t, w.decide("Edit", edit), allow)

	// A successful write teaches the new state: writing twice is fine.
	c := w.call("Write", map[string]any{"file_path": "$WS/src/gen.go", "content": "x"})
	check(t, w.gate.Decide(ctx, c), allow)
	must(t, os.WriteFile(w.ws+"/src/gen.go", []byte("x"), 0o644))
	must(t, w.gate.ObserveCall(ctx, c, veto.Succeeded))
	check(t, w.decide("Write", map[string]any{"file_path": "$WS/src/gen.go", "content": "y"}), allow)

	// Moves write bytes that come from their source: no read needed.
	check(t, w.decide("mcp__filesystem__move_file", map[string]any{"source": "$WS/src/main.go", "destination": "$WS/.env.example"}), allow)
}

// E20
func TestKnowledgeOnlyFromSuccessfulResults(t *testing.T) {
	w := newWorld(t, nil)
	write := func(name string) veto.Verdict {
		return w.decide("Write", map[string]any{"file_path": "$WS/" + name, "content": "x"})
	}
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		must(t, os.WriteFile(filepath.Join(w.ws, name), []byte(name), 0o644))
	}
	// Allowed, never reported back: pending teaches nothing.
	check(t, w.read(t, "$WS/a.txt", ""), allow)
	check(t, write("a.txt"), unreadW)
	// Reported as failed, or cancelled: nothing.
	check(t, w.read(t, "$WS/b.txt", veto.Failed), allow)
	check(t, write("b.txt"), unreadW)
	check(t, w.read(t, "$WS/c.txt", veto.Cancelled), allow)
	check(t, write("c.txt"), unreadW)
	// Blocked: a denied read produces no result at all.
	v := w.read(t, "$WS/.env", veto.Succeeded)
	check(t, v, credW)
	if err := w.gate.ObserveCall(ctx, w.call("Read", map[string]any{"file_path": "$WS/.env"}), veto.Failed); err != nil {
		t.Fatal(err)
	}
	// Succeeded: known, with its fingerprint at that moment.
	check(t, w.read(t, "$WS/d.txt", veto.Succeeded), allow)
	check(t, write("d.txt"), allow)

	evs, _ := w.store.Events(ctx, w.run.Ref, 0)
	taught := map[string]bool{}
	for _, e := range evs {
		for _, f := range e.Files {
			if e.Outcome != veto.Succeeded {
				t.Fatalf("knowledge recorded from a %s call", e.Outcome)
			}
			taught[filepath.Base(f.Path)] = true
		}
	}
	if len(taught) != 1 || !taught["d.txt"] {
		t.Fatalf("knowledge recorded for %v, want only d.txt", taught)
	}
}

func TestReferenceExists(t *testing.T) {
	w := newWorld(t, nil)
	run(t, w, []fileCase{
		{"edit-missing", "Edit", map[string]any{"file_path": "$WS/nope.go", "old_string": "a", "new_string": "b"}, missingW},
		{"mcp-edit-missing", "mcp__filesystem__edit_file", map[string]any{"path": "$WS/nope.go", "edits": []any{}}, missingW},
		{"move-missing-source", "mcp__filesystem__move_file", map[string]any{"source": "$WS/nope.go", "destination": "$WS/b.go"}, missingW},
		{"edit-existing", "Edit", map[string]any{"file_path": "$WS/src/main.go", "old_string": "a", "new_string": "b"}, allow},
		{"read-missing-is-the-tools-business", "Read", map[string]any{"file_path": "$WS/nope.go"}, allow},
	})
}

func TestManifestAndWriteScope(t *testing.T) {
	w := newWorld(t, func(c *files.Config) {
		c.Manifest = []string{"src/main.go", "src/new.go", "$TMP/out.txt"}
		c.WriteScope = []string{"src/**", "/tmp-never/**"}
	})
	// The manifest entries are resolved against the workspace, so $TMP in
	// the config is literal here and lists nothing.
	run(t, w, []fileCase{
		{"listed", "Write", map[string]any{"file_path": "$WS/src/new.go", "content": "x"}, allow},
		{"listed-edit", "Edit", map[string]any{"file_path": "src/main.go", "old_string": "a", "new_string": "b"}, allow},
		{"not-listed", "Write", map[string]any{"file_path": "$WS/src/other.go", "content": "x"}, want{"file.manifest", "not_in_manifest"}},
		{"reads-unaffected", "Read", map[string]any{"file_path": "$WS/README.md"}, allow},
	})
	w2 := newWorld(t, func(c *files.Config) { c.WriteScope = []string{"src/**", "docs/*.md"} })
	run(t, w2, []fileCase{
		{"in-scope", "Write", map[string]any{"file_path": "$WS/src/deep/x.go", "content": "x"}, allow},
		{"in-scope-glob", "Write", map[string]any{"file_path": "$WS/docs/a.md", "content": "x"}, allow},
		{"out-of-scope", "Write", map[string]any{"file_path": "$WS/docs/sub/a.md", "content": "x"}, want{"file.write_scope", "outside_write_scope"}},
		{"nested-src-is-not-src", "Write", map[string]any{"file_path": "$WS/vendor/src/x.go", "content": "x"}, want{"file.write_scope", "outside_write_scope"}},
	})
}

func TestWriteGatesOrder(t *testing.T) {
	w := newWorld(t, func(c *files.Config) { c.ExtraRoots = []string{"~"} })
	must(t, os.WriteFile(w.ws+"/.git/hooks/pre-commit", []byte("#!/bin/sh\n"), 0o755))
	run(t, w, []fileCase{
		// outside the roots and a credential: the roots gate names it.
		{"roots-before-credential", "Write", map[string]any{"file_path": "$OUT/.env", "content": "x"}, roots},
		// protected and a persistence target: protected first.
		{"protected-before-persistence", "Write", map[string]any{"file_path": "$WS/.git/hooks/pre-commit", "content": "x"}, protectedW},
		// persistence and a credential: persistence first.
		{"persistence-before-credential", "Write", map[string]any{"file_path": "~/.ssh/authorized_keys", "content": "x"}, persistW},
		// a credential that exists unread: the credential gate first.
		{"credential-before-unread", "Write", map[string]any{"file_path": "$WS/.env", "content": "x"}, credW},
		// unread existing: the last gate.
		{"unread-last", "Write", map[string]any{"file_path": "$WS/README.md", "content": "x"}, unreadW},
	})
	// stale before unread: known, then changed.
	check(t, w.read(t, "$WS/src/main.go", veto.Succeeded), allow)
	must(t, os.WriteFile(w.ws+"/src/main.go", []byte("package changed\n"), 0o644))
	check(t, w.decide("Write", map[string]any{"file_path": "$WS/src/main.go", "content": "x"}), staleW)
}

func TestTargetIsTheFile(t *testing.T) {
	w := newWorld(t, nil)
	v := w.decide("Read", map[string]any{"file_path": "inlink/main.go"})
	if v.Target != (veto.Target{Kind: "file", ID: w.ws + "/src/main.go"}) {
		t.Fatalf("target %v", v.Target)
	}
	v = w.decide("mcp__filesystem__move_file", map[string]any{"source": "$WS/src/main.go", "destination": "$WS/src/b.go"})
	if v.Target.Known() {
		t.Fatalf("a call naming two files has target %v", v.Target)
	}
	if v := w.decide("mcp__filesystem__create_directory", map[string]any{"path": "~nosuchuser/x"}); v.Reason != veto.ReasonTargetUnresolvable {
		t.Fatalf("unresolvable read: %+v", v)
	}
}

func TestMessagesNameTheParameterNotThePath(t *testing.T) {
	const canary = "CANARY-files-91ab"
	w := newWorld(t, nil)
	for _, args := range []map[string]any{
		{"file_path": "$OUT/" + canary, "content": canary},
		{"file_path": "$WS/.git/" + canary, "content": "x"},
		{"file_path": "$WS/" + canary + ".pem", "content": "x"},
	} {
		v := w.decide("Write", args)
		if v.Allowed || strings.Contains(v.Message, canary) || !strings.Contains(v.Message, "file_path") {
			t.Fatalf("verdict %+v", v)
		}
	}
	v := w.decide("mcp__other__x", map[string]any{canary: "$OUT/a"})
	if v.Allowed || strings.Contains(v.Message, canary) || !strings.HasPrefix(v.Message, "An argument") {
		t.Fatalf("sniffed verdict %+v", v)
	}
}

func TestBadPatternsAreErrors(t *testing.T) {
	for _, cfg := range []files.Config{
		{Home: "/h", Protected: []string{"a/[b"}},
		{Home: "/h", Credentials: []string{""}},
		{Home: "", Persistence: []string{"~/.x"}, TempDirs: []string{}},
		{Home: "/h", WriteScope: []string{"!"}},
		{Home: "/h", TempDirs: []string{"relative"}},
	} {
		if cfg.Home == "" {
			// An unknown home makes "~" patterns unresolvable.
			t.Setenv("HOME", "")
		}
		if _, err := files.New(cfg); err == nil {
			t.Errorf("config %+v compiled", cfg)
		}
	}
}

// TestStaleUnderASettledStamp runs the stale gate with a probe that keeps
// stamps (its clock a minute ahead, so the files the world just wrote
// count as long settled): an unchanged file is taken from its stamp, and
// every change still moves it.
func TestStaleUnderASettledStamp(t *testing.T) {
	w := newWorld(t, nil)
	w.probe = probe.Live{Now: func() time.Time { return time.Now().Add(time.Minute) }}
	w.renew()
	file := w.ws + "/src/main.go"
	edit := map[string]any{"file_path": file, "old_string": "main", "new_string": "app"}

	check(t, w.read(t, file, veto.Succeeded), allow)
	known, ok, err := mustState(t, w).Knowledge.File(ctx, file)
	if err != nil || !ok {
		t.Fatalf("known %v %v", ok, err)
	}
	if known.Stamp == (veto.FileStamp{}) {
		t.Skip("the temporary directory's filesystem keeps no stamps")
	}
	check(t, w.decide("Edit", edit), allow)
	evs, _ := w.store.Events(ctx, w.run.Ref, 0)
	if f := evs[len(evs)-2].Fact; f == nil || f.Stamp != known.Stamp || f.Hash != known.Hash {
		t.Fatalf("the edit's probe %+v, known %+v", f, known)
	}

	// The same size and modification time, other content: the change time
	// moves, so the file is read again and the change is seen.
	fi, _ := os.Stat(file)
	must(t, os.WriteFile(file, []byte("package nain\n"), 0o644))
	must(t, os.Chtimes(file, fi.ModTime(), fi.ModTime()))
	check(t, w.decide("Edit", edit), staleW)
}

func mustState(t *testing.T, w *world) veto.RunState {
	t.Helper()
	st, err := w.store.Load(ctx, w.run.Ref)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
