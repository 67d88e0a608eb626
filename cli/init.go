package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vetohq/veto/clients"
)

// initDescription is init's and uninstall's help, from the client table.
func initDescription() string {
	var lines strings.Builder
	for _, c := range clients.All {
		user := "project only"
		if st := c.Settings; st.User != "" {
			user = "--user: ~/" + st.User
			if st.UserDirEnv != "" {
				user = "--user: $" + st.UserDirEnv + "/" + filepath.Base(st.User) + ", else ~/" + st.User
			}
		}
		fmt.Fprintf(&lines, "  %-12s %s (%s)\n", c.Name, c.Settings.Project, user)
	}
	var notes strings.Builder
	for _, c := range clients.All {
		if c.Note != "" {
			notes.WriteString("\n\n" + c.Note)
		}
	}
	return `Register veto with an agent client, or remove it.

  veto init CLIENT [--project | --user] [--dir DIR] [--dry-run]
  veto init CLIENT --url URL [...]   the client's hooks go to veto serve at URL
  veto uninstall CLIENT [--project | --user] [--dir DIR] [--dry-run]

CLIENT, and the settings file init writes:
` + lines.String() + `
init adds veto's hook command, with the absolute path of this veto binary, for the
client's session-start, before-tool and after-tool events. It keeps every other
setting and hook, and running it twice changes nothing. --project (the default)
writes in DIR (default: the current directory); --user in the home directory.
uninstall removes only what init added. With --url, each client's command hooks run veto hook
CLIENT --url URL --token-file FILE, which forwards the event to veto serve with the hook's token
read from FILE: an agent's token (role agent, acting as agent:CLIENT or --actor agent:NAME),
made by init in veto's config directory (0600) in the state --state or --postgres names, or
given with --token-file. The token is never in the client's environment. With --http, Claude
Code posts each hook itself (URL/v1/hooks/claude-code, "type": "http", "onFailure": "block"),
reading the token from $VETO_TOKEN, which the agent's shell inherits too: an agent's token
answers nothing, but prefer the command form.` + notes.String()
}

// clientHooks is how one client's settings hold hooks: the table's layout
// and the events init registers.
type clientHooks struct {
	clients.Settings
	events []clients.Event
	note   string
}

// hooksOf is the client's layout, from the table.
func hooksOf(name string) (clientHooks, bool) {
	c := clients.Lookup(name)
	if c == nil {
		return clientHooks{}, false
	}
	ch := clientHooks{Settings: c.Settings, note: c.Note}
	for _, ev := range c.Events {
		if !ev.Unregistered {
			ch.events = append(ch.events, ev)
		}
	}
	return ch, true
}

func runInit(ctx context.Context, e *env, args []string) int { return initOrUninstall(e, "init", args) }
func runUninstall(ctx context.Context, e *env, args []string) int {
	return initOrUninstall(e, "uninstall", args)
}

