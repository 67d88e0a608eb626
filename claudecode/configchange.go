package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vetohq/veto/agent"
	"github.com/vetohq/veto/clients"
)

// The settings layers Claude Code's ConfigChange names; a change of the
// organisation's (policy_settings) cannot be blocked, and skills are not
// settings.
const (
	userSettings    = "user_settings"
	projectSettings = "project_settings"
	localSettings   = "local_settings"
	policySettings  = "policy_settings"
)

// managedSettings is where Claude Code reads the organisation's settings
// on Linux: veto's hooks there count, and no agent writes it.
const managedSettings = "/etc/claude-code/managed-settings.json"

// maxSettings is the most bytes of a settings file read (Claude Code's
// own limit is 2 MiB): a larger file counts as one without veto.
const maxSettings = 2 << 20

// ReasonRegistration is the reason code of a refused settings change.
const ReasonRegistration = "registration_weakened"

var _ agent.ConfigGuard = Adapter{}

// Config implements agent.ConfigGuard. Claude Code asks its ConfigChange
// hooks before it takes a changed settings file into the running session,
// and keeps the settings it had when one exits 2. veto refuses a change
// after which the settings Claude Code reads (user, project, local and
// managed, the changed one as it now reads) no longer register veto as
// veto init does: every event, with this veto's command, onFailure
// "block", the timeout init set and no narrower matcher; or that turns
// all hooks off. Any other change passes. The file the event names is
// read for its new content, since the event carries none.
func (a Adapter) Config(ev *agent.Event) agent.Reply {
	switch ev.ConfigSource {
	case userSettings, projectSettings, localSettings:
	default:
		return agent.Reply{}
	}
	problems := Weakened(a.layers(ev), vetoPrograms())
	if len(problems) == 0 {
		return agent.Reply{}
	}
	return a.Deny(fmt.Sprintf("veto blocked this change of Claude Code's %s (reason %s): after it, %s. "+
		"veto's own registration does not change mid-session: a person runs veto init claude-code (or veto uninstall claude-code) and starts Claude Code again.",
		layerName(ev.ConfigSource), ReasonRegistration, strings.Join(problems, "; ")))
}

// layerName is how a message names a settings layer.
func layerName(source string) string {
	switch source {
	case userSettings:
		return "user settings"
	case projectSettings:
		return "project settings"
	default:
		return "local settings"
	}
}

// Layer is one settings file Claude Code reads, by its ConfigChange source
// name, and the settings it holds (nil: none, or not a JSON object).
type Layer struct {
	Source   string
	Settings map[string]any
}

// layers are the settings Claude Code reads in ev's session, the changed
// layer's read from the file ev names (its new content, or the copy of it
// Claude Code shows its hooks). A layer whose place is unknown (no home,
// no project) is left out.
func (a Adapter) layers(ev *agent.Event) []Layer {
	project := a.ProjectDir
	if project == "" {
		project = ev.Cwd
	}
	userDir := os.Getenv("CLAUDE_CONFIG_DIR")
	if userDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			userDir = filepath.Join(home, ".claude")
		}
	}
	at := func(dir string, elem ...string) string {
		if dir == "" {
			return ""
		}
		return filepath.Join(append([]string{dir}, elem...)...)
	}
	paths := []struct{ source, path string }{
		{userSettings, at(userDir, "settings.json")},
		{projectSettings, at(project, ".claude", "settings.json")},
		{localSettings, at(project, ".claude", "settings.local.json")},
		{policySettings, managedSettings},
	}
	var out []Layer
	for _, p := range paths {
		if p.source == ev.ConfigSource && ev.ConfigFile != "" {
			p.path = ev.ConfigFile
		}
		if p.path != "" {
			out = append(out, Layer{Source: p.source, Settings: readLayer(p.path)})
		}
	}
	return out
}

// readLayer reads a settings file as a JSON object; a file that is
// missing, not regular, too large or not a JSON object holds nothing.
func readLayer(path string) map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil || len(b) > maxSettings {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// vetoPrograms are the programs a command of veto's registration may run:
// this veto, and veto-hook beside it (the hook server's client).
func vetoPrograms() []string {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return nil
	}
	return []string{self, filepath.Join(filepath.Dir(self), "veto-hook")}
}

// Weakened says what is missing from veto's registration across layers,
// the settings Claude Code reads, against what veto init registers: each
// event's entry with one of programs, and every hook left on. Empty: the
// registration is whole.
func Weakened(layers []Layer, programs []string) []string {
	var problems []string
	for _, l := range layers {
		if l.Source != policySettings && l.Settings["disableAllHooks"] == true {
			problems = append(problems, fmt.Sprintf("the %s turn every hook off (disableAllHooks)", layerName(l.Source)))
		}
	}
	for _, ev := range Client.Events {
		if ev.Unregistered {
			continue
		}
		if why := missing(layers, ev, programs); why != "" {
			problems = append(problems, "veto's "+ev.Name+" hook "+why)
		}
	}
	return problems
}

