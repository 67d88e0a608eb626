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
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"sync"
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
var EnvKeys = []string{"HOME", "USER", "TMPDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "VETO_MANAGED_POLICY", "VETO_STATE", "VETO_POSTGRES"}

// ClientKeys are the variables a client sets for its hook that its
// adapter reads (Claude Code's: whether the session is attended, and
// which Claude Code it is; Copilot CLI's: its version); they travel in
// the request too.
var ClientKeys = []string{"CLAUDE_CODE_SESSION_ATTENDED", "AI_AGENT", "COPILOT_CLI_BINARY_VERSION"}

// ClientEnvNow is this process's values of ClientKeys, the ones set.
func ClientEnvNow() map[string]string {
	var m map[string]string
	for _, k := range ClientKeys {
		if v, ok := os.LookupEnv(k); ok {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = v
		}
	}
	return m
}

// Request is one event sent to the server.
type Request struct {
	V          int               `json:"v"`
	Build      string            `json:"build"` // the client's Build(): a server of another build does not answer
	Client     string            `json:"client"`
	State      string            `json:"state"`
	Approve    bool              `json:"approve"`
	TimeoutMS  int64             `json:"timeout_ms"`
	DeadlineNS int64             `json:"deadline_ns,omitempty"` // when veto-hook gives up (Unix ns): nothing may be decided after it
	ProjectDir string            `json:"project_dir"`
	Env        map[string]string `json:"env"`
	ClientEnv  map[string]string `json:"client_env,omitempty"` // ClientKeys' values
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

// Build names the build of this program: the Go build ID the toolchain
// stamps into every binary it links (a hash of the build's inputs and of
// the binary's content, present whatever VCS stamp there is or is not),
// read once from the file this process runs. The server answers only a
// veto-hook whose request names the same build as the server's own: the
// build of the veto it would hand the event to (VetoBuild).
func Build() string {
	selfOnce.Do(func() {
		exe := "/proc/self/exe" // the running file, even once replaced
		if _, err := os.Stat(exe); err != nil {
			exe, _ = os.Executable()
		}
		self, _ = BuildOf(exe)
		if self == "" {
			self = "unknown"
		}
	})
	return self
}

var (
	selfOnce sync.Once
	self     string
)

// VetoBuild is the build of the veto that veto-hook hands events to when
// the server does not answer (VetoPath's file, runnable or not): veto-hook
// is answered by a server only when the server is that build. ok is false
// when there is no such file.
func VetoBuild() (build string, ok bool) {
	b, err := BuildOf(vetoFile())
	return b, err == nil
}

// BuildOf names the build of the program file at path: "go:" and its Go
// build ID (an ELF note in the file's first pages), else "file:" and the
// file's size and modification time. It reads at most 32 KiB, most often
// 4 KiB.
func BuildOf(path string) (string, error) {
	if path == "" {
		return "", os.ErrNotExist
	}
	// Plain system calls: os.Open would start the runtime's poller, which
	// veto-hook has no other use for.
	fd, err := open(path)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", fmt.Errorf("wire: %s is not a program file", path)
	}
	// The note follows the ELF headers, in the first page as Go links;
	// further in only for an odd layout.
	page := make([]byte, 4096)
	n := preadFull(fd, page, 0)
	if id := goBuildID(page[:n]); id != "" {
		return "go:" + id, nil
	}
	if n == len(page) {
		more := make([]byte, 32<<10)
		copy(more, page)
		m := preadFull(fd, more[n:], int64(n))
		if id := goBuildID(more[:n+m]); id != "" {
			return "go:" + id, nil
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("file:%d:%d", fi.Size(), fi.ModTime().UnixNano()), nil
}

// open opens path to read, closed on exec.
func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// preadFull reads b from fd at off, as much of it as there is.
func preadFull(fd int, b []byte, off int64) int {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return n
}

// readFile reads the file at path, at most max bytes (more: ok false),
// with plain system calls (see BuildOf).
func readFile(path string, max int) (b []byte, ok bool) {
	fd, err := open(path)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > int64(max) {
		return nil, false
	}
	b = make([]byte, st.Size+1)
	n := preadFull(fd, b, 0)
	if n > max {
		return nil, false
	}
	return b[:n], true
}

// goBuildID finds the Go build ID note of an ELF file in its first bytes:
// name size 4, its size, type 4, name "Go\x00\x00", then the ID. Both
// programs come from the same toolchain on the same machine, so the
// note's byte order is this machine's.
func goBuildID(b []byte) string {
	if len(b) < 4 || string(b[:4]) != "\x7fELF" {
		return ""
	}
	tag := []byte("\x04\x00\x00\x00Go\x00\x00")
	for off := 0; ; {
		i := bytes.Index(b[off:], tag)
		if i < 0 {
			return ""
		}
		i += off
		off = i + 1
		if i < 8 || string(b[i-8:i-4]) != "\x04\x00\x00\x00" {
			continue
		}
		n := int(binary.LittleEndian.Uint32(b[i-4 : i]))
		start := i + len(tag)
		if n <= 0 || n > 256 || start+n > len(b) {
			continue
		}
		return string(b[start : start+n])
	}
}

// SocketPath is where the hook server of this build listens (SocketFor).
func SocketPath() string { return SocketFor(Build()) }

// SocketFor is where the hook server of build listens: $VETO_SOCKET, else
// hook-KEY.sock in $XDG_RUNTIME_DIR/veto, else in veto-UID in the
// temporary directory. KEY is a hash of the build and the settings an
// answer depends on (EnvKeys), so programs started under other settings,
// or an upgraded veto, each have a server of their own.
func SocketFor(build string) string {
	if p := os.Getenv("VETO_SOCKET"); p != "" {
		return p
	}
	h := fnv.New64a()
	h.Write([]byte(build))
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