func initOrUninstall(e *env, verb string, args []string) int {
	fs := newFlags(e, verb, "CLIENT [--project | --user] [--dir DIR] [--dry-run]", initDescription())
	user := fs.Bool("user", false, "the user's settings, in the home directory")
	fs.Bool("project", true, "the project's settings, in --dir")
	dir := fs.String("dir", ".", "the project directory, with --project")
	dry := fs.Bool("dry-run", false, "print the settings that would be written, and write nothing")
	url := fs.String("url", "", "init claude-code: register veto serve's HTTP hook at this base URL (its token in $"+TokenEnv+") instead of a command")
	httpHook := fs.Bool("http", false, "init claude-code --url: register Claude Code's HTTP hook, which reads the token from $"+TokenEnv+" (the agent's shell can read it too), instead of the command hook that reads it from a file")
	hookActorFlag := fs.String("actor", "", "init --url: the agent the hook's token acts as (default agent:CLIENT)")
	tokenFile := fs.String("token-file", "", "init --url: a file (0600) holding the hook's token, an agent's (default: made in veto's config directory)")
	state := fs.String("state", os.Getenv("VETO_STATE"), "init --url: the SQLite state veto serve decides on, where the hook's token is kept")
	pg := fs.String("postgres", os.Getenv("VETO_POSTGRES"), "init --url: the PostgreSQL database veto serve decides on instead")
	mcp := fs.Bool("mcp", false, "claude-code: put veto mcp in front of every stdio server of the project's .mcp.json (uninstall: take it away)")
	var ch clientHooks
	ok := false
	if len(args) > 0 {
		ch, ok = hooksOf(args[0])
	}
	if !ok {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			if code, done := parse(e, fs, args); done {
				return code
			}
		}
		fmt.Fprintf(e.stderr, "veto %s: want a client: %s\n", verb, clients.List(clients.Names(), "or"))
		return ExitUsage
	}
	client := args[0]
	if code, done := parse(e, fs, args[1:]); done {
		return code
	}
	if *mcp {
		return initMCP(e, verb, client, *dir, *dry)
	}
	path := filepath.Join(*dir, ch.Project)
	if *user {
		if ch.User == "" {
			fmt.Fprintf(e.stderr, "veto %s %s: this client has no user settings for hooks; use --project\n", verb, client)
			return ExitUsage
		}
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintf(e.stderr, "veto %s: no home directory: %v\n", verb, err)
			return ExitDeny
		}
		path = filepath.Join(home, ch.User)
		if dir := os.Getenv(ch.UserDirEnv); ch.UserDirEnv != "" && dir != "" {
			path = filepath.Join(dir, filepath.Base(ch.User))
		}
	}
	if ch.Extension {
		// The client's file is an extension veto writes whole (pi).
		return initExtension(e, verb, client, path, extensionOpts{url: *url, actor: *hookActorFlag, tokenFile: *tokenFile,
			state: *state, pg: *pg, dry: *dry, http: *httpHook})
	}
	settings, err := readSettings(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %s: %v\n", verb, path, err)
		return ExitDeny
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "veto %s: cannot find this veto binary: %v\n", verb, err)
		return ExitDeny
	}
	command := hookCommand(self, client)
	hh, hasHTTP := ch.httpForm(client)
	if *url != "" && verb != "init" {
		fmt.Fprintf(e.stderr, "veto %s %s: --url is init's\n", verb, client)
		return ExitUsage
	}
	if *url == "" && (*httpHook || *hookActorFlag != "" || *tokenFile != "") {
		fmt.Fprintf(e.stderr, "veto %s %s: --http, --actor and --token-file go with init --url\n", verb, client)
		return ExitUsage
	}
	if *httpHook && !hasHTTP {
		fmt.Fprintf(e.stderr, "veto %s %s: this client has no HTTP hooks; drop --http\n", verb, client)
		return ExitUsage
	}
	useHTTP := *url != "" && hasHTTP && *httpHook
	var tokenNote string
	if *url != "" {
		// The hook's token: an agent's, never a person's.
		file, note, err := setUpHookToken(context.Background(), hookTokenOpts{client: client, actor: *hookActorFlag,
			file: *tokenFile, state: *state, pg: *pg, dry: *dry})
		if err != nil {
			fmt.Fprintf(e.stderr, "veto %s %s --url: %v\n", verb, client, err)
			return ExitDeny
		}
		tokenNote = note
		if useHTTP {
			tokenNote += "\nClaude Code's HTTP hook reads the token from $" + TokenEnv + " only: export VETO_TOKEN=$(cat " + shellQuote(file) +
				") where Claude Code starts; the agent's shell inherits it, and an agent's token answers nothing"
		} else {
			// veto hook forwards each event to the service, with the
			// token read from the file: none is in the client's
			// environment.
			command = shellQuote(self) + " hook " + client + " --url " + shellQuote(strings.TrimRight(*url, "/")) +
				" --token-file " + shellQuote(file)
		}
	}
	if ch.Guard {
		command = clients.Guarded(command)
	}
	var changed bool
	switch {
	case useHTTP:
		// The HTTP hook replaces veto's command hooks: one answer a call.
		command = hookURL(*url, client)
		changed = ch.remove(settings, client, "")
		changed = hh.remove(settings, client, command) || changed
		changed = hh.add(settings, command) || changed
	case verb == "init":
		// veto's entries with another command (another path, or veto hook
		// where veto-hook is now installed) are replaced.
		changed = ch.remove(settings, client, command)
		if hasHTTP {
			changed = hh.remove(settings, client, "") || changed
		}
		changed = ch.add(settings, command) || changed
	default:
		changed = ch.remove(settings, client, "")
		if hasHTTP {
			changed = hh.remove(settings, client, "") || changed
		}
	}
	// Written as people read it: the guard's >&2 stays as it is, not
	// \u003e\u0026.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	out := buf.Bytes()
	if *dry {
		fmt.Fprintf(e.stdout, "# %s (dry run; nothing written)\n%s", path, out)
		return ExitAllow
	}
	if !changed {
		fmt.Fprintf(e.stdout, "%s: already as it should be; nothing changed\n", path)
		if tokenNote != "" {
			fmt.Fprintln(e.stdout, tokenNote)
		}
		return ExitAllow
	}
	if err := writeSettings(path, out); err != nil {
		fmt.Fprintf(e.stderr, "veto %s: %v\n", verb, err)
		return ExitDeny
	}
	if verb == "init" {
		var names []string
		for _, ev := range ch.events {
			names = append(names, ev.Name)
		}
		fmt.Fprintf(e.stdout, "%s: veto now answers %s (%s)\n", path, strings.Join(names, ", "), command)
		if tokenNote != "" {
			fmt.Fprintln(e.stdout, tokenNote)
		}
		if ch.note != "" {
			fmt.Fprintln(e.stdout, ch.note)
		}
	} else {
		fmt.Fprintf(e.stdout, "%s: veto's hooks removed\n", path)
	}
	return ExitAllow
}

