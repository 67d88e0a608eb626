package control_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/presence"
	"github.com/vetohq/veto/rules/control"
	"github.com/vetohq/veto/tools"
)

// world is a home, a workspace, a state and a socket directory of a test's
// own, and veto's binary in a bin directory beside them.
type world struct {
	root, home, ws, bin, runtime string
	set                          *control.Set
	tools                        map[string]*veto.Descriptor
}

// newWorld makes a world. path, when given, is PATH's directories before
// /usr/bin and /bin, each below the world's root.
func newWorld(t *testing.T, cfg control.Config, path ...string) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{root: root, home: root + "/home", ws: root + "/ws", bin: root + "/opt/v", runtime: root + "/run"}
	for _, d := range []string{w.home, w.ws + "/.git", w.bin, w.runtime} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(w.bin+"/veto", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{"/usr/bin", "/bin"}
	for i := len(path) - 1; i >= 0; i-- {
		dirs = append([]string{root + "/" + path[i]}, dirs...)
	}
	env := map[string]string{"XDG_RUNTIME_DIR": w.runtime, "PATH": strings.Join(dirs, ":")}
	cfg.Home, cfg.Executable = w.home, w.bin+"/veto"
	cfg.Getenv = func(k string) string { return env[k] }
	cfg.Vars = map[string]string{"HOME": w.home, "TMPDIR": "/tmp", "USER": "agent"}
	if w.set, err = control.New(cfg); err != nil {
		t.Fatal(err)
	}
	return w
}

// decide runs veto.control alone on a call of tool with args in the
// workspace, and returns its reason ("" for allow).
func (w *world) decide(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	c := &veto.Call{Tool: tool, Args: args, Cwd: w.ws, Workspace: w.ws}
	if w.tools == nil {
		w.tools = map[string]*veto.Descriptor{}
		for _, x := range tools.Defaults() {
			w.tools[x.Name] = &x
		}
	}
	dec, err := w.set.Check(context.Background(), &veto.Input{Call: c, Descriptor: w.tools[tool]})
	if err != nil {
		t.Fatal(err)
	}
	return dec.Reason()
}

func bash(cmd string) map[string]any { return map[string]any{"command": cmd} }

// TestVetoCommands: veto by name, path, symlink and wrapper, with each
// kind of subcommand.
func TestVetoCommands(t *testing.T) {
	w := newWorld(t, control.Config{})
	if err := os.Symlink(w.bin+"/veto", w.ws+"/v"); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ cmd, want string }{
		{"veto approve r c", "veto_command"},
		{"veto exec -- go test ./...", ""},
		{"veto exec --run someone-elses-run -- go test ./...", "veto_command"},
		{"veto exec --run=r2 go test ./...", "veto_command"},
		{"./v approve r-canary c", "veto_command"},
		{w.bin + "/veto uninstall claude-code", "veto_command"},
		{"command veto token list", "veto_command"},
		{"exec veto ui", "veto_command"},
		{"timeout 5 veto serve --listen 127.0.0.1:9", "veto_command"},
		{"script -qc 'veto approve r c' /dev/null", "veto_command"},
		{"script -q -c \"veto ui\" log.txt", "veto_command"},
		{"sh -c \"veto egress allow x --run r\"", "veto_command"},
		{"echo approve | xargs veto", "veto_command_unknown"},
		{"veto policy push", "veto_command"},
		{"veto policy --cwd . show", ""},
		{"veto log", ""},
		{"veto log --run r --json", ""},
		{"veto", ""},
		{"veto explain --tool Read --arg file_path=x", ""},
		{"veto-hook", "veto_hook_forged"},
		{"./v hook claude-code", "veto_hook_forged"},
		{"go run ./cmd/veto-hook claude-code", "veto_hook_forged"},
		{"go run -tags x ./cmd/veto ui", "veto_command"},
		{"go run ./cmd/other approve", ""},
		{"LD_PRELOAD=/tmp/x.so ./v log", "veto_preload"},
		{"git status", ""},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			if got := w.decide(t, "Bash", bash(c.cmd)); got != c.want {
				t.Errorf("reason %q, want %q", got, c.want)
			}
		})
	}
}

