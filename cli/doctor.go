package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vetohq/veto/supervise"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vetohq/veto"
	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
	"github.com/vetohq/veto/eventlog"
	"github.com/vetohq/veto/hook"
	"github.com/vetohq/veto/hook/wire"
	"github.com/vetohq/veto/memstore"
	"github.com/vetohq/veto/policy"
	"github.com/vetohq/veto/policy/live"
	"github.com/vetohq/veto/state"
)

const doctorDescription = `Check that veto guards the agent clients it is registered with, and say how to fix what is wrong.

  veto doctor [CLIENT] [--dir DIR]

For each client (or CLIENT alone): where its project settings (in --dir) and user settings
register veto; that each registered command is one veto init writes, that its program
exists, and that it answers a probe event (a read of ~/.ssh/id_rsa, decided on a scratch
state) in the client's blocking form, within the registered timeout; that the entry carries
the client's fail-closed switch where the client has one, and every event veto handles.
Then that the policy files load, that the state file opens and every run's hash chain
holds, and whether a hook server of this build answers. Exit 1 on any problem.`

// doctor collects what it finds: problems fail it, notes only inform.
type doctor struct {
	e        *env
	problems int
}

func (d *doctor) ok(format string, a ...any) {
	fmt.Fprintf(d.e.stdout, "  ok       "+format+"\n", a...)
}
func (d *doctor) note(format string, a ...any) {
	fmt.Fprintf(d.e.stdout, "  note     "+format+"\n", a...)
}

// warn is what works but is worth knowing: it does not fail.
func (d *doctor) warn(format string, a ...any) {
	fmt.Fprintf(d.e.stdout, "  warn     "+format+"\n", a...)
}

func (d *doctor) problem(fix, format string, a ...any) {
	d.problems++
	fmt.Fprintf(d.e.stdout, "  PROBLEM  "+format+"\n", a...)
	if fix != "" {
		fmt.Fprintf(d.e.stdout, "           fix: %s\n", fix)
	}
}

func runDoctor(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "doctor", "[CLIENT] [--dir DIR]", doctorDescription)
	dir := fs.String("dir", ".", "the project directory")
	var only *clients.Client
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if only = clients.Lookup(args[0]); only == nil {
			fmt.Fprintf(e.stderr, "veto doctor: %q is not a client: %s\n", args[0], clients.List(clients.Names(), "or"))
			return ExitUsage
		}
		args = args[1:]
	}
	if code, done := parse(e, fs, args); done {
		return code
	}
	d := &doctor{e: e}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		abs = *dir
	}
	registered := 0
	found := map[string]int{}
	for _, c := range clients.All {
		if only != nil && c != only {
			continue
		}
		fmt.Fprintf(e.stdout, "%s\n", c.Display)
		n := d.client(ctx, c, abs)
		registered += n
		found[c.Name] = n
		d.guest(c, found)
		if n == 0 {
			if only != nil {
				d.problem("veto init "+c.Name+" (--user for every project)", "veto is not registered with %s", c.Display)
			} else {
				d.note("not registered (veto init %s registers it)", c.Name)
			}
		}
	}
	if only == nil && registered == 0 {
		d.problem("veto init CLIENT, for the client you use", "veto is registered with no client")
	}
	fmt.Fprintln(e.stdout, "veto")
	d.policy(abs)
	d.state(ctx)
	d.server()
	d.supervisor()
	if d.problems > 0 {
		fmt.Fprintf(e.stdout, "%d problem(s)\n", d.problems)
		return ExitDeny
	}
	fmt.Fprintln(e.stdout, "no problems")
	return ExitAllow
}

// guest says, for a client that runs the hooks another client's settings
// register (agent.Guests: Copilot CLI runs Claude Code's), that veto's
// hook there answers it too, and warns where veto is registered for both:
// each of the client's calls then reaches veto twice.
func (d *doctor) guest(c *clients.Client, found map[string]int) {
	for _, g := range agent.Guests() {
		if g.Client != c || found[g.Host.Name] == 0 {
			continue
		}
		if found[c.Name] > 0 {
			d.warn("%s also runs veto's %s hooks, so each of its calls reaches veto twice: its own hooks decide it, and the %s hook answers with their decision (one decision; uninstall one registration to run one hook: veto uninstall %s, or veto uninstall %s)",
				c.Display, g.Host.Display, g.Host.Display, c.Name, g.Host.Name)
		} else {
			d.note("%s runs veto's %s hooks too: veto decides its calls there as %s's", c.Display, g.Host.Display, c.Display)
		}
	}
}

