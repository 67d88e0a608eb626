// Package wire is veto-hook, the program an agent client starts on every
// tool call, and the protocol it speaks to the hook server (veto
// serve-hooks). It links the standard library only, so that starting it
// costs little more than starting any Go program: the server does the
// work with its policy, rules and state already loaded.
//
// On any miss (no server, no answer in time, an answer it cannot read, a
// server started under other settings) veto-hook hands the event, as read,
// to veto hook CLIENT, which answers in its own process; when no server
// was running it also starts one for the next call. Every path fails
// closed: if veto cannot be run either, the call is blocked in the form
// the client obeys.
package wire

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/vetohq/veto/clients"
)

// Clients are the agent clients veto speaks to, by the name commands take.
var Clients = clients.Names()

// MaxEvent is the most bytes a hook event may have (agent.MaxEvent).
const MaxEvent = clients.MaxEvent

// EnvKeys are the variables an answer depends on: where policy files and
// state are, what ~ and $TMPDIR mean. The server answers only requests
// whose values equal its own; Claude Code's per-session
// CLAUDE_PROJECT_DIR travels in the request instead.
var EnvKeys = []string{"HOME", "USER", "TMPDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "VETO_MANAGED_POLICY", "VETO_STATE"}

// Request is one event sent to the server.
type Request struct {
	V          int               `json:"v"`
	Build      string            `json:"build"` // the client's Build(): a server of another build does not answer
	Client     string            `json:"client"`
	State      string            `json:"state"`
	Approve    bool              `json:"approve"`
	TimeoutMS  int64             `json:"timeout_ms"`
	ProjectDir string            `json:"project_dir"`
	Env        map[string]string `json:"env"`
	Event      json.RawMessage   `json:"event"`
	Status     bool              `json:"status,omitempty"` // no event: only the server's build is asked for
}

// Response is the server's answer: what veto hook CLIENT would print and
// exit with.
type Response struct {
	Mismatch bool   `json:"mismatch,omitempty"` // the server's environment differs: answer elsewhere
	Build    string `json:"build,omitempty"`    // the server's build
	Exit     int    `json:"exit"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// Build names the build of this program: the module version, else the
// VCS revision and time (with "+dirty" for a modified tree), else "devel".
// veto-hook and the server must be the same build for the server to
// answer, so an upgrade never leaves an old server deciding.
func Build() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return rev + "@" + at + dirty
}

// SocketPath is where the hook server listens: $VETO_SOCKET, else
// hook-KEY.sock in $XDG_RUNTIME_DIR/veto, else in veto-UID in the
// temporary directory. KEY is a hash of this build and the settings an
// answer depends on (EnvKeys), so programs started under other settings,
// or an upgraded veto, each have a server of their own.
func SocketPath() string {
	if p := os.Getenv("VETO_SOCKET"); p != "" {
		return p
	}
	h := fnv.New64a()
	h.Write([]byte(Build()))
	for _, k := range EnvKeys {
		h.Write([]byte{0})
		h.Write([]byte(os.Getenv(k)))
	}
	name := fmt.Sprintf("hook-%016x.sock", h.Sum64())
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "veto", name)
	}
	return filepath.Join(os.TempDir(), "veto-"+strconv.Itoa(os.Getuid()), name)
}

// EnvNow is this process's values of EnvKeys.
func EnvNow() map[string]string {
	m := make(map[string]string, len(EnvKeys))
	for _, k := range EnvKeys {
		m[k] = os.Getenv(k)
	}
	return m
}

// SameEnv reports whether two environments agree on every key of EnvKeys.
func SameEnv(a, b map[string]string) bool {
	for _, k := range EnvKeys {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// Private checks that dir belongs to this user and no one else may enter
// or write it: the only place a socket whose answers are trusted may be.
func Private(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("the socket's directory %s must be a directory of this user's that no one else can enter (mode 0700)", dir)
	}
	return nil
}

// Deny is the reply that blocks a call in a client's protocol, byte for
// byte what that client's adapter answers (both write the table's
// denial; a test holds them together); veto-hook needs it only when veto
// itself cannot be run. A client not in the table is answered exit 2,
// which the hook clients that obey exit codes take as blocking.
func Deny(client, reason string) (exit int, stdout, stderr string) {
	if c := clients.Lookup(client); c != nil {
		return c.Deny.Write(reason)
	}
	return 2, "", clients.Clip(reason) + "\n"
}