// veto.control reads a command or a path in any letter case, and every
// spelling of one (issue 27): a tool that reads "COMMAND" as its command
// must not run veto's switches unseen.
// TestVetoOnPath: a program named without a directory is the first file
// of its name on PATH, wherever PATH's directories lie: veto under
// another name (a hard link, a symlink) is found past directories that
// do not hold it, do not exist, or are reached through a symlink, and a
// word met twice on a line is decided alike both times.
func TestVetoOnPath(t *testing.T) {
	w := newWorld(t, control.Config{}, "gone", "first", "linked", "last")
	for _, d := range []string{"first", "real", "last"} {
		if err := os.MkdirAll(w.root+"/"+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := []byte("#!/bin/sh\n")
	steps := []error{
		os.Symlink(w.root+"/real", w.root+"/linked"),
		os.WriteFile(w.root+"/first/tool", script, 0o755),
		os.Link(w.bin+"/veto", w.root+"/last/tool"),
		os.Link(w.bin+"/veto", w.root+"/last/vv"),
		os.Link(w.bin+"/veto", w.root+"/real/vl"),
		os.Symlink(w.bin+"/veto", w.root+"/last/vs"),
		os.WriteFile(w.root+"/last/plain", script, 0o755),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ cmd, want string }{
		{"vv approve r c", "veto_command"},
		{"vl approve r c", "veto_command"},
		{"vs uninstall claude-code", "veto_command"},
		{"vv log && vv approve r c", "veto_command"},
		{"vv log | vs log && vl approve r c", "veto_command"},
		{"vv log", ""},
		{"plain approve r c", ""},
		{"absent approve r c", ""},
		{"tool approve r c", ""}, // the shell runs first/tool, not veto in last
		{"plain x && vv hook claude-code", "veto_hook_forged"},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			if got := w.decide(t, "Bash", bash(c.cmd)); got != c.want {
				t.Errorf("reason %q, want %q", got, c.want)
			}
		})
	}
}