// client checks c's settings files; it returns how many veto entries it
// found.
func (d *doctor) client(ctx context.Context, c *clients.Client, dir string) int {
	ch, _ := hooksOf(c.Name)
	var paths []string
	if c.Settings.Project != "" {
		paths = append(paths, filepath.Join(dir, c.Settings.Project))
	}
	if c.Settings.User != "" {
		if home, err := os.UserHomeDir(); err == nil {
			p := filepath.Join(home, c.Settings.User)
			if x := os.Getenv(c.Settings.UserDirEnv); c.Settings.UserDirEnv != "" && x != "" {
				p = filepath.Join(x, filepath.Base(c.Settings.User))
			}
			if len(paths) == 0 || p != paths[0] {
				paths = append(paths, p)
			}
		}
	}
	found := 0
	for _, path := range paths {
		if c.Settings.Extension {
			found += d.extension(ctx, c, path, dir)
			continue
		}
		settings, err := readSettings(path)
		if err != nil {
			d.problem("fix the file, or move it aside and run veto init "+c.Name, "%s: %v", path, err)
			continue
		}
		entries, events := vetoEntries(ch, settings, c.Name)
		if len(entries) == 0 {
			continue
		}
		found += len(entries)
		var missing []string
		for _, ev := range ch.events {
			if !events[ev.Name] {
				missing = append(missing, ev.Name)
			}
		}
		if len(missing) > 0 {
			d.problem("veto init "+c.Name, "%s: veto is not registered for %s", path, strings.Join(missing, ", "))
		}
		commands := map[string]map[string]any{}
		for _, e := range entries {
			cmd, _ := e[ch.CommandKey].(string)
			commands[cmd] = e
		}
		for cmd, e := range commands {
			d.entry(ctx, c, path, cmd, e, dir)
		}
	}
	return found
}

// vetoEntries are the entries of settings that veto init wrote for the
// client, and the events they answer.
func vetoEntries(ch clientHooks, settings map[string]any, client string) ([]map[string]any, map[string]bool) {
	var out []map[string]any
	events := map[string]bool{}
	hooks, _ := settings["hooks"].(map[string]any)
	for name, list := range hooks {
		items, _ := list.([]any)
		for _, item := range items {
			candidates := []any{item}
			if ch.Grouped {
				m, _ := item.(map[string]any)
				candidates, _ = m["hooks"].([]any)
			}
			for _, h := range candidates {
				if ch.isVeto(h, client) {
					out = append(out, h.(map[string]any))
					events[name] = true
				}
			}
		}
	}
	return out, events
}

// entry checks one registered command: its shape, its program, the
// fail-closed switch, and a probe through it.
func (d *doctor) entry(ctx context.Context, c *clients.Client, path, cmd string, e map[string]any, dir string) {
	argv, err := splitCommand(clients.Unguarded(cmd), c.Name)
	if err != nil {
		d.problem("veto init "+c.Name+" (it rewrites veto's entries)", "%s: %v", path, err)
		return
	}
	fi, err := os.Stat(argv[0])
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.problem("install veto there again, or run veto init "+c.Name+" from the veto you use",
			"%s: the registered program %s does not exist: %s lets every call run when a hook cannot start", path, argv[0], c.Display)
		return
	case err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
		d.problem("chmod +x it, or run veto init "+c.Name+" again", "%s: the registered program %s is not an executable file", path, argv[0])
		return
	}
	for k, v := range c.Settings.FailClosed {
		if e[k] != v {
			d.problem("veto init "+c.Name+" (it adds the switch)", "%s: the entry lacks %s: %s, so a hook that fails may let the call run", path, k, jsonString(v))
		}
	}
	budget := registeredTimeout(c, e)
	took, err := d.probe(ctx, c, argv, dir, budget)
	if err != nil {
		d.problem("run the command by hand with a hook event on stdin to see why; veto init "+c.Name+" rewrites it", "%s: %s: %v", path, cmd, err)
		return
	}
	d.ok("%s: %s refuses a read of ~/.ssh/id_rsa in %s's blocking form (%d ms of %s)", path, filepath.Base(argv[0]),
		c.Display, took.Milliseconds(), budget)
}

// splitCommand reads a command veto init writes: a program, shell-quoted
// as shellQuote quotes it, then "hook CLIENT" (veto) or "CLIENT"
// (veto-hook). Anything else is not run.
func splitCommand(cmd, client string) ([]string, error) {
	var prog, rest string
	if strings.HasPrefix(cmd, "'") {
		end := strings.Index(cmd[1:], "'")
		if end < 0 {
			return nil, errors.New("the command is not one veto init writes (an unterminated quote)")
		}
		prog, rest = cmd[1:1+end], cmd[2+end:]
	} else {
		i := strings.IndexByte(cmd, ' ')
		if i < 0 {
			return nil, errors.New("the command is not one veto init writes")
		}
		prog, rest = cmd[:i], cmd[i:]
	}
	if strings.ContainsAny(prog, "'\"$`;&|<>\n") || !filepath.IsAbs(prog) {
		return nil, errors.New("the command is not one veto init writes (not an absolute program path)")
	}
	switch strings.TrimSpace(rest) {
	case "hook " + client:
		return []string{prog, "hook", client}, nil
	case client:
		return []string{prog, client}, nil
	}
	return nil, fmt.Errorf("the command is not one veto init writes (want PROGRAM hook %s or veto-hook %s)", client, client)
}