// writeSettings replaces a settings file whole: written beside it, then
// renamed over it, so a client never reads half of it.
func writeSettings(path string, out []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".veto-tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// readSettings reads a settings file as a JSON object; a missing file is
// an empty one.
func readSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errors.New("not a JSON object; fix or move it first")
	}
	return m, nil
}

// isVeto reports whether a hook entry is one veto init added for client
// ("" : for any client): veto hook CLIENT or veto-hook CLIENT.
func (ch clientHooks) isVeto(h any, client string) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	c, _ := m[ch.CommandKey].(string)
	if client == "" {
		return true
	}
	if ch.CommandKey == "url" {
		return isVetoURL(c, client)
	}
	return strings.HasSuffix(c, " hook "+client) || strings.Contains(c, " hook "+client+" --url ") || strings.HasSuffix(c, "veto-hook "+client) || strings.HasSuffix(c, "veto-hook' "+client)
}

// hookCommand is the command init registers: veto-hook, the hook server's
// small client, when it is installed next to this veto, else this veto's
// hook subcommand.
func hookCommand(self, client string) string {
	lean := filepath.Join(filepath.Dir(self), "veto-hook")
	if fi, err := os.Stat(lean); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return shellQuote(lean) + " " + client
	}
	return shellQuote(self) + " hook " + client
}

func (ch clientHooks) entry(command string) map[string]any {
	m := map[string]any{ch.CommandKey: command}
	for k, v := range ch.Entry {
		m[k] = v
	}
	for k, v := range ch.FailClosed {
		m[k] = v
	}
	return m
}

// add registers command for every event, unless it is there already.
func (ch clientHooks) add(settings map[string]any, command string) bool {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	changed := false
	for k, v := range ch.Top {
		if _, ok := settings[k]; !ok {
			settings[k] = v
			changed = true
		}
	}
	for _, ev := range ch.events {
		list, _ := hooks[ev.Name].([]any)
		present := false
		mine := func(h any) bool {
			if !ch.isVeto(h, "") || h.(map[string]any)[ch.CommandKey] != command {
				return false
			}
			// An entry an older veto wrote gains the fail-closed switch.
			for k, v := range ch.FailClosed {
				if m := h.(map[string]any); m[k] != v {
					m[k], changed = v, true
				}
			}
			return true
		}
		for _, item := range list {
			if !ch.Grouped {
				present = mine(item) || present
				continue
			}
			gm, _ := item.(map[string]any)
			inner, _ := gm["hooks"].([]any)
			for _, h := range inner {
				present = mine(h) || present
			}
		}
		if present {
			continue
		}
		entry := ch.entry(command)
		if ev.Timeout > 0 && ch.TimeoutKey != "" && ch.TimeoutUnit > 0 {
			entry[ch.TimeoutKey] = json.Number(strconv.FormatInt(int64(ev.Timeout/ch.TimeoutUnit), 10))
		}
		if ch.Grouped {
			group := map[string]any{"hooks": []any{entry}}
			if ev.Matcher != "" {
				group["matcher"] = ev.Matcher
			}
			hooks[ev.Name] = append(list, group)
		} else {
			hooks[ev.Name] = append(list, entry)
		}
		changed = true
	}
	settings["hooks"] = hooks
	return changed
}

// remove takes out veto's entries for client, but those whose command is
// keep, and the groups and events left empty.
func (ch clientHooks) remove(settings map[string]any, client, keep string) bool {
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		return false
	}
	changed := false
	for _, ev := range ch.events {
		list, had := hooks[ev.Name].([]any)
		if !had {
			continue
		}
		var kept []any
		for _, item := range list {
			if !ch.Grouped {
				if ch.isVeto(item, client) && (keep == "" || item.(map[string]any)[ch.CommandKey] != keep) {
					changed = true
					continue
				}
				kept = append(kept, item)
				continue
			}
			gm, ok := item.(map[string]any)
			if !ok {
				kept = append(kept, item)
				continue
			}
			inner, _ := gm["hooks"].([]any)
			var rest []any
			for _, h := range inner {
				if ch.isVeto(h, client) && (keep == "" || h.(map[string]any)[ch.CommandKey] != keep) {
					changed = true
					continue
				}
				rest = append(rest, h)
			}
			if len(rest) == 0 && len(inner) > 0 {
				continue // the group held only veto
			}
			gm["hooks"] = rest
			kept = append(kept, gm)
		}
		if len(kept) == 0 {
			delete(hooks, ev.Name)
		} else {
			hooks[ev.Name] = kept
		}
	}
	if len(hooks) == 0 {
		delete(settings, "hooks")
		for k, v := range ch.Top {
			if settings[k] == v {
				delete(settings, k)
			}
		}
	}
	return changed
}

// shellQuote quotes a path for the hook command line when it needs it.
func shellQuote(s string) string {
	if !strings.ContainsAny(s, " \t'\"$`\\!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