func TestControlArgumentsInAnyCase(t *testing.T) {
	w := newWorld(t, control.Config{})
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"command upper", "Bash", map[string]any{"COMMAND": "veto approve r c"}, "veto_command"},
		{"command twice, the second veto", "Bash", map[string]any{"command": "git status", "Command": "veto approve r c"}, "veto_command"},
		{"command twice, the first veto", "Bash", map[string]any{"COMMAND": "veto ui", "command": "git status"}, "veto_command"},
		{"command twice, harmless", "Bash", map[string]any{"command": "git status", "Command": "ls"}, ""},
		{"path mixed case", "Write", map[string]any{"File_Path": "~/.config/veto/veto.yaml", "content": "x"}, "veto_files_write"},
		{"path twice", "Write", map[string]any{"file_path": "notes.md", "FILE_PATH": "~/.config/veto/veto.yaml", "content": "x"}, "veto_files_write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.decide(t, tc.tool, tc.args); got != tc.want {
				t.Errorf("reason %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEverySubcommandDecided: each subcommand of the table is refused or
// allowed as its class says.
func TestEverySubcommandDecided(t *testing.T) {
	w := newWorld(t, control.Config{})
	for sub, class := range control.Subcommands {
		got := w.decide(t, "Bash", bash("veto "+sub))
		var want []string
		switch class {
		case control.ReadOnly:
			want = []string{""}
		case control.Changes:
			want = []string{"veto_command"}
		case control.Hook:
			want = []string{"veto_hook_forged"}
		case control.BySub:
			want = []string{"", "veto_command", "veto_command_unknown"}
		}
		ok := false
		for _, x := range want {
			ok = ok || got == x
		}
		if !ok {
			t.Errorf("veto %s: reason %q, want one of %q", sub, got, want)
		}
	}
}

// TestVetoFiles: writes of veto's files, reads of its state and socket
// directory; reads of policy stay allowed.
func TestVetoFiles(t *testing.T) {
	w := newWorld(t, control.Config{Binaries: []string{"/opt/extra/vt"}})
	if err := os.MkdirAll(w.ws+"/link", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.home+"/.config", w.ws+"/cfg"); err != nil {
		t.Fatal(err)
	}
	type fileCase struct {
		tool string
		args map[string]any
		want string
	}
	cases := []fileCase{
		{"Write", map[string]any{"file_path": "~/.config/veto/veto.yaml", "content": "canary"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": "cfg/veto/veto.yaml", "content": "canary"}, "veto_files_write"}, // through a symlink
		{"Write", map[string]any{"file_path": "link/../.veto//veto.yaml", "content": "x"}, "veto_files_write"},
		{"Read", map[string]any{"file_path": "~/.config/veto/veto.yaml"}, ""},
		{"Read", map[string]any{"file_path": "~/.local/state/veto/veto.db-shm"}, "veto_state_read"},
		{"Read", map[string]any{"file_path": w.runtime + "/veto/hook-1.sock.lock"}, "veto_state_read"},
		{"Write", map[string]any{"file_path": w.bin + "/veto", "content": "x"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": "/opt/extra/vt", "content": "x"}, "veto_files_write"},
		{"mcp__fs__write", map[string]any{"where": "~/.gemini/settings.json", "text": "canary"}, "veto_files_write"}, // sniffed
		{"NotebookEdit", map[string]any{"notebook_path": ".cursor/hooks.json", "new_source": "x"}, "veto_files_write"},
		{"Bash", bash("echo canary > ~/.codex/config.toml"), "veto_files_write"},
		{"Bash", bash("cp x ~/.config/veto/$NAME"), "veto_files_write"}, // an unknown name in a known directory
		{"Bash", bash("ln -sf /dev/null ~/.claude/settings.json"), "veto_files_write"},
		{"Bash", bash("truncate -s0 ~/.local/state/veto/veto.db"), "veto_files_write"},
		{"Bash", bash("rm -rf ~/.local/state/veto.old ~/.config/veto"), "veto_files_write"},
		{"Bash", bash("cat ~/.config/veto/veto.yaml"), ""},
		{"Bash", bash("veto validate ~/.config/veto/veto.yaml"), ""},
		{"Bash", bash("strings ~/.local/state/veto/veto.db | grep canary"), "veto_state_read"},
		{"Bash", bash("ls " + w.runtime + "/veto"), "veto_state_read"},
		{"Bash", bash("echo ~/.local/state/veto"), ""},
		{"Write", map[string]any{"file_path": "src/veto.go", "content": "x"}, ""},
		// pi: veto's extension, another extension beside it (loaded after
		// veto's, it could change an allowed call's input), the settings
		// that list more; reading them is not refused.
		{"Write", map[string]any{"file_path": ".pi/extensions/veto.ts", "content": "x"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": "sub/.pi/extensions/later.ts", "content": "x"}, "veto_files_write"},
		{"Bash", bash("echo x > ~/.pi/agent/extensions/later/index.ts"), "veto_files_write"},
		{"Write", map[string]any{"file_path": "~/.pi/agent/settings.json", "content": "{}"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": ".pi/settings.json", "content": "{}"}, "veto_files_write"},
		{"Read", map[string]any{"file_path": ".pi/extensions/veto.ts"}, ""},
		{"Write", map[string]any{"file_path": "src/pi/extensions.go", "content": "x"}, ""},
		// OpenCode: veto's plugin, another plugin beside it, the configs
		// that list more (the project's and the global one).
		{"Write", map[string]any{"file_path": ".opencode/plugins/veto.ts", "content": "x"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": "sub/.opencode/plugin/later.ts", "content": "x"}, "veto_files_write"},
		{"Write", map[string]any{"file_path": "opencode.json", "content": "{}"}, "veto_files_write"},
		{"Bash", bash("echo x > ~/.config/opencode/plugins/later.js"), "veto_files_write"},
		{"Read", map[string]any{"file_path": ".opencode/plugins/veto.ts"}, ""},
		{"Write", map[string]any{"file_path": "src/opencode/plugin.go", "content": "x"}, ""},
	}
	for _, d := range presence.RegistryDirs() { // who the guarded clients are
		cases = append(cases,
			fileCase{"Bash", bash("rm -rf " + d), "veto_files_write"},
			fileCase{"Write", map[string]any{"file_path": d + "/1-1", "content": "{}"}, "veto_files_write"},
			fileCase{"Bash", bash("ls " + d), ""})
	}
	for _, c := range cases {
		t.Run(c.tool+" "+strings.ReplaceAll(c.want, "_", " "), func(t *testing.T) {
			if got := w.decide(t, c.tool, c.args); got != c.want {
				t.Errorf("%v: reason %q, want %q", c.args, got, c.want)
			}
		})
	}
}

// TestListenersRecorded: an address veto serve records is refused to the
// agent's network tools while its process lives; another port is not.
func TestListenersRecorded(t *testing.T) {
	w := newWorld(t, control.Config{Addresses: []string{"10.1.2.3:7000"}})
	t.Setenv("XDG_RUNTIME_DIR", w.runtime)
	remove := control.Listening("serve", "127.0.0.1:18181")
	sock := w.runtime + "/veto/hook-0.sock"
	removeSock := control.Listening("serve-hooks", sock)
	defer removeSock()
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Bash", bash("curl -s http://127.0.0.1:18181/v1/approvals"), "veto_endpoint"},
		{"Bash", bash("curl localhost:18181/ui/"), "veto_endpoint"},
		{"Bash", bash("wget -qO- http://[::1]:18181/"), "veto_endpoint"},
		{"Bash", bash("curl http://2130706433:18181/"), "veto_endpoint"},
		{"Bash", bash("curl --connect-to a.example:443:127.0.0.1:18181 https://a.example/"), "veto_endpoint"},
		{"Bash", bash("socat - TCP:localhost:18181"), "veto_endpoint"},
		{"Bash", bash("curl http://10.1.2.3:7000/"), "veto_endpoint"},
		// The hook socket lies in the socket directory: naming it is a read of it.
		{"Bash", bash("curl --unix-socket " + w.runtime + "/veto/hook-0.sock http://x/"), "veto_state_read"},
		{"WebFetch", map[string]any{"url": "http://localhost:18181/ui/login", "prompt": "p"}, "veto_endpoint"},
		// A connection a command makes under veto exec.
		{"exec.connect", map[string]any{"url": "tcp://127.0.0.1:18181"}, "veto_endpoint"},
		{"exec.connect", map[string]any{"url": "unix:" + sock}, "veto_endpoint"},
		{"exec.connect", map[string]any{"url": "tcp://127.0.0.1:18182"}, ""},
		{"Bash", bash("curl http://127.0.0.1:18182/"), ""},
		{"Bash", bash("curl https://api.example.com/"), ""},
	}
	for _, c := range cases {
		if got := w.decide(t, c.tool, c.args); got != c.want {
			t.Errorf("%v: reason %q, want %q", c.args, got, c.want)
		}
	}
	remove()
	if got := w.decide(t, "Bash", bash("curl -s http://127.0.0.1:18181/v1/approvals")); got != "" {
		t.Errorf("after the listener stopped: reason %q, want allow", got)
	}
}

// TestReloadedPolicyFilesRecorded: a policy file a running veto serve or
// veto mcp reloads (its --policy, wherever it lies) is veto's while the
// process runs: a write of it would be in force within a second. Reading
// it is not refused; another file beside it is not veto's.
func TestReloadedPolicyFilesRecorded(t *testing.T) {
	w := newWorld(t, control.Config{})
	t.Setenv("XDG_RUNTIME_DIR", w.runtime)
	file := w.root + "/srv/fleet/veto.yaml"
	remove := control.Reloading("serve", file, "relative.yaml")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Write", map[string]any{"file_path": file, "content": "{}"}, "veto_files_write"},
		{"Edit", map[string]any{"file_path": file, "old_string": "a", "new_string": "b"}, "veto_files_write"},
		{"Bash", bash("sed -i /org.no-prod/d " + file), "veto_files_write"},
		{"Bash", bash(": > " + file), "veto_files_write"},
		{"Bash", bash("cat " + file), ""},
		{"Write", map[string]any{"file_path": w.root + "/srv/fleet/notes.md", "content": "x"}, ""},
	}
	for _, c := range cases {
		if got := w.decide(t, c.tool, c.args); got != c.want {
			t.Errorf("%s %v: reason %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	remove()
	if got := w.decide(t, "Write", map[string]any{"file_path": file, "content": "{}"}); got != "" {
		t.Errorf("after the process stopped: reason %q, want allow", got)
	}

	// The key a running veto serve signs with: neither read nor written.
	key := w.root + "/srv/keys/sign.pem"
	unhold := control.Holding("serve", key)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"Read", map[string]any{"file_path": key}, "veto_state_read"},
		{"Bash", bash("base64 " + key), "veto_state_read"},
		{"Write", map[string]any{"file_path": key, "content": "x"}, "veto_files_write"},
		{"Read", map[string]any{"file_path": key + ".pub"}, ""},
	} {
		if got := w.decide(t, c.tool, c.args); got != c.want {
			t.Errorf("%s %v: reason %q, want %q", c.tool, c.args, got, c.want)
		}
	}
	unhold()
	if got := w.decide(t, "Read", map[string]any{"file_path": key}); got != "" {
		t.Errorf("after the signer stopped: reason %q, want allow", got)
	}
}

// TestSecretsAndSignals: reading VETO_* and signalling veto by name.
func TestSecretsAndSignals(t *testing.T) {
	w := newWorld(t, control.Config{})
	cases := []struct{ cmd, want string }{
		{"echo $VETO_TOKEN", "veto_secret"},
		{"[ -n \"$VETO_POSTGRES\" ] && echo set", "veto_secret"},
		{"cat <<EOF\n${VETO_TOKEN}\nEOF", "veto_secret"},
		{"bash -c 'echo $VETO_URL'", "veto_secret"},
		{"printenv VETO_TOKEN", "veto_secret"},
		{"set | grep -i veto", "veto_secret"},
		{"perl -e 'print $ENV{VETO_TOKEN}'", "veto_secret"},
		{"awk 'BEGIN{print ENVIRON[\"VETO_TOKEN\"]}'", "veto_secret"},
		{"echo '$VETO_TOKEN'", ""}, // quoted: not expanded
		{"VETO_TOKEN=x env | wc -l", ""},
		{"VETO_STATE=/tmp/s.db go version", ""},
		{"pkill veto", "veto_signal"},
		{"pkill -9 -f 'vet[o] serve'", "veto_signal"},
		{"killall -q veto-hook", "veto_signal"},
		{"pgrep -f serve-hooks | xargs kill", "veto_signal"},
		{"kill -TERM $(pidof veto)", "veto_signal"},
		{"pgrep -l veto", ""},
		{"killall node", ""},
		{"kill 4242", ""},
		{"tmux send-keys -t 0 'veto approve r1 c1' Enter", "veto_terminal"},
		{"tmux -L main capture-pane -p -t 0", "veto_terminal"},
		{"tmux new -d -s x \\; send -t x yes Enter", "veto_terminal"},
		{"tmux $CMD -t 0", "veto_terminal"}, // a word veto cannot read
		{"screen -S main -X stuff 'yes\\n'", "veto_terminal"},
		{"xdotool type 4kQ9zX", "veto_terminal"},
		{"tmux ls", ""},
		{"tmux new-session -d -s build 'make test'", ""},
		{"screen -ls", ""},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			if got := w.decide(t, "Bash", bash(c.cmd)); got != c.want {
				t.Errorf("reason %q, want %q", got, c.want)
			}
		})
	}
}

// TestCheckAddress: the control section's addresses.
func TestCheckAddress(t *testing.T) {
	for a, ok := range map[string]bool{"127.0.0.1:8181": true, "[::1]:80": true, "/run/veto.sock": true,
		"localhost": false, "host:port": false, "run/veto.sock": false} {
		if err := control.CheckAddress(a); (err == nil) != ok {
			t.Errorf("%s: %v", a, err)
		}
	}
}

// BenchmarkCheck is veto.control on a typical command and a Write: its
// own shell analysis, path resolution and PATH look-ups.
func BenchmarkCheck(b *testing.B) {
	t := &testing.T{}
	w := newWorld(t, control.Config{})
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"bash", "Bash", bash("go test ./... 2>&1 | tail -5 && git status")},
		{"write", "Write", map[string]any{"file_path": "src/main.go", "content": "x"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				w.decide(t, c.tool, c.args)
			}
		})
	}
}