// registeredTimeout is the timeout the client gives the hook, from the
// entry's field the client table names, else 60 s.
func registeredTimeout(c *clients.Client, e map[string]any) time.Duration {
	var f float64
	switch v := e[c.Settings.TimeoutKey].(type) {
	case json.Number:
		f, _ = v.Float64()
	case float64:
		f = v
	}
	if c.Settings.TimeoutKey == "" || f <= 0 {
		return 60 * time.Second
	}
	return time.Duration(f * float64(c.Settings.TimeoutUnit))
}

// probe runs argv with the client's probe event, on a scratch state and
// without the hook server, and checks the reply is the blocking form. A
// probe slower than the client waits is run once more: a first run can
// pay for a cold disk cache or a moment's load, and the client's calls
// are answered as the second is; two slow runs are the problem.
func (d *doctor) probe(ctx context.Context, c *clients.Client, argv []string, dir string, budget time.Duration) (time.Duration, error) {
	took, err := d.probeOnce(ctx, c, argv, dir, budget)
	if _, slow := err.(slowProbe); slow {
		took, err = d.probeOnce(ctx, c, argv, dir, budget)
	}
	return took, err
}

// slowProbe is a probe answered past the client's timeout.
type slowProbe struct{ took, budget time.Duration }

func (e slowProbe) Error() string {
	return fmt.Sprintf("it answered in %d ms, past the %s the client waits", e.took.Milliseconds(), e.budget)
}

func (d *doctor) probeOnce(ctx context.Context, c *clients.Client, argv []string, dir string, budget time.Duration) (time.Duration, error) {
	if c.Probe == "" {
		return 0, errors.New("this client has no probe event")
	}
	scratch, err := os.MkdirTemp("", "veto-doctor-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch)
	cwd, _ := json.Marshal(dir)
	ctx, cancel := context.WithTimeout(ctx, budget+time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VETO_STATE="+filepath.Join(scratch, "veto.db"), "VETO_NO_SERVER=1")
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(c.Probe, "$CWD", string(cwd)))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	exit := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	case err != nil:
		return took, fmt.Errorf("it does not run: %v", err)
	}
	if took > budget {
		return took, slowProbe{took, budget}
	}
	if exit != c.Deny.Exit {
		return took, fmt.Errorf("it exited %d where a denial exits %d, so %s would let the call run", exit, c.Deny.Exit, c.Display)
	}
	if c.Deny.Stdout != nil && !blockingOutput(c, stdout.Bytes()) {
		return took, fmt.Errorf("its output is not %s's denial", c.Display)
	}
	if c.Deny.Stderr && strings.TrimSpace(stderr.String()) == "" {
		return took, errors.New("it gave no reason on stderr")
	}
	return took, nil
}

func (d *doctor) policy(dir string) {
	p, err := loadPolicy(dir, "", "")
	if err != nil {
		n, first := 1, ""
		if ps, ok := err.(policy.Problems); ok && len(ps) > 0 {
			n, first = len(ps), ps[0].String()
		}
		d.problem("veto validate shows each problem with its place; fix them", "the policy does not load (%d problem(s)): every call is refused until it does (a running veto serve or veto mcp keeps deciding with the last good one)", n)
		if first != "" {
			fmt.Fprintf(d.e.stdout, "           first: %s\n", first)
		}
		return
	}
	d.ok("policy: %d file(s) load, %d rule(s) of your own", len(p.Layers), len(p.Rules))
}