// missing is why no layer holds veto's entry for ev as init writes it
// ("" : one does): the fault of the last entry that names veto.
func missing(layers []Layer, ev clients.Event, programs []string) string {
	why := "is gone"
	for _, l := range layers {
		groups, _ := asMap(l.Settings["hooks"])[ev.Name].([]any)
		for _, g := range groups {
			gm := asMap(g)
			entries, _ := gm["hooks"].([]any)
			for _, e := range entries {
				em := asMap(e)
				fault := entryFault(em, gm, ev, programs)
				if fault == "" {
					return ""
				}
				if namesVeto(em) {
					why = fault
				}
			}
		}
	}
	return why
}

// entryKeys are the fields an entry of veto's may have: those init
// writes, and a status line. Any other (async, if, once, …) may change
// when or whether the hook's answer counts.
var entryKeys = []string{"type", "command", "url", "headers", "allowedEnvVars", "timeout", "onFailure", "statusMessage"}

// entryFault is what keeps entry e, in matcher group g, from being veto's
// registration of ev ("" : nothing).
func entryFault(e, g map[string]any, ev clients.Event, programs []string) string {
	switch e["type"] {
	case "command":
		if !isVetoCommand(e["command"], programs) {
			return "runs a command that is not this veto's"
		}
	case "http":
		// veto serve's endpoint (init --url): the service judges what it
		// can, and holds no settings of this machine.
		if u, _ := e["url"].(string); !strings.HasSuffix(u, "/v1/hooks/"+Client.Name) {
			return "posts to an address that is not veto serve's"
		}
	default:
		return "is no longer a command hook"
	}
	for k, v := range Client.Settings.FailClosed {
		if e[k] != v {
			return fmt.Sprintf("lost %s: %q", k, v)
		}
	}
	if m, ok := g["matcher"]; ok && m != "" && m != "*" {
		return "matches fewer than every " + matchWhat(ev)
	}
	for k := range e {
		if !slices.Contains(entryKeys, k) {
			return "has the field " + k + ", which veto init does not write"
		}
	}
	if want := registeredTimeout(ev); timeoutOf(e) < want {
		return fmt.Sprintf("has a timeout under the %s veto init set", want)
	}
	return ""
}

// matchWhat is what ev's matcher matches.
func matchWhat(ev clients.Event) string {
	if ev.Matcher == "" {
		return "source"
	}
	return "tool"
}

// namesVeto reports whether an entry names veto, by its command or
// URL: what a change that weakens veto's entry leaves of it.
func namesVeto(e map[string]any) bool {
	c, _ := e["command"].(string)
	u, _ := e["url"].(string)
	return strings.Contains(c, "veto") || strings.Contains(u, "/v1/hooks/")
}

// isVetoCommand reports whether c is a command veto init writes for
// Claude Code with one of programs: PROGRAM hook claude-code for veto,
// PROGRAM claude-code for veto-hook, the program shell-quoted when it
// needs it.
func isVetoCommand(c any, programs []string) bool {
	s, ok := c.(string)
	if !ok {
		return false
	}
	prog, rest, ok := splitProgram(clients.Unguarded(s))
	if !ok {
		return false
	}
	for i, p := range programs {
		if prog != p {
			continue
		}
		if i == 0 && rest == "hook "+Client.Name || filepath.Base(p) == "veto-hook" && rest == Client.Name {
			return true
		}
	}
	return false
}

// splitProgram splits a command into its program, single-quoted or bare,
// and the rest after one space; a program with shell syntax in it is not
// one veto init writes.
func splitProgram(c string) (prog, rest string, ok bool) {
	if strings.HasPrefix(c, "'") {
		var b strings.Builder
		i := 1
		for {
			end := strings.IndexByte(c[i:], '\'')
			if end < 0 {
				return "", "", false
			}
			b.WriteString(c[i : i+end])
			i += end + 1
			if strings.HasPrefix(c[i:], `\''`) {
				b.WriteByte('\'')
				i += 3
				continue
			}
			break
		}
		prog, rest = b.String(), c[i:]
	} else {
		j := strings.IndexByte(c, ' ')
		if j < 0 {
			return "", "", false
		}
		prog, rest = c[:j], c[j:]
		if strings.ContainsAny(prog, "'\"$`\\;&|<>(){}*?[]~!#") {
			return "", "", false
		}
	}
	rest, ok = strings.CutPrefix(rest, " ")
	return prog, rest, ok && filepath.IsAbs(prog)
}

// registeredTimeout is the timeout init registers for ev.
func registeredTimeout(ev clients.Event) time.Duration {
	if ev.Timeout > 0 {
		return ev.Timeout
	}
	return timeoutOf(Client.Settings.Entry)
}

// timeoutOf is an entry's timeout; 0 when it has none.
func timeoutOf(e map[string]any) time.Duration {
	var f float64
	switch v := e[Client.Settings.TimeoutKey].(type) {
	case json.Number:
		f, _ = v.Float64()
	case float64:
		f = v
	}
	if f <= 0 {
		return 0
	}
	return time.Duration(f * float64(Client.Settings.TimeoutUnit))
}

// asMap is v as a JSON object, nil when it is not one.
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