// revisions checks the revisions the shared database marks: each loads
// with this veto (an instance that cannot load the active one refuses to
// start, and keeps the last good one when it changes).
func (d *doctor) revisions(ctx context.Context, revs *state.Revisions) {
	h, err := revs.Heads(ctx)
	if err != nil {
		d.problem("veto policy revisions --postgres DSN says more", "policy revisions: the database's cannot be read: %s", stateCause(err))
		return
	}
	if h.Active == "" {
		d.note("policy revisions: none active on the database; each instance decides with its own files")
	}
	for _, r := range []struct{ head, id string }{{"active", h.Active}, {"shadow", h.Shadow}} {
		if r.id == "" {
			continue
		}
		p, err := live.Stored(ctx, revs, r.id, &lazyCEL{})
		if err == nil {
			_, err = p.Gate(policy.BuildOptions{Store: memstore.New()})
		}
		if err != nil {
			d.problem("push a revision this veto loads, or activate an older one: veto policy revisions",
				"policy revision %s (%s on the database) does not load with this veto: %s", r.id, r.head, strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		d.ok("policy revision %s is %s on the database and loads, %d rule(s) of its own; the policy files apply only while none is active", r.id, r.head, len(p.Rules))
	}
}

func (d *doctor) state(ctx context.Context) {
	if dsn := os.Getenv("VETO_POSTGRES"); dsn != "" {
		s, err := state.OpenDurable(ctx, state.Name{DSN: dsn}, state.DurableOptions{Busy: 5 * time.Second})
		if err != nil {
			se := state.Refusal(state.Name{DSN: dsn}, err)
			fix := stateHint[se.Cause]
			if se.Cause == veto.CauseUnreachable {
				fix = "start the database, or fix VETO_POSTGRES"
			}
			d.problem(fix, "state: %s (VETO_POSTGRES), so every call is refused (cause: %s)", se.Reason(), se.Cause)
			return
		}
		defer s.Close()
		d.chains(ctx, s, "the PostgreSQL database in VETO_POSTGRES")
		if db, ok := s.(interface{ DB() *sql.DB }); ok {
			d.revisions(ctx, state.NewRevisions(func() *sql.DB { return db.DB() }, "postgres"))
		}
		return
	}
	path := os.Getenv("VETO_STATE")
	if path == "" {
		p, err := state.DefaultPath()
		if err != nil {
			d.problem("set XDG_STATE_HOME or HOME", "no state directory: %v", err)
			return
		}
		path = p
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.note("state: %s does not exist yet; the first call makes it", path)
		return
	case err != nil:
		d.problem("check the directory's permissions", "state: %s: %v", path, errText(err))
		return
	case fi.Mode().Perm()&0o077 != 0:
		d.problem("chmod 600 "+path, "state: %s is readable by others (mode %o)", path, fi.Mode().Perm())
	}
	s, err := state.OpenDurable(ctx, state.Name{Path: path}, state.DurableOptions{})
	if err != nil {
		se := state.Refusal(state.Name{Path: path}, err)
		fix := stateHint[se.Cause]
		if se.Cause == veto.CauseDamaged {
			fix = "move it aside and start a new state, the damaged file kept for a post-mortem: veto state repair"
		}
		d.problem(fix, "state: %s; it does not open, so every call is refused (cause: %s)", se.Reason(), se.Cause)
		return
	}
	defer s.Close()
	d.chains(ctx, s, path)
}

// chains verifies every run's hash chain in the store s, named where.
func (d *doctor) chains(ctx context.Context, s durableStore, where string) {
	path := where
	runs, err := s.Runs(ctx)
	if err != nil {
		d.problem("move it aside; veto starts a new state", "state: %s cannot be read: %v", path, err)
		return
	}
	broken := 0
	for _, run := range runs {
		first, prev, stored, err := s.Chain(ctx, run)
		if err != nil || eventlog.VerifyChain(stored, first, prev) != nil {
			broken++
		}
	}
	if broken > 0 {
		d.problem("veto log verify names each broken link; veto state repair marks those runs incomplete", "state: %d of %d run(s) in %s have a broken hash chain", broken, len(runs), path)
		return
	}
	d.ok("state: %s opens; %d run(s), every chain holds", path, len(runs))
}

func (d *doctor) server() {
	sock := hook.SocketPath()
	switch build, ok := hook.ServerBuild(sock); {
	case !ok:
		d.note("hook server: none answers on %s (veto-hook starts one on its next call)", sock)
	case build != wire.Build():
		d.note("hook server: one of another build (%s) answers on %s; veto-hook hands its calls to veto hook (veto serve-hooks --stop ends it)", build, sock)
	default:
		d.ok("hook server: answers on %s (build %s)", sock, build)
	}
}

// supervisor reports what veto exec can do on this kernel: without seccomp
// user notification a command the analyzer cannot vouch for is refused,
// not supervised; without Landlock it is supervised without the floor.
func (d *doctor) supervisor() {
	f := supervise.Probe()
	switch {
	case !f.UserNotif:
		d.note("veto exec: this system cannot supervise a command (%s); what the analyzer cannot vouch for is refused", f.Why)
	case f.Landlock == 0:
		d.note("veto exec: supervises with seccomp user notification; no Landlock floor (%s)", f.Why)
	default:
		d.ok("veto exec: supervises with seccomp user notification and Landlock ABI %d", f.Landlock)
	}
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
